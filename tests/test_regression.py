"""Issue 60: regressors. VQR and NeuralNetworkRegressor import as regressors (never as +-1
classifiers), their outputs equal the library's `predict`, `evaluate` reports the library's MSE and
R^2 with intervals, `predict` gives outputs and errors, and a regressor's mutants are killed by the
squared-error differential test whose identical copies are killed at most at alpha."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest import api
from qmltest.errors import InputError
from qmltest.model import regression
from qmltest.util import intervals

pytest.importorskip("qiskit_machine_learning")
runner = CliRunner()


def _data(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 2))
    return x, 0.6 * np.sin(2 * x[:, 0]) + 0.3 * x[:, 1]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict:
    """A VQR and a NeuralNetworkRegressor, each fitted for a few COBYLA steps, their models saved,
    and a 30-row test file."""
    from qiskit.circuit.library import real_amplitudes, zz_feature_map
    from qiskit_machine_learning.algorithms import VQR, NeuralNetworkRegressor
    from qiskit_machine_learning.neural_networks import EstimatorQNN
    from qiskit_machine_learning.optimizers import COBYLA

    from qmltest.interop.qiskit_ml import from_qiskit_ml

    folder = tmp_path_factory.mktemp("regressors")
    x, y = _data(0, 20)
    fm, ansatz = zz_feature_map(2, reps=1), real_amplitudes(2, reps=1)
    vqr = VQR(feature_map=fm, ansatz=ansatz, optimizer=COBYLA(maxiter=15))
    vqr.fit(x, y)
    qnn = EstimatorQNN(circuit=fm.compose(ansatz), input_params=fm.parameters, weight_params=ansatz.parameters)
    nnr = NeuralNetworkRegressor(qnn, optimizer=COBYLA(maxiter=15))
    nnr.fit(x, y)
    xt, yt = _data(1, 30)
    np.savez(folder / "test.npz", x=xt, y=yt)
    out = {"vqr": vqr, "nnr": nnr, "qnn": qnn, "x": xt, "y": yt, "data": str(folder / "test.npz")}
    for key in ("vqr", "nnr"):
        model = from_qiskit_ml(out[key], name=key)
        model.save(folder / key)
        out[f"{key}_model"], out[f"{key}_path"] = model, str(folder / key)
    return out


@pytest.mark.parametrize("key", ["vqr", "nnr"])
def test_outputs_equal_the_librarys_predict_and_evaluate_its_mse(trained, key) -> None:
    lib = np.asarray(trained[key].predict(trained["x"]), dtype=float).ravel()
    res = api.predict(trained[f"{key}_path"], trained["data"])
    ours = np.array([r["output"] for r in res.data["rows"]])
    assert res.data["task"] == "regression" and len(ours) == 30
    assert np.max(np.abs(ours - lib)) < 1e-9
    ev = api.evaluate(trained[f"{key}_path"], trained["data"], shots=None).data
    assert ev["task"] == "regression" and ev["samples"] == 30
    assert abs(ev["mse"] - float(np.mean((lib - trained["y"]) ** 2))) < 1e-9
    assert abs(ev["r2"] - float(trained[key].score(trained["x"], trained["y"]))) < 1e-9
    lo, hi = ev["mse_interval"]
    assert lo < ev["mse"] < hi


def test_a_regressor_never_becomes_a_classifier(trained) -> None:
    from qmltest.interop.qiskit_ml import from_qiskit_ml

    model = trained["vqr_model"]
    assert model.is_regressor and model.classes == [] and model.manifest["task"] == "regression"
    with pytest.raises(InputError, match="VQR is a regressor"):
        from_qiskit_ml(trained["vqr"], task="classification")
    bare = from_qiskit_ml(trained["qnn"], trained["nnr"]._fit_result.x)
    assert not bare.is_regressor and "task='regression'" in bare.manifest["import"]["warnings"][0]
    values = from_qiskit_ml(trained["qnn"], trained["nnr"]._fit_result.x, task="regression")
    assert values.is_regressor
    with pytest.raises(InputError, match="is a regressor"):
        values.predict(np.zeros((1, 4)))


def test_shot_estimates_scatter_around_the_exact_outputs(trained) -> None:
    """The plug-in estimate from S shots of a one-Pauli output has variance (1 - <O>^2) / S."""
    exact = np.array([r["output"] for r in api.predict(trained["vqr_path"], trained["data"]).data["rows"]])
    shots = 4000
    res = api.predict(trained["vqr_path"], trained["data"], shots=shots, seed=3)
    drawn = np.array([r["output"] for r in res.data["rows"]])
    z = (drawn - exact) / np.sqrt((1 - exact**2) / shots)
    assert np.all(np.abs(z) < 4.5) and abs(float(np.mean(z))) < 4.5 / np.sqrt(len(z))


def test_the_loss_test_on_known_differentials() -> None:
    t = np.zeros(12)
    base = np.linspace(-0.5, 0.5, 12)
    assert regression.loss_test(base, base, t) == (1.0, 0.0)  # an identical copy
    p, d = regression.loss_test(2 * base + 0.01, base, t)  # every error grows
    assert p < 0.001 and d > 1.0
    p, d = regression.loss_test(-base, base, t)  # mirrored outputs: the same squared errors
    assert p == 1.0 and d == 0.0


@pytest.mark.parametrize("shots", [None, 200])
def test_identical_copies_are_killed_at_most_at_alpha(trained, shots) -> None:
    res = api.mutate(
        trained["vqr_path"], trained["data"], suite="qml", operators="APC", shots=shots, null_copies=200, seed=5
    )
    suite = next(iter(res.data["suites"].values()))
    null = suite["null_control"]
    assert res.data["meta"]["task"] == "regression" and res.data["meta"]["criterion"] == "statistical"
    assert null["copies"] == 200
    if shots is None:
        assert null["killed"] == 0
    else:
        assert not intervals.exceeds(null["killed"], null["copies"], 0.05)
    assert suite["original_mse"] > 0 and suite["scored_mutants"] > 0


def test_mutants_that_raise_every_error_are_killed(trained, tmp_path) -> None:
    """Targets the original meets exactly: every mutant that moves an output raises that input's
    squared error, so the differential test kills each one that moves most outputs; a 15-step fit
    (R^2 < 0 on its test set) leaves most mutants as likely better as worse, and they survive, as
    QuanForge's accuracy test lets a classifier's mutant of equal accuracy survive."""
    x = trained["x"]
    np.savez(tmp_path / "exact.npz", x=x, y=np.asarray(trained["vqr"].predict(x), dtype=float).ravel())
    res = api.mutate(trained["vqr_path"], str(tmp_path / "exact.npz"), suite="qml", operators="APC", shots=None)
    apc = res.data["operators"]["APC"]
    assert apc.get("killed", 0) >= 0.8 * sum(apc.values()), apc
    loose = api.mutate(trained["vqr_path"], trained["data"], suite="qml", operators="APC", shots=None)
    assert loose.data["mutation_score"] < res.data["mutation_score"]


def test_cli_speaks_of_error_and_refuses_class_commands(trained, tmp_path) -> None:
    res = runner.invoke(app, ["evaluate", trained["vqr_path"], "--data", trained["data"], "--exact"])
    assert res.exit_code == 0 and "MSE" in res.output and "R^2" in res.output and "accuracy" not in res.output
    res = runner.invoke(app, ["predict", trained["vqr_path"], "--data", trained["data"], "--csv", "-"])
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert list(rows[0]) == ["index", "target", "output", "error"] and len(rows) == 30
    assert all(abs(float(r["output"]) - float(r["target"]) - float(r["error"])) < 1e-12 for r in rows)
    lib = np.asarray(trained["vqr"].predict(trained["x"]), dtype=float).ravel()
    assert np.max(np.abs(np.array([float(r["output"]) for r in rows]) - lib)) < 1e-9  # the CSV's 17 digits
    for args in (
        ["mutate", trained["vqr_path"], "--test", trained["data"], "--criterion", "majority"],
        ["mutate", trained["vqr_path"], "--test", trained["data"], "--suite", "quanforge", "--strategy", "search"],
        ["evaluate", trained["vqr_path"], "--data", "iris"],
        ["evaluate", trained["vqr_path"], "--data", trained["data"], "--shots-budget", "1000"],
        ["diff", trained["vqr_path"], "--target-b", "fake:manila", "--data", trained["data"]],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output
    out = tmp_path / "run"
    args = ["mutate", trained["vqr_path"], "--test", trained["data"], "--suite", "qml", "--operators", "APC"]
    res = runner.invoke(app, [*args, "--exact", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    again = runner.invoke(app, ["report", str(out), "--criterion", "majority"])
    assert again.exit_code == 2 and "statistical" in again.output
    doc = json.loads((out / "report.json").read_text())
    assert doc["stored"]["suites_info"][trained["data"]]["targets"][:3] == pytest.approx(trained["y"][:3].tolist())


def test_targets_and_class_labels_are_told_apart(tmp_path) -> None:
    from qmltest.data import datasets

    x, y = datasets.select_targets("diabetes", "test")
    assert y.dtype == float and len(x) == round(442 * 0.2)
    with pytest.raises(InputError, match="diabetes holds real targets"):
        datasets.select("diabetes", "test", [0, 1])
    (tmp_path / "bad.csv").write_text("0.1,0.2,high\n")
    with pytest.raises(InputError, match="not a number"):
        datasets.select_targets(str(tmp_path / "bad.csv"))
    tr, te = datasets.select_targets("diabetes", "train")[1], y
    assert len(tr) + len(te) == 442


def test_cli_import_of_a_regressor_from_qpy_equals_the_library(trained, tmp_path) -> None:
    import qiskit.qpy

    with open(tmp_path / "reg.qpy", "wb") as fh:
        qiskit.qpy.dump(trained["qnn"].circuit, fh)
    np.save(tmp_path / "w.npy", trained["nnr"]._fit_result.x)
    args = ["import", str(tmp_path / "reg.qpy"), "--weights", str(tmp_path / "w.npy"), "--task", "regression"]
    res = runner.invoke(app, [*args, "--observables", "ZZ", "--features", "x[0],x[1]", "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    assert "one real output (regressor)" in res.output
    rows = api.predict(str(tmp_path / "m"), trained["data"]).data["rows"]
    lib = np.asarray(trained["nnr"].predict(trained["x"]), dtype=float).ravel()
    assert np.max(np.abs(np.array([r["output"] for r in rows]) - lib)) < 1e-9
    res = runner.invoke(app, [*args, "--readout", "parity", "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "use readout 'expectation'" in res.output


def test_pennylane_regressor_and_probs_read_through_a_map() -> None:
    qml = pytest.importorskip("pennylane")
    from qmltest.interop import from_pennylane
    from qmltest.simulate import engine, program

    dev = qml.device("default.qubit", wires=2)
    w = np.array([0.3, -0.7])

    @qml.qnode(dev)
    def value(x, w):
        qml.AngleEmbedding(x, wires=[0, 1])
        qml.BasicEntanglerLayers(w[None, :], wires=[0, 1])
        return qml.expval(qml.PauliZ(0) @ qml.PauliZ(1))

    @qml.qnode(dev)
    def probs(x, w):
        qml.AngleEmbedding(x, wires=[0, 1])
        qml.BasicEntanglerLayers(w[None, :], wires=[0, 1])
        return qml.probs(wires=[0, 1])

    x = np.random.default_rng(2).uniform(-1, 1, (6, 2))
    reg = from_pennylane(value, (w,), num_features=2, task="regression")
    out = reg.outputs(engine.probabilities(program.of_model(reg), reg.encode(x)))
    assert reg.is_regressor and np.max(np.abs(out - np.array([float(value(r, w)) for r in x]))) < 1e-9
    parity = from_pennylane(
        probs, (w,), num_features=2, readout="map", readout_map=[0, 1, 1, 0], classes=["even", "odd"]
    )
    assert parity.classes == ["even", "odd"]
    p = np.array([probs(r, w) for r in x])
    want = np.argmax(np.stack([p[:, 0] + p[:, 3], p[:, 1] + p[:, 2]], axis=1), axis=1)
    got = parity.predict(engine.probabilities(program.of_model(parity), parity.encode(x)))
    assert np.array_equal(got, want)
