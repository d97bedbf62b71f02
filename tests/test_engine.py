"""Engine: numpy fast path and Aer agree with qiskit.quantum_info.Statevector to 1e-9."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit.circuit import Parameter, QuantumCircuit
from qiskit.circuit.library import zz_feature_map
from qiskit.quantum_info import Statevector
from scipy import stats

from qmltest.errors import InputError
from qmltest.simulate import engine, program
from qmltest.simulate.statevector import marginal_probabilities

ONE_Q = ["rx", "ry", "rz", "p", "h", "x", "sx", "t", "s"]
TWO_Q = ["cx", "cz", "crx", "cry", "crz", "cp", "rzz", "rxx", "ryy", "swap"]


def random_circuit(n: int, depth: int, rng: np.random.Generator, inputs: list[Parameter]) -> QuantumCircuit:
    qc = QuantumCircuit(n)
    for _ in range(depth):
        if n > 1 and rng.random() < 0.4:
            name = TWO_Q[rng.integers(len(TWO_Q))]
            a, b = (int(q) for q in rng.choice(n, 2, replace=False))
            if name in ("cx", "cz", "swap"):
                getattr(qc, name)(a, b)
            else:
                angle = inputs[rng.integers(len(inputs))] * 1.5 - 0.2 if rng.random() < 0.5 else rng.normal()
                getattr(qc, name)(angle, a, b)
        else:
            name = ONE_Q[rng.integers(len(ONE_Q))]
            q = int(rng.integers(n))
            if name in ("rx", "ry", "rz", "p"):
                angle = inputs[rng.integers(len(inputs))] if rng.random() < 0.5 else rng.normal()
                getattr(qc, name)(angle, q)
            else:
                getattr(qc, name)(q)
    return qc


def reference(qc: QuantumCircuit, inputs, feats, measured) -> np.ndarray:
    out = []
    for row in feats:
        bound = qc.assign_parameters(dict(zip(inputs, row)))
        sv = Statevector(bound).data[None, :]
        out.append(marginal_probabilities(sv, measured, qc.num_qubits)[0])
    return np.array(out)


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_numpy_and_aer_match_statevector(n: int) -> None:
    rng = np.random.default_rng(n)
    inputs = [Parameter(f"x_{i:02d}") for i in range(3)]
    qc = random_circuit(n, 40, rng, inputs)
    measured = [int(q) for q in rng.permutation(n)[: min(n, 3)]]
    feats = rng.uniform(-np.pi, np.pi, (6, 3))
    used = [p for p in inputs if p in qc.parameters]
    job = program.Circuit(qc, tuple(measured), tuple(used))
    cols = [inputs.index(p) for p in used]
    ref = reference(qc, used, feats[:, cols], measured)
    for backend in ("numpy", "aer"):
        got = engine.probabilities(job, feats[:, cols], backend)
        np.testing.assert_allclose(got, ref, atol=1e-9, err_msg=backend)


def test_feature_map_expressions_evaluated_per_input() -> None:
    fm = zz_feature_map(3)
    job = program.Circuit(fm, (0, 1, 2), tuple(fm.parameters))
    feats = np.random.default_rng(0).uniform(0, 2, (5, 3))
    ref = reference(fm, list(fm.parameters), feats, [0, 1, 2])
    np.testing.assert_allclose(engine.probabilities(job, feats), ref, atol=1e-9)


def test_amplitude_encoding_numpy_matches_aer() -> None:
    rng = np.random.default_rng(3)
    qc = random_circuit(4, 30, rng, [Parameter("unused")])
    qc = qc.assign_parameters({p: 0.3 for p in qc.parameters})
    states = rng.normal(size=(5, 16)) + 0j
    states /= np.linalg.norm(states, axis=1, keepdims=True)
    job = program.Circuit(qc, (1, 3), (), amplitude=True)
    ref = []
    for s in states:
        ref.append(marginal_probabilities(Statevector(s).evolve(qc).data[None], [1, 3], 4)[0])
    for backend in ("numpy", "aer"):
        np.testing.assert_allclose(engine.probabilities(job, states, backend), np.array(ref), atol=1e-9)


def test_shots_follow_exact_distribution_chi_square() -> None:
    probs = np.array([[0.1, 0.2, 0.3, 0.4]])
    counts = engine.sample_counts(np.repeat(probs, 200, axis=0), 1000, np.random.default_rng(11)).sum(axis=0)
    expected = probs[0] * 200 * 1000
    _, pvalue = stats.chisquare(counts, expected)
    assert pvalue > 0.001
    assert counts.sum() == 200_000


def test_same_seed_same_counts() -> None:
    probs = np.array([[0.5, 0.5], [0.9, 0.1]])
    a = engine.sample_counts(probs, 100, np.random.default_rng(5))
    b = engine.sample_counts(probs, 100, np.random.default_rng(5))
    assert np.array_equal(a, b)


def test_too_many_qubits_refused_with_memory() -> None:
    """Refused before any work, naming the bytes needed and available (an input error: exit 2)."""
    for n in (40, 30):
        qc = QuantumCircuit(n)
        with pytest.raises(InputError, match=r"need about [0-9.]+ GiB .* but [0-9.]+ GiB are available"):
            engine.probabilities(program.Circuit(qc, (0,), ()), np.zeros((1, 0)))


def test_wrong_feature_count() -> None:
    x = Parameter("x")
    qc = QuantumCircuit(1)
    qc.rx(x, 0)
    with pytest.raises(InputError, match="feature count"):
        engine.probabilities(program.Circuit(qc, (0,), (x,)), np.zeros((2, 3)))


@pytest.mark.parametrize("measured", [[0, 1], [3, 0], [5], [1, 4, 2], []])
def test_marginal_by_summing_matrix_equals_the_definition(measured) -> None:
    """The BLAS marginal (|psi|^2 times a 0/1 matrix) against the per-outcome sum of basis
    probabilities, on random states of 6 qubits, C- and F-ordered."""
    from qmltest.model.readout import marginalize

    rng = np.random.default_rng(3)
    psi = rng.normal(size=(7, 64)) + 1j * rng.normal(size=(7, 64))
    psi /= np.linalg.norm(psi, axis=1, keepdims=True)
    want = marginalize(np.abs(psi) ** 2, measured, 6)
    np.testing.assert_allclose(marginal_probabilities(psi, measured, 6), want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(marginal_probabilities(np.asfortranarray(psi), measured, 6), want, rtol=0, atol=1e-15)
    assert marginal_probabilities(psi, list(range(6)), 6).shape == (7, 64)  # all measured: axis sums


def test_run_columns_is_run_transposed_bit_for_bit() -> None:
    from qmltest.simulate import statevector

    rng = np.random.default_rng(4)
    x = [Parameter(f"x{i}") for i in range(3)]
    qc = random_circuit(4, 30, rng, x)
    ops = statevector.compile_circuit(qc)
    values = {p: rng.uniform(-1, 1, 5) for p in x}
    psi0 = statevector.zero_states(5, 4)
    rows = statevector.run(ops, psi0, values, 4, (7, 19))
    cols = statevector.run_columns(ops, np.ascontiguousarray(psi0.T), values, 4, (7, 19))
    assert np.array_equal(rows, cols.T)


def _every_parametric_gate() -> tuple[QuantumCircuit, list[Parameter]]:
    """One circuit with every multi-angle and two-qubit parametric gate of Qiskit's standard
    library that a decomposed or hand-built QNN carries, angles as expressions of four features."""
    from qiskit.circuit import ParameterVector
    from qiskit.circuit.library import (
        CRXGate,
        CU1Gate,
        CU3Gate,
        CUGate,
        MCPhaseGate,
        RGate,
        RZXGate,
        U2Gate,
        XXMinusYYGate,
        XXPlusYYGate,
    )

    x = ParameterVector("x", 4)
    qc = QuantumCircuit(3)
    qc.h([0, 1, 2])
    qc.u(x[0], 2 * x[1], x[2] + 0.3, 0)
    qc.u(x[0], 0.2, 0.3, 1)
    qc.append(U2Gate(x[1], x[3]), [2])
    qc.append(RGate(x[2], x[0] * x[1]), [1])
    qc.append(CUGate(x[0], x[1], x[2], x[3]), [0, 2])
    qc.append(CU3Gate(x[0], x[1], x[2]), [2, 1])
    qc.append(XXPlusYYGate(x[0], x[1]), [0, 1])
    qc.append(XXMinusYYGate(x[2], x[3]), [1, 2])
    qc.append(RZXGate(x[1]), [2, 0])
    qc.append(CRXGate(x[1]), [1, 0])
    qc.append(MCPhaseGate(x[2], 2), [0, 1, 2])  # no vectorized form: built through Qiskit
    qc.append(CU1Gate(x[1]), [2, 0])
    return qc, list(x)


def test_every_parametric_gate_matches_statevector_and_the_density_engine() -> None:
    from qmltest.simulate import density
    from qmltest.simulate import statevector as sv

    qc, x = _every_parametric_gate()
    values = np.random.default_rng(0).uniform(-3, 3, (6, 4))
    psi = sv.run(sv.compile_circuit(qc), sv.zero_states(6, 3), {p: values[:, i] for i, p in enumerate(x)}, 3)
    rho = density.probabilities(qc, [0, 1, 2], x, values, False, {})
    for k in range(6):
        ref = Statevector(qc.assign_parameters(dict(zip(x, values[k])))).data
        assert np.max(np.abs(psi[k] - ref)) < 1e-12
        assert np.max(np.abs(rho[k] - np.abs(ref) ** 2)) < 1e-12
