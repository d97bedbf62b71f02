"""Gram forms for DFC mutants (simulate/linearity, issue 45): exact against Aer, refused where the
state is not multilinear in the changed features, and the same report as simulating each mutant."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qiskit.circuit import Parameter
from qiskit.circuit.library import real_amplitudes, z_feature_map, zz_feature_map

from qmltest.data.labelled import Data
from qmltest.interop import from_circuit
from qmltest.model import artifact
from qmltest.mutation import pipeline
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.operators.qml import DFC
from qmltest.simulate import engine, linearity, program
from qmltest.simulate.backends import REGISTRY
from qmltest.simulate.compiled import Compiled

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from scale import make_model  # noqa: E402


def vqc(n: int, feature_map=z_feature_map):
    fm, ansatz = feature_map(n), real_amplitudes(n, reps=2)
    weights = np.random.default_rng(0).uniform(-1, 1, ansatz.num_parameters)
    return from_circuit(fm.compose(ansatz), weights, list(fm.parameters), readout="modulo", classes=[0, 1])


def class_probs(model, job, x: np.ndarray, backend: str) -> np.ndarray:
    full = engine.probabilities(job, x, REGISTRY.get(backend))
    return (full @ model.readout_matrix) / full.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("n, cols", [(4, (1, 3)), (6, (0,)), (6, (2, 3, 5))])
def test_form_equals_aer_on_changed_features(n: int, cols: tuple[int, ...]) -> None:
    model = vqc(n)
    job = program.of_model(model)
    x = np.random.default_rng(1).uniform(0, np.pi, (12, n))
    s = linearity.split(job, cols)
    assert s is not None and s.qubits == cols and s.size == 2 ** len(cols)
    form = linearity.form(job, s, x, model.readout_matrix)
    changed = x.copy()
    changed[:, list(cols)] = np.random.default_rng(2).uniform(-np.pi, np.pi, (12, len(cols)))
    got = form.probabilities(changed)
    np.testing.assert_allclose(got, class_probs(model, job, changed, "aer"), atol=1e-9)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
    # the reference inputs themselves: the form reproduces the original's class probabilities
    np.testing.assert_allclose(form.probabilities(x), class_probs(model, job, x, "numpy"), atol=1e-12)


def test_split_refuses_where_not_multilinear() -> None:
    # zz_feature_map reads every feature pair through CX-P-CX: entangled reads
    assert linearity.split(program.of_model(vqc(4, zz_feature_map)), (1,)) is None
    # a feature read after an entangling gate on its qubit
    a, b = Parameter("a"), Parameter("b")
    qc = QuantumCircuit(2)
    qc.ry(a, 0)
    qc.cx(0, 1)
    qc.ry(b, 1)
    qc.rz(0.3, 0)
    qc.cx(1, 0)
    job = program.Circuit(qc, (0, 1), (a, b))
    assert linearity.split(job, (0,)) is not None  # a: read before the cx
    assert linearity.split(job, (1,)) is None  # b: read after the cx on qubit 1
    # amplitude inputs: the state is the input, not a product of local states
    assert linearity.split(program.Circuit(QuantumCircuit(2), (0, 1), (), amplitude=True), (0,)) is None


@pytest.mark.parametrize("marginals", [False, True])
def test_dfc_mutant_outcomes_from_a_form_match_its_own_simulation(marginals, monkeypatch) -> None:
    """11 qubits: past votes.BUCKET_OUTCOMES (1024) outcomes, where the evidence reads class buckets;
    every outcome simulated per mutant, or (marginals) only qubit 0's, as x % 2 reads."""
    monkeypatch.setattr(Compiled, "marginals", marginals)
    model = vqc(11)
    raw = np.random.default_rng(1).uniform(0, np.pi, (8, 11))
    full = engine.probabilities(program.of_model(model), model.encode(raw), REGISTRY.get("numpy"))
    data = Data("t", model.encode(raw), model.predict(full), raw)
    dfc = DFC(seed=0)
    sites = [s for s in dfc.sites(model, True) if s.args[1:3] == (2, 7)]
    mutants = [dfc.apply(model, s) for s in sites]
    ev = Evaluator(model, repeats=1, shots=None, seed=0, backend="numpy")
    assert ev.sim.data_change(mutants[0]) == (2, 7)
    assert ev.prepare_data_changes(mutants, data) == 1
    formed = unchanged = 0
    for mutant in mutants:
        probs, matrix, status = ev.mutant_outcomes(mutant, data)
        full, own_status = ev.mutant_probs(mutant, data)
        if status == "equivalent":  # local states unchanged up to a phase: the original's outcomes
            unchanged += 1
            assert own_status == "equivalent"
            assert np.abs(probs - full).max() < 1e-10 and probs is ev.original_probs(data)
        elif matrix.shape[0] == 2 and not np.array_equal(probs, full):  # from the form: class buckets
            formed += 1
            assert status == "ok" == own_status
            want = (full @ ev.sim.matrix(mutant)) / full.sum(axis=1, keepdims=True)
            np.testing.assert_allclose(probs, want, atol=1e-9)
        else:  # handed to the per-outcome path (close to the original, or encoded otherwise)
            np.testing.assert_array_equal(probs, full)
            assert status == own_status
    assert formed > len(mutants) // 2
    assert unchanged == sum(s.args[3:5] == ("add", "add") and s.args[5] == np.pi for s in sites)  # +2 pi on P(2x)


def same_report(n: int, inputs: int, operators: tuple[str, ...], tmp: Path) -> None:
    path, test = make_model(tmp, n)
    model = artifact.load(path)
    t = np.load(test)
    data = [Data("t", model.encode(t["x"][:inputs]), t["y"][:inputs], t["x"][:inputs])]
    reports = []
    try:
        for flag in (True, False):
            Compiled.data_forms = flag
            result, _ = pipeline.run(model, data, pipeline.Options(suite="qml", operators=operators))
            reports.append(json.dumps(result, sort_keys=True, default=str))
    finally:
        Compiled.data_forms = True
    assert reports[0] == reports[1]
    assert len(json.loads(reports[0])["mutants"]) > 100


@pytest.mark.slow  # 17 s: two full DFC runs (the default run stays under 10 minutes)
def test_dfc_report_identical_with_and_without_forms(tmp_path: Path) -> None:
    same_report(11, 10, ("DFC",), tmp_path)


@pytest.mark.slow
def test_whole_suite_report_identical_with_and_without_forms_12_qubits(tmp_path: Path) -> None:
    same_report(12, 100, (), tmp_path)
