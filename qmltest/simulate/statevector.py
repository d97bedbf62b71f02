"""Batched numpy statevector: every gate acts on an (N, 2^n) array holding one state per input.

This is the fast path of the engine (see DESIGN.md, "Speeds measured here"); tests hold it to
Aer's statevector to 1e-9. It also provides the adjoint gradient used for training.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from qiskit.circuit import Parameter, ParameterExpression, QuantumCircuit
from qiskit.quantum_info import Operator

from qmltest.errors import InputError
from qmltest.model.readout import state_index_map
from qmltest.simulate import fusion, gates
from qmltest.simulate.expr import evaluate
from qmltest.simulate.kernels import apply_t

SKIPPED = {"barrier", "delay", "id"}


@dataclass(frozen=True)
class Op:
    """One gate of a compiled program: fixed matrix, or a named single-angle gate and its angle."""

    qubits: tuple[int, ...]
    matrix: np.ndarray | None = None
    name: str = ""
    angle: object = None  # Parameter or ParameterExpression; a tuple of them for several angles
    params: frozenset[Parameter] = field(default_factory=frozenset)
    gate: object = None  # the Qiskit operation, for gates built through `gates.generic`


_OPS_BY_KEY: dict[tuple, np.ndarray] = {}
OPS_CACHE_SIZE = 50_000
"""Matrices of fixed gates by (name, size, angles); bounded: every PF/APC mutant adds new angles."""


def _fixed(operation) -> np.ndarray:
    key = (operation.name, operation.num_qubits, tuple(float(p) for p in operation.params))
    hit = _OPS_BY_KEY.get(key)
    if hit is None:
        if len(_OPS_BY_KEY) >= OPS_CACHE_SIZE:
            _OPS_BY_KEY.clear()
        hit = _OPS_BY_KEY[key] = np.asarray(Operator(operation).data, dtype=complex)
    return hit


def compile_op(operation, qubits: tuple[int, ...]) -> Op | None:
    """One instruction as an op (None for what the engine skips); unknown parametric gates are refused."""
    if operation.name in SKIPPED:
        return None
    if operation.name == "reset":
        raise InputError("mid-circuit 'reset' is not supported by the engine")
    if operation.name == "measure":  # outcome unused: a complete dephasing of the qubit
        return Op(qubits, name="dephase")
    symbolic = [p for p in operation.params if isinstance(p, ParameterExpression) and p.parameters]
    if not symbolic:
        return Op(qubits, matrix=_fixed(operation))
    params = frozenset(p for e in symbolic for p in e.parameters)
    if operation.name in gates.MATRIX and len(operation.params) == 1:
        angle = operation.params[0]
        return Op(qubits, name=operation.name, angle=angle, params=params)
    angles = tuple(operation.params)
    if operation.name in gates.MULTI:
        return Op(qubits, name=operation.name, angle=angles, params=params)
    if not hasattr(operation, "to_mutable") or getattr(operation, "definition", None) is None:
        raise InputError(f"gate '{operation.name}' with symbolic parameters has no definition to simulate")
    return Op(qubits, name=operation.name, angle=angles, params=params, gate=operation)


def compile_circuit(circuit: QuantumCircuit) -> list[Op]:
    """Turn a measurement-free circuit into a list of ops."""
    ops = (compile_op(inst.operation, tuple(circuit.find_bit(q).index for q in inst.qubits)) for inst in circuit.data)
    return [op for op in ops if op is not None]


def compile_gates(gates_: Iterable) -> list[Op]:
    """Ops of IR gates, each gate object compiled once: the op is kept in the gate's own memo, so
    a mutant, which shares all but its changed gates with the original, compiles only what changed
    and shares the original's ops by identity (prefix reuse compares them so)."""
    out: list[Op] = []
    for g in gates_:
        memo = g.memo
        if "op" not in memo:
            memo["op"] = compile_op(g.operation, tuple(g.qubits))
        op = memo["op"]
        if op is not None:
            out.append(op)
    return out


def op_matrix(op: Op, values: dict[Parameter, np.ndarray], batch: int) -> np.ndarray:
    """The op's matrix: shared (d, d) when its angle is the same for all inputs, else (N, d, d)."""
    if op.matrix is not None:
        return op.matrix
    return angle_matrix(op.name, op.angle, op.gate, values, batch)


def feature_values(inputs: list[Parameter], encoded: np.ndarray) -> dict[Parameter, np.ndarray]:
    """Each input parameter's column of an angle-encoded batch (N, len(inputs))."""
    rows = np.asarray(encoded, dtype=float)
    return {p: rows[:, i] for i, p in enumerate(inputs)}


