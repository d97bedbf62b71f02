"""Issue 48: classifiers with named classes, and the inputs that used to slip through.

- Class labels may be names ("setosa") in CSV and NPZ files: evaluate, cover and mutate match them
  to the manifest's classes by value and every report keeps the names. Renaming the classes is a
  relabelling, so accuracies, coverage and mutation scores equal the integer-labelled run exactly.
- Kernel classifiers (QSVC, PegasosQSVC) are refused in one line naming why.
- 1e308 in data or in a QASM angle expression, truncated or inconsistent suites, damaged run
  records and a CSV whose first row mixes numbers and text: exit 2, one line, never a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.data import datasets, labels
from qmltest.data.preprocess import amplitude_states
from qmltest.errors import InputError
from qmltest.model import artifact

runner = CliRunner()
MODEL = Path("data/models/zfm-ra-iris")
NAMES = ["setosa", "versicolor", "virginica"]


@pytest.fixture(scope="module")
def named(tmp_path_factory) -> dict[str, Path]:
    """The shipped iris model with named classes, and the iris test split as numbered and named
    CSV and NPZ files (a header row of column names, as pandas writes)."""
    root = tmp_path_factory.mktemp("named")
    shutil.copytree(MODEL, root / "model")
    manifest = json.loads((root / "model" / "model.json").read_text())
    (root / "model" / "model.json").write_text(json.dumps(dict(manifest, classes=NAMES)))
    x, y = datasets.select("iris", "test")
    text = np.array(NAMES)[y]
    lines = ["sepal_l,sepal_w,petal_l,petal_w,species"] + [
        ",".join(f"{v!r}" for v in row) + f",{name}" for row, name in zip(x.tolist(), text)
    ]
    (root / "named.csv").write_text("\n".join(lines) + "\n")
    np.savez(root / "named.npz", x=x, y=text)
    np.savez(root / "numbered.npz", x=x, y=y)
    return {"model": root / "model", "root": root}


def _json(args: list[str], out: Path) -> dict:
    res = runner.invoke(app, [*args, "--json", str(out)])
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


def _refused(args: list[str]) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and len(res.stderr.strip().splitlines()) == 1, res.stderr
    return res.stderr


def test_label_column_reads_numbers_as_ints_and_names_as_text() -> None:
    assert labels.column(np.array([0.0, 2.0]), "f").tolist() == [0, 2]
    assert labels.column(np.array([" 1", "0"]), "f").tolist() == [1, 0]  # numbers written as text
    assert labels.column(np.array(["cat", "dog"]), "f").tolist() == ["cat", "dog"]
    assert labels.indices(["cat", "dog"], np.array(["dog", "cat", "dog"])).tolist() == [1, 0, 1]
    assert labels.indices([-1, 1], np.array([1.0, -1.0])).tolist() == [1, 0]
    for bad, says in ((["cat", "1"], "mixes names and numbers"), (["cat", ""], "row 1 is empty"), ([0.5], "0.5")):
        with pytest.raises(InputError, match=says):
            labels.column(np.array(bad), "f")
    with pytest.raises(InputError, match="'bird' are not classes"):
        labels.indices(["cat", "dog"], ["bird"])


@pytest.mark.parametrize("data", ["named.csv", "named.npz"])
def test_named_classes_evaluate_like_the_numbered_model(named, data, tmp_path) -> None:
    """The same inputs with names: the same predictions, so the same accuracy and counts per class,
    reported under the class names."""
    a = _json(["evaluate", str(MODEL), "--data", str(named["root"] / "numbered.npz"), "--exact"], tmp_path / "a.json")
    b = _json(["evaluate", str(named["model"]), "--data", str(named["root"] / data), "--exact"], tmp_path / "b.json")
    assert b["accuracy"] == a["accuracy"] and b["samples"] == a["samples"] == 30
    assert sorted(b["per_class"]) == NAMES
    for i, name in enumerate(NAMES):
        assert b["per_class"][name] == a["per_class"][str(i)]


def test_named_classes_cover_and_mutate_like_the_numbered_model(named, tmp_path) -> None:
    """Coverage and mutation verdicts do not depend on what the classes or the files are called:
    equal numbers under shots too (the shot draws are seeded by the suite's content, not its path),
    and the mutate report's killed classes are the names."""
    root, nm = named["root"], str(named["model"])
    for model, data, tag in ((str(MODEL), root / "numbered.npz", "n"), (nm, root / "named.csv", "s")):
        runner.invoke(app, ["profile", model, "--data", str(data), "--out", str(tmp_path / f"p{tag}.json"), "-q"])
    cov_n = _json(
        ["cover", str(MODEL), "--profile", str(tmp_path / "pn.json"), "--data", str(root / "numbered.npz")],
        tmp_path / "cn.json",
    )
    cov_s = _json(
        ["cover", nm, "--profile", str(tmp_path / "ps.json"), "--data", str(root / "named.csv")], tmp_path / "cs.json"
    )
    assert cov_n["totals"] == cov_s["totals"] and cov_n["inputs"] == cov_s["inputs"] == 30
    common = ["--suite", "qml", "--operators", "APC,DFC", "--sample", "12", "--seed", "2", "-q"]  # under shots
    mut_n = _json(["mutate", str(MODEL), "--test", str(root / "numbered.npz"), *common], tmp_path / "mn.json")
    mut_s = _json(["mutate", nm, "--test", str(root / "named.csv"), *common], tmp_path / "ms.json")
    (sn,), (ss,) = mut_n["suites"].values(), mut_s["suites"].values()
    assert ss["mutation_score"] == sn["mutation_score"] and ss["killed"] == sn["killed"] and sn["killed"] > 0
    killed = {c for m in mut_s["mutants"] for v in m["verdicts"].values() for c in v["killed_classes"]}
    assert killed and killed <= set(NAMES)


def test_a_vqc_fitted_on_names_imports_and_evaluates_from_a_named_file(tmp_path) -> None:
    """qiskit-machine-learning's VQC fitted on string labels: the import keeps its names and the
    predictions on a named CSV equal VQC.predict."""
    from qiskit.circuit.library import real_amplitudes, z_feature_map
    from qiskit_machine_learning.algorithms import VQC
    from qiskit_machine_learning.optimizers import COBYLA

    from qmltest.interop.qiskit_ml import from_qiskit_ml

    rng = np.random.default_rng(0)
    x = rng.uniform(0, np.pi, (24, 2))
    y = np.where(x[:, 0] > x[:, 1], "cat", "dog")
    vqc = VQC(feature_map=z_feature_map(2), ansatz=real_amplitudes(2, reps=1), optimizer=COBYLA(maxiter=15))
    vqc.fit(x, y)
    model = from_qiskit_ml(vqc)
    assert model.classes == ["cat", "dog"]
    model.save(tmp_path / "m")
    lines = ["a,b,animal"] + [f"{p!r},{q!r},{t}" for (p, q), t in zip(x.tolist(), y)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    report = _json(["evaluate", str(tmp_path / "m"), "--data", str(tmp_path / "d.csv"), "--exact"], tmp_path / "e.json")
    assert report["accuracy"] == pytest.approx(float(np.mean(vqc.predict(x) == y)))
    assert sorted(report["per_class"]) == ["cat", "dog"]


def test_kernel_objects_that_are_no_model_are_one_line() -> None:
    """A fitted QSVC imports (tests/test_kernels.py); an unfitted PegasosQSVC and a bare kernel
    are one line each, naming what is missing."""
    from qiskit.circuit.library import zz_feature_map
    from qiskit_machine_learning.algorithms import PegasosQSVC
    from qiskit_machine_learning.kernels import FidelityQuantumKernel

    from qmltest.interop.qiskit_ml import from_qiskit_ml

    kernel = FidelityQuantumKernel(feature_map=zz_feature_map(2))
    cases = ((PegasosQSVC(quantum_kernel=kernel), "not trained"), (kernel, "a quantum kernel alone is no model"))
    for obj, says in cases:
        with pytest.raises(InputError) as err:
            from_qiskit_ml(obj)
        text = str(err.value)
        assert says in text and "\n" not in text


def test_csv_first_row_rules(tmp_path) -> None:
    """A first row of data with a named label is data; a row of names is a header; a first row
    mixing numbers and text among the features is refused instead of silently dropped."""
    (tmp_path / "a.csv").write_text("0.5,1.0,cat\n0.25,2.0,dog\n")
    assert datasets.load(str(tmp_path / "a.csv")).y.tolist() == ["cat", "dog"]
    (tmp_path / "b.csv").write_text("f1,f2,label\n0.5,1.0,cat\n")
    assert datasets.load(str(tmp_path / "b.csv")).x.tolist() == [[0.5, 1.0]]
    (tmp_path / "c.csv").write_text("0.5,oops,0\n0.25,2.0,1\n")
    with pytest.raises(InputError, match="line 1 mixes numbers and text"):
        datasets.load(str(tmp_path / "c.csv"))
    (tmp_path / "d.csv").write_text("0.5,1.0,0\n0.25,2.0\n")
    with pytest.raises(InputError, match="line 2 has 2 fields"):
        datasets.load(str(tmp_path / "d.csv"))


def test_amplitude_encoding_is_scale_free_up_to_1e308() -> None:
    v = np.array([[3.0, 4.0, 0.0, 1.0]])
    assert np.allclose(amplitude_states(v * (1e308 / 4), 2), amplitude_states(v, 2), atol=1e-15)


def _qasm_with(tmp_path: Path, old: str, new: str) -> Path:
    folder = tmp_path / "q"
    shutil.copytree(MODEL, folder)
    text = (folder / "model.qasm").read_text()
    assert old in text
    text = text.replace(old, new, 1)
    (folder / "model.qasm").write_text(text)
    manifest = json.loads((folder / "model.json").read_text())
    import hashlib

    manifest["qasm_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    (folder / "model.json").write_text(json.dumps(manifest))
    return folder


@pytest.mark.parametrize("expr", ["1e308*x_000", "2*x_000+1e308", "x_000*1e7"])
def test_huge_numbers_in_a_qasm_feature_expression_are_refused(tmp_path, expr) -> None:
    folder = _qasm_with(tmp_path, "p(2*x_000)", f"p({expr})")
    for cmd in (["inspect", str(folder)], ["evaluate", str(folder), "--data", "iris"]):
        assert "number in its feature expression" in _refused(cmd)
    assert artifact.load(_qasm_with(tmp_path / "ok", "p(2*x_000)", "p(2*x_000+1e5)")).ir.num_qubits == 4


def test_1e308_in_data_is_refused_by_every_command_that_reads_data(tmp_path) -> None:
    x, y = datasets.select("iris", "test")
    x[0, 0] = 1e308
    np.savez(tmp_path / "big.npz", x=x, y=y)
    runner.invoke(app, ["profile", str(MODEL), "--data", "iris", "--out", str(tmp_path / "p.json"), "-q"])
    big, prof = str(tmp_path / "big.npz"), str(tmp_path / "p.json")
    for cmd in (
        ["evaluate", str(MODEL), "--data", big],
        ["profile", str(MODEL), "--data", big, "--out", str(tmp_path / "p2.json")],
        ["cover", str(MODEL), "--profile", prof, "--data", big],
        ["fuzz", str(MODEL), "--profile", prof, "--data", big, "--budget", "5"],
        _suite_build(big, tmp_path / "s.npz"),
        ["mutate", str(MODEL), "--suite", "qml", "--operators", "APC", "--test", big],
    ):
        assert "keep no significant digit" in _refused(cmd) or "NaN or infinite" in _refused(cmd), cmd


def _suite_build(data: str, out: Path) -> list[str]:
    return ["suite", "build", str(MODEL), "--data", data, "--kind", "ori", "--per-class", "3", "--out", str(out)]


def test_damaged_suites_are_refused_in_one_line(tmp_path) -> None:
    res = runner.invoke(app, _suite_build("iris", tmp_path / "s.npz"))
    assert res.exit_code == 0, res.output
    whole = (tmp_path / "s.npz").read_bytes()
    (tmp_path / "trunc.npz").write_bytes(whole[:700])
    z = dict(np.load(tmp_path / "s.npz"))
    np.savez(tmp_path / "empty.npz", **dict(z, x=np.zeros((0, 4)), y=np.zeros(0, int), source_index=np.zeros(0, int)))
    np.savez(tmp_path / "strsrc.npz", **dict(z, source_index=np.array(["a"] * len(z["y"]))))
    np.savez(tmp_path / "short.npz", **dict(z, source_index=z["source_index"][:2]))
    for name, says in (
        ("trunc", "not a readable NPZ file"),
        ("empty", "'x' must be a non-empty"),
        ("strsrc", "'source_index' must hold 9 integers"),
        ("short", "'source_index' must hold 9 integers"),
    ):
        assert says in _refused(["suite", "show", str(tmp_path / f"{name}.npz")]), name
    mutate = ["mutate", str(MODEL), "--suite", "qml", "--operators", "APC", "--test"]  # read as data: x and y
    assert "not a readable NPZ file" in _refused([*mutate, str(tmp_path / "trunc.npz")])
    assert "must be a non-empty" in _refused([*mutate, str(tmp_path / "empty.npz")])


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        (("mean_accuracy",), "abc", "is not of type 'number'"),
        (("killed_by",), "x", "is not of type 'array'"),
        (("votes", "p"), {"0": "z"}, "is not of type 'number'"),
        (("votes", "family"), "3", "is not of type 'integer'"),
        (("status",), 5, "is not of type 'string'"),
    ],
)
def test_a_results_record_with_wrong_field_types_is_refused_on_resume(tmp_path, path, value, says) -> None:
    """A damaged record is never used as evidence: resuming says which line and field, exit 2."""
    out = tmp_path / "run"
    args = ["mutate", str(MODEL), "--suite", "qml", "--operators", "APC", "--test", "iris", "--out", str(out), "-q"]
    assert runner.invoke(app, args).exit_code == 0
    lines = (out / "results.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    target = next(iter(rec["suites"].values()))
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    (out / "results.jsonl").write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    text = _refused(args)
    assert "results.jsonl: line 1: field 'suites." in text and says in text and "--force" in text
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0


def test_labels_outside_the_classes_are_one_line(named, tmp_path) -> None:
    (tmp_path / "rose.csv").write_text("5.1,3.5,1.4,0.2,rose\n")
    text = _refused(["evaluate", str(named["model"]), "--data", str(tmp_path / "rose.csv")])
    assert "no samples of the model's class(es)" in text and "'rose'" in text
    (tmp_path / "some.csv").write_text("5.1,3.5,1.4,0.2,rose\n5.1,3.5,1.4,0.2,setosa\n")
    import subprocess
    import sys

    cmd = [
        sys.executable,
        "-m",
        "qmltest_cli.main",
        "evaluate",
        str(named["model"]),
        "--data",
        str(tmp_path / "some.csv"),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [res.stderr.strip()]
    assert "--drop-unknown-labels" in res.stderr and "'rose'" in res.stderr
    res = subprocess.run([*cmd, "--drop-unknown-labels"], capture_output=True, text=True, check=False)
    assert res.returncode == 0 and res.stderr.strip().splitlines() == [res.stderr.strip()] and "left out" in res.stderr


def test_fuzz_failures_keep_the_class_names(named, tmp_path) -> None:
    """A fuzz run folder stores the classes beside the failures' class indices, and the HTML
    captions name them."""
    from qmltest.report.html.fuzz import _labels

    nm, data = str(named["model"]), str(named["root"] / "named.csv")
    runner.invoke(app, ["profile", nm, "--data", data, "--out", str(tmp_path / "p.json"), "-q"])
    args = ["fuzz", nm, "--profile", str(tmp_path / "p.json"), "--data", data, "--budget", "60", "--seed", "3"]
    res = runner.invoke(app, [*args, "--guide", "random", "--out", str(tmp_path / "run"), "-q"])
    assert res.exit_code == 0, res.output
    with np.load(tmp_path / "run" / "random-failures.npz") as z:
        assert z["classes"].tolist() == NAMES
        count = len(z["y"])
    captions = _labels(tmp_path / "run" / "random-failures.npz")
    assert count > 0 and len(captions) == count and all(c.startswith("true ") for c in captions.values())
    assert all(c.split(",")[0].removeprefix("true ") in NAMES for c in captions.values())
