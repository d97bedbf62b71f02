"""Qiskit ML classifiers trained briefly on iris / breast_cancer, imported, checked against their own forward pass.

Each library model runs on its exact statevector primitives (QMLSampler(shots=None), QMLEstimator);
the imported model must give the same class probabilities or expectation values to 1e-9 and the
same predictions, after a save/load round trip through model.qasm + model.json.
"""

from __future__ import annotations

import numpy as np
import pytest
from qiskit.circuit.library import efficient_su2, real_amplitudes, z_feature_map, zz_feature_map
from qiskit.quantum_info import SparsePauliOp
from qiskit_machine_learning.algorithms import VQC, NeuralNetworkClassifier
from qiskit_machine_learning.neural_networks import EstimatorQNN, SamplerQNN
from qiskit_machine_learning.optimizers import COBYLA
from qiskit_machine_learning.primitives import QMLEstimator, QMLSampler
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.decomposition import PCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from qmltest.errors import InputError
from qmltest.interop import from_qiskit_ml
from qmltest.model import artifact, readout
from qmltest.simulate import engine
from qmltest.simulate.runner import model_probabilities


def _iris(n: int = 30):
    x, y = load_iris(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(x), n, replace=False)
    return x[idx], y[idx]


def _roundtrip(model, tmp_path):
    model.save(tmp_path / "m")
    return artifact.load(tmp_path / "m")


@pytest.fixture(scope="module")
def iris_scaled():
    x, y = _iris()
    scaler = MinMaxScaler().fit(x)
    return x, y, scaler


def test_vqc_output_shape_3_is_modulo_3(iris_scaled, tmp_path):
    x, y, scaler = iris_scaled
    vqc = VQC(
        feature_map=zz_feature_map(4),
        ansatz=real_amplitudes(4, reps=2),
        optimizer=COBYLA(maxiter=20),
        sampler=QMLSampler(),
        output_shape=3,
    )
    vqc.fit(scaler.transform(x), y)
    model = _roundtrip(from_qiskit_ml(vqc, preprocessing=scaler), tmp_path)
    assert model.readout_map == [s % 3 for s in range(16)]
    assert model.classes == [0, 1, 2]
    ref = vqc.neural_network.forward(scaler.transform(x), vqc.weights)
    ours = readout.class_probabilities(
        model_probabilities(model, x), model.readout_matrix, 3
    )  # raw x: scaler in manifest
    assert np.max(np.abs(ours - ref)) < 1e-9
    assert np.array_equal(
        np.array(model.classes)[model.predict(model_probabilities(model, x))], vqc.predict(scaler.transform(x))
    )
    table = [(r["kind"], r["start"], r["stop"]) for r in model.manifest["layers"]]
    assert table == [("feature_map", 0, 52), ("ansatz", 52, 70)]


def test_vqc_default_interpret_is_mirrored_with_a_warning(iris_scaled, tmp_path):
    """qiskit-ml 0.9.1's VQC keeps x % 2 when fit on 3 classes: mirrored as it is, and said."""
    x, y, scaler = iris_scaled
    vqc = VQC(
        feature_map=z_feature_map(4),
        ansatz=efficient_su2(4, reps=1),
        optimizer=COBYLA(maxiter=15),
        sampler=QMLSampler(),
    )
    vqc.fit(scaler.transform(x), y)
    model = from_qiskit_ml(vqc, preprocessing=scaler)
    ref = vqc.neural_network.forward(scaler.transform(x), vqc.weights)
    ours = readout.class_probabilities(model_probabilities(model, x), model.readout_matrix, 3)
    assert np.max(np.abs(ours - ref)) < 1e-9
    assert model.readout_map == [s % 2 for s in range(16)]
    assert any("never predicts class(es) [2]" in w for w in model.manifest["import"]["warnings"])