def angle_matrix(name: str, angle: object, gate: object, values: dict[Parameter, np.ndarray], batch: int) -> np.ndarray:
    """A parametric gate's matrix: shared (d, d) when its angles are equal for all inputs, else (N, d, d)."""
    if not isinstance(angle, tuple):
        theta = np.broadcast_to(evaluate(angle, values), (batch,))
        if np.all(theta == theta[0]):
            return gates.MATRIX[name](theta[:1])[0]
        return gates.MATRIX[name](np.ascontiguousarray(theta))
    if gate is None:
        build = gates.MULTI[name]
        arrays = [np.ascontiguousarray(np.broadcast_to(evaluate(a, values), (batch,))) for a in angle]
    else:  # through Qiskit, bound to the values of the parameters themselves
        params = tuple(sorted({p for a in angle if isinstance(a, ParameterExpression) for p in a.parameters}, key=str))
        build = gates.generic(gate, params)
        arrays = [np.ascontiguousarray(np.broadcast_to(np.asarray(values[p], float), (batch,))) for p in params]
    if all(np.all(a == a[0]) for a in arrays):
        return build(*(a[:1] for a in arrays))[0]
    return build(*arrays)


def run(
    ops: list[Op],
    psi0: np.ndarray,
    values: dict[Parameter, np.ndarray],
    n: int,
    boundaries: tuple[int, ...] = (),
    zero: bool = False,
) -> np.ndarray:
    """Final states for a batch of initial states psi0 (N, 2^n); `zero`: psi0 is |0...0> for all.

    Consecutive single-qubit gates on one qubit are multiplied into one 2x2 (or per-input) matrix
    before they touch the state: one pass over the state instead of several. Fusion never crosses
    a boundary (op indices, the layer starts), so the state at a boundary is the same bits whether
    the run started at 0 or resumed there (`engine`'s prefix reuse relies on it).
    """
    state = np.ascontiguousarray(psi0.T)
    return np.ascontiguousarray(run_columns(ops, state, values, n, boundaries, zero).T)


def run_columns(
    ops: list[Op],
    state: np.ndarray,
    values: dict[Parameter, np.ndarray],
    n: int,
    boundaries: tuple[int, ...] = (),
    zero: bool = False,
) -> np.ndarray:
    """`run` on states kept as columns, (2^n, N) in and out: the layout the gate passes use, so a
    caller that resumes from cached states (`resume`) skips two transposes per call (0.1 ms each
    for 200 inputs on 8 qubits). The same arithmetic as `run`, bit for bit.

    Beyond the single-qubit fusion: while the state is still |0...0> (`zero`), the first flush
    builds the product state of every qubit's pending gates at once (an encoding layer costs about
    two passes instead of one per qubit), and input-independent gates on neighbouring qubits are
    multiplied into dense blocks of up to `fusion.width(n)` qubits (`fusion.Fuser`)."""
    batch = state.shape[1]
    run = fusion.Fuser(state, n, fusion.width(n), zero)
    cut = set(boundaries)
    for k, op in enumerate(ops):
        if k in cut:
            run.flush_all()
        m = op_matrix(op, values, batch)
        if len(op.qubits) == 1:
            run.single(op.qubits[0], m)
        else:
            run.gate(op.qubits, m)
    return run.result()


def same_op(a: Op, b: Op) -> bool:
    """Two compiled ops that act identically (same qubits, matrix or named angle expression)."""
    if a is b:
        return True
    if a.qubits != b.qubits or a.name != b.name:
        return False
    if a.matrix is not None or b.matrix is not None:
        return a.matrix is b.matrix or (
            a.matrix is not None and b.matrix is not None and np.array_equal(a.matrix, b.matrix)
        )
    return str(a.angle) == str(b.angle)


def zero_states(batch: int, n: int) -> np.ndarray:
    psi = np.zeros((batch, 2**n), complex)
    psi[:, 0] = 1.0
    return psi


def probabilities_with_dephasing(
    ops: list[Op], psi0: np.ndarray, values: dict[Parameter, np.ndarray], n: int, measured: list[int]
) -> np.ndarray:
    """Final probabilities when some ops are mid-circuit measurements (dephasing): each one splits
    every branch into its |0> and |1> parts on that qubit, and the branches' probabilities add."""
    branches = [psi0]
    start = 0
    for k, op in enumerate(ops + [Op((), name="end")]):
        if op.name not in ("dephase", "end"):
            continue
        branches = [run(ops[start:k], b, values, n) for b in branches]
        start = k + 1
        if op.name == "dephase":
            q = op.qubits[0]
            bit = (np.arange(2**n) >> q) & 1
            branches = [b * (bit == v) for b in branches for v in (0, 1)]
            if len(branches) > 1024:
                raise InputError("more than 10 mid-circuit measurements: too many branches")
    return sum(marginal_probabilities(b, measured, n) for b in branches)


