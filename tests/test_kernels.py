"""Issue 60: kernel models. QSVC, PegasosQSVC and QSVR over a FidelityQuantumKernel import from
Python and (feature map QPY + the SVM's NPZ) from the CLI; their predictions and decision values
equal the library's; a mutant of the feature map recomputes the kernel against the stored support
vectors exactly as the library computes it for the mutated map; identical copies are never killed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest import api
from qmltest.errors import InputError
from qmltest.model import kernel as kernel_model
from qmltest.simulate import fidelity
from qmltest.simulate.runner import model_probabilities

pytest.importorskip("qiskit_machine_learning")
runner = CliRunner()


def _xy(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(seed).uniform(0, 1, (n, 2))
    return x, (x[:, 0] > x[:, 1]).astype(int)


@pytest.fixture(scope="module")
def fitted() -> dict:
    from qiskit.circuit.library import zz_feature_map
    from qiskit_machine_learning.algorithms import QSVC, QSVR, PegasosQSVC
    from qiskit_machine_learning.kernels import FidelityQuantumKernel

    qk = FidelityQuantumKernel(feature_map=zz_feature_map(2, reps=1))
    x, y = _xy(0, 24)
    out = {"kernel": qk, "x": x, "y": y}
    out["QSVC"] = QSVC(quantum_kernel=qk).fit(x, y)
    out["PegasosQSVC"] = PegasosQSVC(quantum_kernel=qk, num_steps=60, seed=0).fit(x, y)
    out["QSVR"] = QSVR(quantum_kernel=qk).fit(x, x[:, 0] - x[:, 1])
    out["test"] = _xy(1, 30)
    return out


@pytest.mark.parametrize("name", ["QSVC", "PegasosQSVC", "QSVR"])
def test_predictions_equal_the_librarys(fitted, name) -> None:
    from qmltest.interop import from_qiskit_ml

    est, (x, _) = fitted[name], fitted["test"]
    model = from_qiskit_ml(est)
    assert model.is_kernel and model.manifest["import"]["library_roundtrip"]["max_abs_diff"] < 1e-9
    probs = model_probabilities(model, x)
    if name == "QSVR":
        assert model.is_regressor and np.max(np.abs(model.outputs(probs) - est.predict(x))) < 1e-9
        return
    labels = np.asarray(model.classes)[model.predict(probs)]
    assert np.array_equal(labels, est.predict(x))
    f = probs @ kernel_model.decision_column(
        model.manifest["readout"]["dual_coef"], model.manifest["readout"]["intercept"]
    )
    assert np.max(np.abs(f - est.decision_function(x))) < 1e-9


def test_cli_import_from_qpy_and_npz_equals_the_python_import(fitted, tmp_path) -> None:
    import qiskit.qpy

    from qmltest.interop import from_qiskit_ml
    from qmltest.interop.svm import export

    with open(tmp_path / "fm.qpy", "wb") as fh:
        qiskit.qpy.dump(fitted["kernel"].feature_map, fh)
    export(fitted["QSVC"], tmp_path / "svm.npz")
    args = ["import", str(tmp_path / "fm.qpy"), "--kernel", str(tmp_path / "svm.npz")]
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    x, y = fitted["test"]
    np.savez(tmp_path / "test.npz", x=x, y=y)
    rows = api.predict(str(tmp_path / "m"), str(tmp_path / "test.npz")).data
    assert rows["score"] == "decision"
    assert [int(r["prediction"]) for r in rows["rows"]] == fitted["QSVC"].predict(x).tolist()
    ours = from_qiskit_ml(fitted["QSVC"])
    assert ours.manifest["readout"] == api.load(tmp_path / "m").manifest["readout"] | {"estimator": "QSVC"}
    acc = api.evaluate(str(tmp_path / "m"), str(tmp_path / "test.npz"), shots=None).data["accuracy"]
    assert acc == pytest.approx(fitted["QSVC"].score(x, y))


def test_a_mutated_feature_map_recomputes_the_kernel_as_the_library_would(fitted) -> None:
    """Remove the first CX of the ZZ map: qmltest's kernel rows for the mutant equal qiskit-ml's
    FidelityQuantumKernel over the same mutated map, against the same stored support vectors."""
    from qiskit_machine_learning.kernels import FidelityQuantumKernel

    from qmltest.interop import from_qiskit_ml
    from qmltest.model import ir as irmod
    from qmltest.mutation.operators.classic import RemoveGate
    from qmltest.mutation.operators.sites import Site

    model = from_qiskit_ml(fitted["QSVC"])
    cut = next(i for i, g in enumerate(model.ir.gates) if g.name == "cx")
    mutant = RemoveGate().apply(model, Site("remove-gate", (cut,)))
    x = fitted["test"][0]
    sv = np.asarray(model.manifest["readout"]["support_vectors"])
    fm = irmod.unitary_part(mutant.ir)
    assert [p.name for p in fm.parameters] == [p.name for p in mutant.ir.inputs]  # qiskit-ml binds in this order
    ref = FidelityQuantumKernel(feature_map=fm).evaluate(x, sv)
    assert np.max(np.abs(fidelity.fidelities(mutant, x) - ref)) < 1e-9
    assert np.max(np.abs(fidelity.fidelities(mutant, x) - fidelity.fidelities(model, x))) > 1e-3


def test_mutation_of_a_kernel_model_and_its_null_control(fitted, tmp_path) -> None:
    from qmltest.interop import from_qiskit_ml

    from_qiskit_ml(fitted["QSVC"]).save(tmp_path / "m")
    x, y = fitted["test"]
    np.savez(tmp_path / "test.npz", x=x, y=y)
    res = api.mutate(str(tmp_path / "m"), str(tmp_path / "test.npz"), suite="classic", shots=None, null_copies=50)
    suite = next(iter(res.data["suites"].values()))
    assert suite["null_control"]["killed"] == 0 and suite["scored_mutants"] > 10
    assert res.data["operators"]["remove-gate"].get("killed", 0) >= 1
    picked = {"suite": "classic", "operators": "remove-gate", "shots": 256, "null_copies": 100}
    shot = api.mutate(str(tmp_path / "m"), str(tmp_path / "test.npz"), **picked)
    null = next(iter(shot.data["suites"].values()))["null_control"]
    assert null["copies"] == 100 and not null["exceeds_alpha"]


def test_refusals_are_one_line(fitted, tmp_path) -> None:
    from qiskit.circuit.library import zz_feature_map
    from qiskit_machine_learning.algorithms import QSVC

    from qmltest.interop import from_qiskit_ml

    with pytest.raises(InputError, match="a quantum kernel alone is no model"):
        from_qiskit_ml(fitted["kernel"])
    x = np.random.default_rng(3).uniform(0, 1, (15, 2))
    three = QSVC(quantum_kernel=fitted["kernel"]).fit(x, np.arange(15) % 3)
    with pytest.raises(InputError, match="one-vs-one votes"):
        from_qiskit_ml(three)
    from_qiskit_ml(fitted["QSVC"]).save(tmp_path / "m")
    for args in (
        ["evaluate", str(tmp_path / "m"), "--data", "iris", "--target", "fake:manila"],
        ["fuzz", str(tmp_path / "m"), "--profile", "none.json"],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    from qmltest.interop.circuit import from_circuit

    (tmp_path / "cut.npz").write_bytes(b"PK\x03\x04 truncated")  # a damaged NPZ: one line, exit 2
    cut = ["import", str(tmp_path / "m" / "model.qasm"), "--kernel", str(tmp_path / "cut.npz")]
    res = runner.invoke(app, [*cut, "--out", str(tmp_path / "k")])
    assert res.exit_code == 2 and "not a readable NPZ file" in res.output
    lone = from_circuit(zz_feature_map(2, reps=1), None, readout="parity", classes=[0, 1])
    assert "--kernel" in lone.manifest["import"]["warnings"][0]


@pytest.mark.parametrize("name", ["QSVC", "QSVR"])
def test_qml_mutants_of_a_kernel_model_are_scored_with_the_null_control(fitted, name, tmp_path) -> None:
    """The QML suite on a kernel model: DFC changes the data the feature map reads (the support
    vectors stay, as trained weights do); its unit operators read an ansatz, which a kernel model
    has none of (the classic and QuanForge gate operators mutate its feature map). DFC mutants are
    scored and the identical copies of the null control are never killed (exact)."""
    from sklearn.preprocessing import MinMaxScaler

    from qmltest.interop import from_qiskit_ml

    scaler = MinMaxScaler((0, 1)).fit(fitted["x"])
    from_qiskit_ml(fitted[name], preprocessing=scaler).save(tmp_path / "m")
    x, y = fitted["test"]
    np.savez(tmp_path / "t.npz", x=x, y=y if name == "QSVC" else x[:, 0] - x[:, 1])
    res = api.mutate(str(tmp_path / "m"), str(tmp_path / "t.npz"), suite="qml", shots=None, null_copies=40)
    ops = res.data["operators"]
    scored = {op: n for op, row in ops.items() if (n := row.get("killed", 0) + row.get("survived", 0))}
    assert scored.get("DFC", 0) >= 4 and set(ops) == {"DFC"}, ops
    suite = next(iter(res.data["suites"].values()))
    assert suite["null_control"]["copies"] == 40 and suite["null_control"]["killed"] == 0
    assert res.data["mutation_score"] is not None
    where = (str(tmp_path / "m"), str(tmp_path / "t.npz"))
    gates = api.mutate(*where, suite="quanforge", strategy="exhaustive", shots=None)
    assert sum(r.get("killed", 0) + r.get("survived", 0) for r in gates.data["operators"].values()) >= 10


def test_a_kernel_model_says_it_ran_on_numpy_and_what_mutates(fitted, tmp_path) -> None:
    """Its kernel is a Gram product of numpy states whatever --backend says, and inspect lists
    only the parts a kernel model has (its feature map and the data it reads)."""
    from qmltest.interop import from_qiskit_ml

    from_qiskit_ml(fitted["QSVC"]).save(tmp_path / "m")
    x, y = fitted["test"]
    np.savez(tmp_path / "t.npz", x=x, y=y)
    ran = api.evaluate(str(tmp_path / "m"), str(tmp_path / "t.npz"), shots=None, backend="aer")
    assert ran.data["backend"] == "numpy"
    shown = runner.invoke(app, ["inspect", str(tmp_path / "m"), "--json", "-"])
    assert set(json.loads(shown.stdout)["mutable"]) == {"feature_map", "preprocessing"}
