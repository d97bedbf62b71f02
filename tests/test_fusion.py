"""Gate fusion of the numpy statevector (`qmltest.simulate.fusion`): blocks past 12 qubits, the
product-state start, and the caller's state left as it was."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qiskit.circuit import Parameter
from qiskit.quantum_info import Statevector

from qmltest.simulate import engine, fusion, statevector


def _random_circuit(n: int, seed: int, gates: int = 60) -> tuple[QuantumCircuit, list[Parameter]]:
    """Angle encoding, then fixed and input-dependent gates on neighbouring and distant qubits."""
    rng = np.random.default_rng(seed)
    x = [Parameter(f"x{i}") for i in range(n)]
    qc = QuantumCircuit(n)
    for q in range(n):
        qc.ry(x[q], q)
    for _ in range(gates):
        kind, q = int(rng.integers(8)), int(rng.integers(n))
        other = int(rng.integers(n))
        if kind == 0:
            qc.ry(float(rng.uniform(0, 3)), q)
        elif kind == 1:
            qc.rz(float(rng.uniform(0, 3)), q)
        elif kind == 2 and q < n - 1:
            qc.cx(q, q + 1)
        elif kind == 3 and q > 0:
            qc.cx(q, q - 1)
        elif kind == 4 and other != q:
            qc.cz(q, other)
        elif kind == 5:
            qc.rx(0.5 * x[q], q)
        elif kind == 6 and q < n - 2:
            qc.ccx(q, q + 1, q + 2)
        elif kind == 7 and q < n - 1:
            qc.rzz(float(rng.uniform(0, 3)), q, q + 1)
    return qc, x


@pytest.mark.parametrize("n,seed", [(3, 0), (5, 1), (12, 2), (13, 3), (13, 4)])
def test_fused_runs_equal_statevector(n: int, seed: int) -> None:
    qc, x = _random_circuit(n, seed)
    enc = np.random.default_rng(seed).uniform(0, 3, (3, n))
    measured = tuple(range(n)) if seed % 2 else (0, n - 1)
    job = engine.Circuit(qc, measured, tuple(x))
    probs = engine.probabilities(job, enc, "numpy")
    for i in range(len(enc)):
        ref = Statevector(qc.assign_parameters(dict(zip(x, enc[i])))).probabilities(list(measured))
        np.testing.assert_allclose(probs[i], ref, rtol=0, atol=1e-9)


def test_blocks_only_past_the_cost_model_width() -> None:
    assert fusion.width(fusion.BLOCK_FROM_QUBITS - 1) == 1
    assert fusion.width(fusion.BLOCK_FROM_QUBITS) == fusion.BLOCK_WIDTH


def test_a_resumed_run_leaves_the_callers_state_alone() -> None:
    """The fuser ping-pongs between two buffers; the array it was given (a cached checkpoint) is
    never one of them."""
    qc, x = _random_circuit(13, 5)
    ops = statevector.compile_circuit(qc)
    rng = np.random.default_rng(0)
    state = rng.normal(size=(2**13, 2)) + 1j * rng.normal(size=(2**13, 2))
    state /= np.linalg.norm(state, axis=0)
    before = state.copy()
    values = {p: rng.uniform(0, 3, 2) for p in x}
    out = statevector.run_columns(ops, state, values, 13)
    np.testing.assert_array_equal(state, before)
    assert out is not state


def test_zero_start_equals_the_gate_by_gate_run() -> None:
    """The product-state start (`zero`) gives the state the gate passes give from |0...0>."""
    qc, x = _random_circuit(13, 6)
    ops = statevector.compile_circuit(qc)
    values = {p: np.array([0.3, 1.1]) for p in x}
    zero = np.zeros((2**13, 2), dtype=complex)
    zero[0] = 1.0
    a = statevector.run_columns(ops, zero.copy(), values, 13, zero=True)
    b = statevector.run_columns(ops, zero.copy(), values, 13, zero=False)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
