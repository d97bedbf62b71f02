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
