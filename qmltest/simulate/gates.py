"""Vectorized gate matrices (Qiskit's little-endian convention) and their angle derivatives.

A parametric gate's angle may differ per input (data gates), so every builder takes an array of
angles of shape (N,) and returns matrices of shape (N, d, d). Fixed gates come from
`qiskit.quantum_info.Operator` once and are cached by the caller.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Array = np.ndarray


def _rx(t: Array) -> Array:
    c, s = np.cos(t / 2), np.sin(t / 2)
    m = np.zeros((t.size, 2, 2), complex)
    m[:, 0, 0] = m[:, 1, 1] = c
    m[:, 0, 1] = m[:, 1, 0] = -1j * s
    return m


def _ry(t: Array) -> Array:
    c, s = np.cos(t / 2), np.sin(t / 2)
    m = np.zeros((t.size, 2, 2), complex)
    m[:, 0, 0] = m[:, 1, 1] = c
    m[:, 0, 1] = -s
    m[:, 1, 0] = s
    return m


def _rz(t: Array) -> Array:
    m = np.zeros((t.size, 2, 2), complex)
    m[:, 0, 0] = np.exp(-0.5j * t)
    m[:, 1, 1] = np.exp(0.5j * t)
    return m


def _p(t: Array) -> Array:
    m = np.zeros((t.size, 2, 2), complex)
    m[:, 0, 0] = 1.0
    m[:, 1, 1] = np.exp(1j * t)
    return m


def _controlled(base: Callable[[Array], Array]) -> Callable[[Array], Array]:
    """Control on the first qarg (least significant bit), target on the second."""

    def build(t: Array) -> Array:
        b = base(t)
        m = np.zeros((t.size, 4, 4), complex)
        m[:, 0, 0] = m[:, 2, 2] = 1.0
        m[:, 1, 1], m[:, 1, 3] = b[:, 0, 0], b[:, 0, 1]
        m[:, 3, 1], m[:, 3, 3] = b[:, 1, 0], b[:, 1, 1]
        return m

    return build


_PAULI = {
    "x": np.array([[0, 1], [1, 0]], complex),
    "y": np.array([[0, -1j], [1j, 0]], complex),
    "z": np.array([[1, 0], [0, -1]], complex),
}


def _two_axis(axis: str) -> Callable[[Array], Array]:
    """exp(-i t/2 P⊗P) for P in {x, y, z}."""
    pp = np.kron(_PAULI[axis], _PAULI[axis])

    def build(t: Array) -> Array:
        c, s = np.cos(t / 2), np.sin(t / 2)
        return c[:, None, None] * np.eye(4)[None] - 1j * s[:, None, None] * pp[None]

    return build


def _u(t: Array, phi: Array, lam: Array) -> Array:
    """U(theta, phi, lambda), Qiskit's definition (u and u3)."""
    c, s = np.cos(t / 2), np.sin(t / 2)
    m = np.zeros((t.size, 2, 2), complex)
    m[:, 0, 0] = c
    m[:, 0, 1] = -np.exp(1j * lam) * s
    m[:, 1, 0] = np.exp(1j * phi) * s
    m[:, 1, 1] = np.exp(1j * (phi + lam)) * c
    return m


def _u2(phi: Array, lam: Array) -> Array:
    return _u(np.full(phi.shape, np.pi / 2), phi, lam)


def _r(t: Array, phi: Array) -> Array:
    c, s = np.cos(t / 2), np.sin(t / 2)
    m = np.zeros((t.size, 2, 2), complex)
    m[:, 0, 0] = m[:, 1, 1] = c
    m[:, 0, 1] = -1j * np.exp(-1j * phi) * s
    m[:, 1, 0] = -1j * np.exp(1j * phi) * s
    return m


def _controlled_multi(base: Callable[..., Array], phase: bool = False) -> Callable[..., Array]:
    """A multi-angle one-qubit gate controlled on the first qarg; `phase`: the last angle is the
    global phase gamma of the target (Qiskit's cu)."""

    def build(*angles: Array) -> Array:
        b = base(*angles[:3]) if phase else base(*angles)
        if phase:
            b = b * np.exp(1j * angles[3])[:, None, None]
        m = np.zeros((angles[0].size, 4, 4), complex)
        m[:, 0, 0] = m[:, 2, 2] = 1.0
        m[:, 1, 1], m[:, 1, 3] = b[:, 0, 0], b[:, 0, 1]
        m[:, 3, 1], m[:, 3, 3] = b[:, 1, 0], b[:, 1, 1]
        return m

    return build