def test_sampler_qnn_with_interpret(tmp_path):
    x, y = _iris(24)
    pipe = make_pipeline(StandardScaler(), PCA(n_components=3), MinMaxScaler((0, np.pi))).fit(x)
    fm, ansatz = zz_feature_map(3, reps=1), real_amplitudes(3, reps=1)
    qc = fm.compose(ansatz)

    def interpret(s: int) -> int:
        return (s >> 1) % 3

    qnn = SamplerQNN(
        circuit=qc,
        input_params=fm.parameters,
        weight_params=ansatz.parameters,
        interpret=interpret,
        output_shape=3,
        sampler=QMLSampler(),
    )
    clf = NeuralNetworkClassifier(qnn, optimizer=COBYLA(maxiter=15), one_hot=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    clf.fit(pipe.transform(x), labels)
    model = _roundtrip(from_qiskit_ml(clf, preprocessing=pipe), tmp_path)
    assert model.classes == ["setosa", "versicolor", "virginica"]
    assert model.readout_map == [interpret(s) for s in range(8)]
    ref = qnn.forward(pipe.transform(x), clf.weights)
    ours = readout.class_probabilities(model_probabilities(model, x), model.readout_matrix, 3)
    assert np.max(np.abs(ours - ref)) < 1e-9
    assert np.array_equal(
        np.array(model.classes)[model.predict(model_probabilities(model, x))], clf.predict(pipe.transform(x))
    )


@pytest.fixture(scope="module")
def breast_cancer():
    x, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(1).choice(len(x), 30, replace=False)
    pipe = make_pipeline(StandardScaler(), PCA(n_components=4), MinMaxScaler((-1, 1))).fit(x)
    return x[idx], y[idx], pipe


def test_estimator_qnn_one_observable_sign(breast_cancer, tmp_path):
    x, y, pipe = breast_cancer
    fm, ansatz = z_feature_map(4), real_amplitudes(4, reps=1)
    qnn = EstimatorQNN(
        circuit=fm.compose(ansatz),
        observables=SparsePauliOp("XIZI"),
        input_params=fm.parameters,
        weight_params=ansatz.parameters,
        estimator=QMLEstimator(),
    )
    clf = NeuralNetworkClassifier(qnn, optimizer=COBYLA(maxiter=15))
    clf.fit(pipe.transform(x), 2 * y - 1)
    model = _roundtrip(from_qiskit_ml(clf, preprocessing=pipe), tmp_path)
    assert model.manifest["readout"]["kind"] == "expectation" and model.classes == [-1, 1]
    assert model.ir.measured == (1, 3)  # the support of XIZI; X on qubit 3 measured after an engine H
    ref = qnn.forward(pipe.transform(x), clf.weights)
    ev = readout.expectation_values(model_probabilities(model, x), ["XIZI"], [1, 3])
    assert np.max(np.abs(ev - ref)) < 1e-9
    ours = np.array(model.classes)[model.predict(model_probabilities(model, x))]
    assert np.array_equal(ours, clf.predict(pipe.transform(x)).ravel().astype(int))
    # Aer, the reference, agrees through the same engine-appended basis change
    aer = model_probabilities(model, x, backend="aer")
    assert np.max(np.abs(aer - model_probabilities(model, x))) < 1e-9


def test_estimator_qnn_two_observables_argmax(breast_cancer, tmp_path):
    x, y, pipe = breast_cancer
    fm, ansatz = z_feature_map(4), efficient_su2(4, reps=1)
    obs = [SparsePauliOp("IIZZ"), SparsePauliOp("ZZII")]
    qnn = EstimatorQNN(
        circuit=fm.compose(ansatz),
        observables=obs,
        input_params=fm.parameters,
        weight_params=ansatz.parameters,
        estimator=QMLEstimator(),
    )
    clf = NeuralNetworkClassifier(qnn, optimizer=COBYLA(maxiter=10), one_hot=True)
    clf.fit(pipe.transform(x), y)
    model = _roundtrip(from_qiskit_ml(clf, preprocessing=pipe), tmp_path)
    assert model.classes == [0, 1]
    ref = qnn.forward(pipe.transform(x), clf.weights)
    ev = readout.expectation_values(model_probabilities(model, x), ["IIZZ", "ZZII"], [0, 1, 2, 3])
    assert np.max(np.abs(ev - ref)) < 1e-9
    assert np.array_equal(model.predict(model_probabilities(model, x)), np.argmax(ref, axis=1))
    assert np.array_equal(
        np.array(model.classes)[model.predict(model_probabilities(model, x))], clf.predict(pipe.transform(x))
    )


@pytest.mark.parametrize(
    ("labels", "coeffs"),
    [(["ZZII", "IIZZ"], [0.5, 0.5]), (["ZIII", "IZII", "IIZZ"], [0.3, -0.5, 0.2])],
)
def test_weighted_sum_observable_matches_the_library(labels, coeffs):
    """A SparsePauliOp of several real-weighted terms is one output: <sum c_t P_t> equals the
    EstimatorQNN's forward pass to 1e-9 and the sign predictions agree on every input."""
    fm, ansatz = z_feature_map(4), real_amplitudes(4, reps=1)
    qnn = EstimatorQNN(
        circuit=fm.compose(ansatz),
        observables=SparsePauliOp(labels, coeffs),
        input_params=fm.parameters,
        weight_params=ansatz.parameters,
        estimator=QMLEstimator(),
    )
    w = np.random.default_rng(2).uniform(-np.pi, np.pi, qnn.num_weights)
    model = from_qiskit_ml(qnn, w)
    written = "+".join(f"{c!r}*{p}" for c, p in zip(coeffs, labels)).replace("+-", "-")
    assert model.manifest["readout"]["observables"] == [written]
    x = np.random.default_rng(4).uniform(-np.pi, np.pi, (40, 4))
    ref = qnn.forward(x, w).ravel()
    ev = readout.expectation_values(
        model_probabilities(model, x), model.manifest["readout"]["observables"], model.ir.measured
    )
    assert np.max(np.abs(ev.ravel() - ref)) < 1e-9
    assert np.array_equal(
        np.array(model.classes)[model.predict(model_probabilities(model, x))], np.where(ref > 0, 1, -1)
    )


@pytest.mark.parametrize(
    ("labels", "coeffs", "bases"),
    [(["XX", "ZZ"], [0.5, 0.5], 2), (["XXI", "ZZI", "IYY"], [0.5, 0.3, -0.4], 3)],
)
def test_observables_in_several_bases_match_the_library_exactly_and_under_shots(labels, coeffs, bases):
    """Terms that do not commute qubit-wise are read in one basis per qubit-wise commuting group:
    exact <O> equals EstimatorQNN.forward to 1e-9 (numpy and Aer), and shot estimates (each shot's
    basis drawn uniformly) fall within 5 standard errors of it on every input."""
    n = len(labels[0])
    fm, ansatz = z_feature_map(n), real_amplitudes(n, reps=1)
    qnn = EstimatorQNN(
        circuit=fm.compose(ansatz),
        observables=SparsePauliOp(labels, coeffs),
        input_params=fm.parameters,
        weight_params=ansatz.parameters,
        estimator=QMLEstimator(),
    )
    w = np.random.default_rng(2).uniform(-np.pi, np.pi, qnn.num_weights)
    model = from_qiskit_ml(qnn, w)
    assert model.measurement_bases == bases
    obs, measured = model.manifest["readout"]["observables"], list(model.ir.measured)
    x = np.random.default_rng(4).uniform(-np.pi, np.pi, (40, n))
    ref = qnn.forward(x, w).ravel()
    for backend in ("numpy", "aer"):
        probs = model_probabilities(model, x, backend=backend)
        assert probs.shape == (40, bases * 2 ** len(measured))
        assert np.max(np.abs(readout.expectation_values(probs, obs, measured).ravel() - ref)) < 1e-9
    assert np.array_equal(np.array(model.classes)[model.predict(probs)], np.where(ref > 0, 1, -1))
    shots = 20000
    counts = engine.sample_counts(probs, shots, np.random.default_rng(0))
    est = readout.expectation_values(counts / shots, obs, measured).ravel()
    value = 2 * readout.observable_columns(obs, measured)[:, 0] - 1  # one shot's estimate per (basis, outcome)
    se = np.sqrt((probs @ value**2 - ref**2) / shots)
    assert np.all(np.abs(est - ref) < 5 * se)
    from qmltest import attacks  # noqa: PLC0415

    with pytest.raises(InputError, match="one measurement basis"):  # white-box gradients: one basis only
        attacks.input_gradient(model, x[:2], np.zeros(2, dtype=int))


def test_a_weights_list_of_the_wrong_length_is_refused():
    fm, ansatz = z_feature_map(2), real_amplitudes(2, reps=1)
    single = EstimatorQNN(
        circuit=fm.compose(ansatz),
        observables=SparsePauliOp("ZZ"),
        input_params=fm.parameters,
        weight_params=ansatz.parameters,
        estimator=QMLEstimator(),
    )
    with pytest.raises(InputError, match="4 weights but 3"):
        from_qiskit_ml(single, np.zeros(3))


def test_untrained_classifier_is_refused():
    vqc = VQC(feature_map=z_feature_map(2), ansatz=real_amplitudes(2, reps=1), sampler=QMLSampler())
    with pytest.raises(InputError, match="not trained"):
        from_qiskit_ml(vqc)