_SUMS: dict[tuple[tuple[int, ...], int], np.ndarray] = {}
SUM_MATRIX_BYTES = 2**24
"""Largest 0/1 summing matrix `marginal_probabilities` keeps (2^n x 2^m doubles)."""


def marginal_probabilities(psi: np.ndarray, measured: list[int], n: int) -> np.ndarray:
    """Probabilities over `measured` (index bit i = measured[i]) for every state in psi.

    A few measured qubits out of many: one BLAS product of |psi|^2 with the 0/1 matrix that sums
    each measured outcome's basis states (0.08 ms for 200 states on 8 qubits, against 0.22 ms
    for the axis sums; equal to rounding); otherwise the axis sums."""
    batch = psi.shape[0]
    m = len(measured)
    if list(measured) == list(range(n)):  # every qubit, in order: the probabilities themselves
        return np.ascontiguousarray(psi.real**2 + psi.imag**2)
    if m < n and 8 * 2 ** (n + m) <= SUM_MATRIX_BYTES:
        key = (tuple(measured), n)
        sums = _SUMS.get(key)
        if sums is None:
            sums = np.zeros((2**n, 2**m))
            sums[np.arange(2**n), state_index_map(list(measured), n)] = 1.0
            _SUMS[key] = sums
        return (psi.real**2 + psi.imag**2) @ sums
    p = (psi.real**2 + psi.imag**2).reshape((batch,) + (2,) * n)
    keep = [n - q for q in reversed(measured)]
    drop = tuple(a for a in range(1, n + 1) if a not in keep)
    p = p.sum(axis=drop)
    remaining = sorted(keep)
    order = [0] + [1 + remaining.index(a) for a in keep]
    return np.transpose(p, order).reshape(batch, -1)


def adjoint_gradient(
    ops: list[Op],
    psi_final: np.ndarray,
    lam: np.ndarray,
    values: dict[Parameter, np.ndarray],
    n: int,
    wrt: list[Parameter],
    initial: list | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of a real loss L by the adjoint method (one backward sweep, no re-simulation).

    lam = dL/d(conj psi_final). Returns (per-input gradient (N, len(wrt)), summed gradient).
    Angles may be expressions of the parameters (feature maps): the chain rule uses d(angle)/dp.
    """
    index = {p: i for i, p in enumerate(wrt)}
    batch = psi_final.shape[0]
    grad = np.zeros((batch, len(wrt)))
    psi, lam = np.ascontiguousarray(psi_final.T), np.ascontiguousarray(lam.T)
    for op in reversed(ops):
        m = op_matrix(op, values, batch)
        mdag = np.conj(m.T) if m.ndim == 2 else np.conj(np.transpose(m, (0, 2, 1)))
        psi = apply_t(psi, mdag, op.qubits, n)  # state before the op
        targets = [p for p in op.params if p in index]
        if targets:
            if isinstance(op.angle, tuple):
                raise InputError(f"gradients through '{op.name}' (several angles) are not supported")
            theta = np.broadcast_to(evaluate(op.angle, values), (batch,))
            shared = bool(np.all(theta == theta[0]))
            d = gates.derivative(op.name, np.ascontiguousarray(theta[:1] if shared else theta))
            dpsi = apply_t(psi, d[0] if shared else d, op.qubits, n)
            dtheta = 2.0 * np.real(np.sum(np.conj(lam) * dpsi, axis=0))  # dL/d(angle), per input
            for p in targets:
                grad[:, index[p]] += dtheta * _angle_derivative(op.angle, p, values)
        lam = apply_t(lam, mdag, op.qubits, n)
    if initial is not None:  # dL/d(conj psi0): the input state's gradient, for attacks on amplitude models
        initial.append(np.ascontiguousarray(lam.T))
    return grad, grad.sum(axis=0)


def _angle_derivative(angle: object, p: Parameter, values: dict[Parameter, np.ndarray]) -> np.ndarray | float:
    """d(angle)/dp, evaluated per input (1 for a bare parameter)."""
    if isinstance(angle, Parameter):
        return 1.0
    assert isinstance(angle, ParameterExpression)
    return evaluate(angle.gradient(p), values)