def _xx_yy(minus: bool) -> Callable[[Array, Array], Array]:
    """XX+YY (on |01>, |10>) or XX-YY (on |00>, |11>) interactions, Qiskit's definitions."""
    a, b = (0, 3) if minus else (1, 2)

    def build(t: Array, beta: Array) -> Array:
        c, s = np.cos(t / 2), np.sin(t / 2)
        m = np.zeros((t.size, 4, 4), complex)
        for k in range(4):
            m[:, k, k] = 1.0
        m[:, a, a] = m[:, b, b] = c
        m[:, a, b] = -1j * s * np.exp(-1j * beta)
        m[:, b, a] = -1j * s * np.exp(1j * beta)
        return m

    return build


def _pair(left: Array, right: Array) -> Callable[[Array], Array]:
    """exp(-i t/2 left(q1) ⊗ right(q0)), the first qarg least significant (rzx: Z on q0, X on q1)."""
    pp = np.kron(left, right)

    def build(t: Array) -> Array:
        c, s = np.cos(t / 2), np.sin(t / 2)
        return c[:, None, None] * np.eye(4)[None] - 1j * s[:, None, None] * pp[None]

    return build


MULTI: dict[str, Callable[..., Array]] = {
    "u": _u,
    "u3": _u,
    "u2": _u2,
    "r": _r,
    "cu": _controlled_multi(_u, phase=True),
    "cu3": _controlled_multi(_u),
    "xx_plus_yy": _xx_yy(False),
    "xx_minus_yy": _xx_yy(True),
}
"""Gates of several angles whose matrix the engine builds per input, vectorized; every other gate
with symbolic parameters is built through Qiskit per distinct angle tuple (`generic`)."""


def generic(operation: object, params: tuple) -> Callable[..., Array]:
    """Per-input matrices of any parametric gate through Qiskit's own definition: the gate, in a
    one-instruction circuit, bound to each distinct tuple of its parameters' values (arrays in the
    order of `params`). Slower than the vectorized builders, never wrong."""
    from qiskit.circuit import QuantumCircuit
    from qiskit.quantum_info import Operator

    k = operation.num_qubits  # type: ignore[attr-defined]
    qc = QuantumCircuit(k)
    qc.append(operation, range(k))  # type: ignore[arg-type]

    def build(*values: Array) -> Array:
        cache: dict[tuple, np.ndarray] = {}
        out = np.empty((values[0].size, 2**k, 2**k), complex)
        for i in range(values[0].size):
            key = tuple(float(v[i]) for v in values)
            if key not in cache:
                cache[key] = np.asarray(Operator(qc.assign_parameters(dict(zip(params, key)))).data, dtype=complex)
            out[i] = cache[key]
        return out

    return build


MATRIX: dict[str, Callable[[Array], Array]] = {
    "rx": _rx,
    "ry": _ry,
    "rz": _rz,
    "p": _p,
    "u1": _p,
    "crx": _controlled(_rx),
    "cry": _controlled(_ry),
    "crz": _controlled(_rz),
    "cp": _controlled(_p),
    "cu1": _controlled(_p),
    "rxx": _two_axis("x"),
    "ryy": _two_axis("y"),
    "rzz": _two_axis("z"),
    "rzx": _pair(_PAULI["x"], _PAULI["z"]),
}
"""Single-angle gates whose matrix the engine builds per input."""


def _generator(name: str) -> Array:
    """H with dU/dt = -i/2 H U (rotations) or i H U (phase gates), as a dense matrix."""
    one = {"rx": _PAULI["x"], "ry": _PAULI["y"], "rz": _PAULI["z"]}
    if name in one:
        return one[name]
    if name in ("p", "u1"):
        return np.diag([0, 1]).astype(complex)
    if name in ("rxx", "ryy", "rzz"):
        a = _PAULI[name[1]]
        return np.kron(a, a)
    base = name[1:]
    proj1 = np.diag([0, 1]).astype(complex)  # control is the least significant qarg
    return np.kron(_generator(base), proj1)


def derivative(name: str, t: Array) -> Array:
    """dU/dt for a gate in MATRIX, shape (N, d, d); exact, no finite differences."""
    u = MATRIX[name](t)
    g = _generator(name)
    if name in ("p", "u1", "cp", "cu1"):
        return 1j * np.einsum("ij,njk->nik", g, u)
    return -0.5j * np.einsum("ij,njk->nik", g, u)
