"""Gate fusion of the numpy statevector (`qmltest.simulate.fusion`): blocks past 12 qubits, the
product-state start, and the caller's state left as it was."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qiskit.circuit import Parameter
from qiskit.quantum_info import Statevector

from qmltest.simulate import engine, fusion, program, statevector


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
    job = program.Circuit(qc, measured, tuple(x))
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


def _columns(n: int, batch: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(2**n, batch)) + 1j * rng.normal(size=(2**n, batch))


@pytest.mark.parametrize("lo,w", [(0, 3), (4, 2), (9, 3), (11, 1)])
def test_a_real_block_multiplies_the_float_view_to_rounding(lo: int, w: int) -> None:
    """A real block (ry and cx products) runs on the float view of the state: the complex product's."""
    n = 12
    u = np.random.default_rng(lo).normal(size=(2**w, 2**w)).astype(complex)
    state, out = _columns(n, 5, 1), np.empty((2**n, 5), dtype=complex)
    shape = (2 ** (n - lo - w), 2**w, -1)
    want = np.matmul(u, state.reshape(shape)).reshape(state.shape)
    fusion.multiply(u, state, out, lo, w, n)
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-14)


def test_slabs_over_threads_give_the_one_product(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each slab is the same stack of small products; split or not, the numbers are equal."""
    n, lo, w = 12, 1, 3
    u = np.random.default_rng(0).normal(size=(8, 8)) + 1j * np.random.default_rng(1).normal(size=(8, 8))
    state = _columns(n, 4, 2)
    one, split = np.empty_like(state), np.empty_like(state)
    fusion.multiply(u, state, one, lo, w, n)
    monkeypatch.setattr(fusion, "SPLIT_FROM_BYTES", 0)
    monkeypatch.setattr(fusion, "SPLIT_FROM_PRODUCTS", 1)
    monkeypatch.setattr(fusion, "threads", lambda: 3)
    fusion.multiply(u, state, split, lo, w, n)
    np.testing.assert_array_equal(split, one)


def test_threaded_fused_runs_equal_statevector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fusion, "SPLIT_FROM_BYTES", 0)
    monkeypatch.setattr(fusion, "SPLIT_FROM_PRODUCTS", 1)
    monkeypatch.setattr(fusion, "threads", lambda: 2)
    test_fused_runs_equal_statevector(13, 7)


def test_threads_follow_a_blas_pinned_to_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert fusion.threads() == 1
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert fusion.threads() >= 1


def test_the_kept_spare_is_never_a_state_a_caller_holds() -> None:
    """A run keeps its spare buffer for the next; the states runs returned stay as they were."""
    qc, x = _random_circuit(13, 8)
    ops = statevector.compile_circuit(qc)
    zero = np.zeros((2**13, 3), dtype=complex)
    zero[0] = 1.0
    outs, copies = [], []
    for k in range(3):
        values = {p: np.array([0.2, 0.9, 1.7]) + k for p in x}
        outs.append(statevector.run_columns(ops, zero.copy(), values, 13, zero=True))
        copies.append(outs[-1].copy())
    for a, b in zip(outs, copies):
        np.testing.assert_array_equal(a, b)
    assert not any(np.shares_memory(outs[i], outs[j]) for i in range(3) for j in range(i))
    kept = list(fusion._SPARES.values())
    assert len(kept) <= 1 and not any(np.shares_memory(k, o) for k in kept for o in outs)
