"""CLI: exit codes (0 ok, 2 bad input, never a traceback), JSON output, inspect/evaluate on a model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.model import artifact
from qmltest.simulate.runner import model_probabilities

runner = CliRunner()


def test_help_lists_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for cmd in ("zoo", "train", "inspect", "evaluate"):
        assert cmd in result.output


def test_inspect_json(iris_model) -> None:
    result = runner.invoke(app, ["inspect", str(iris_model), "--json", "-"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["num_qubits"] == 4 and info["classes"] == [0, 1, 2]
    assert [layer["kind"] for layer in info["layers"]] == ["feature_map", "ansatz"]
    assert info["readout"]["map"] == [s % 3 for s in range(16)]


def test_evaluate_exact_matches_library_and_shots_are_seeded(iris_model, tmp_path) -> None:
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    for out in (out1, out2):
        result = runner.invoke(app, ["evaluate", str(iris_model), "--data", "iris", "--seed", "3", "--json", str(out)])
        assert result.exit_code == 0, result.output
    assert out1.read_bytes() == out2.read_bytes()
    exact = runner.invoke(app, ["evaluate", str(iris_model), "--data", "iris", "--exact", "--json", "-"])
    report = json.loads(exact.output)
    model = artifact.load(iris_model)
    from qmltest.data import datasets

    x, y = datasets.select("iris", "test", [0, 1, 2])
    acc = float(np.mean(model.predict(model_probabilities(model, x)) == y))
    assert report["accuracy"] == pytest.approx(acc)
    assert report["samples"] == 30


@pytest.mark.parametrize(
    "args, message",
    [
        (["inspect", "does/not/exist"], "no such file"),
        (["evaluate", "MODEL", "--data", "wine"], "wrong feature count"),
        (["evaluate", "MODEL", "--data", "digits"], "wrong feature count"),
        (["evaluate", "MODEL", "--data", "nope.npz"], "no such file"),
        (["evaluate", "MODEL", "--data", "iris", "--backend", "tpu"], "unknown backend"),
        (["train", "--arch", "nope", "--dataset", "iris", "--classes", "0,1", "--out", "x"], "unknown architecture"),
        (["suite", "build", "MODEL", "--kind", "ori", "--per-class", "-2", "--out", "x.npz"], "--per-class must be"),
        (["suite", "build", "MODEL", "--kind", "ori", "--per-class", "0", "--out", "x.npz"], "--per-class must be"),
        (["suite", "attack", "MODEL", "--data", "iris", "--epsilon", "-1", "--out", "x.npz"], "--epsilon must be"),
        (["suite", "attack", "MODEL", "--data", "iris", "--shots", "0", "--out", "x.npz"], "--shots must be"),
        (["fuzz", "MODEL", "--profile", "p.json", "--top-k", "0"], "--top-k must be"),
        (["evaluate", "MODEL", "--data", "TRUNC"], "not a readable NPZ file"),
        (["evaluate", "MODEL", "--data", "iris", "--noise", "SEED"], "'noise.seed': -1 is less than the minimum"),
        (["evaluate", "MODEL", "--data", "iris", "--noise", "LOOP"], "couples a qubit to itself"),
        (["inspect", "QDIR"], "is a directory, not an OpenQASM 3 file"),
        (["noise", "show", "NOPE"], "'FakeNope' is not a device of qiskit_ibm_runtime.fake_provider"),
        (["shots", "--epsilon", "1e-300"], "--epsilon must be in [1e-06, 1)"),
        (["evaluate", "MODEL", "--data", "CTL"], "nope\\x1b[31m.csv: no such file"),
    ],
)
def test_bad_input_exit_2_one_line(iris_model, args, message, tmp_path) -> None:
    """Each bad value is refused before any work: exit 2 and one line on stderr naming it."""
    np.savez(tmp_path / "t.npz", x=np.zeros((10, 4)), y=np.zeros(10, int))
    whole = (tmp_path / "t.npz").read_bytes()
    (tmp_path / "trunc.npz").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "seed.toml").write_text('[noise]\nname = "x"\nseed = -1\n[depolarizing]\np1 = 0.01\n')
    loop = '[noise]\nname = "x"\n[crosstalk]\nzz_angle = 0.05\npauli_p = 0.005\ncoupling = [[0, 0], [1, 2]]\n'
    (tmp_path / "loop.toml").write_text(loop)
    (tmp_path / "qdir" / "model.qasm").mkdir(parents=True)
    (tmp_path / "qdir" / "model.json").write_text((iris_model / "model.json").read_text())
    names = {"MODEL": str(iris_model), "TRUNC": str(tmp_path / "trunc.npz"), "SEED": str(tmp_path / "seed.toml")}
    (tmp_path / "nope.toml").write_text('[noise]\nname = "x"\n[backend]\nfake = "FakeNope"\n')
    names.update(LOOP=str(tmp_path / "loop.toml"), QDIR=str(tmp_path / "qdir"), NOPE=str(tmp_path / "nope.toml"))
    names["CTL"] = "nope\x1b[31m.csv"  # a control byte is echoed escaped, never raw
    result = runner.invoke(app, [names.get(a, a) for a in args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1


def test_nan_and_wrong_width_data_exit_2(iris_model, tmp_path) -> None:
    np.savez(tmp_path / "nan.npz", x=np.array([[1.0, np.nan, 1.0, 1.0]]), y=np.array([0]))
    np.savez(tmp_path / "wide.npz", x=np.ones((2, 5)), y=np.array([0, 1]))
    for name, message in (("nan.npz", "NaN"), ("wide.npz", "wrong feature count")):
        result = runner.invoke(app, ["evaluate", str(iris_model), "--data", str(tmp_path / name), "--split", "all"])
        assert result.exit_code == 2, result.output
        assert message in result.output


def test_malformed_qasm_exit_2(tmp_path) -> None:
    bad = tmp_path / "bad.qasm"
    bad.write_text("OPENQASM 3.0;\nqubit[1] q;\nh q[0]\n")
    result = runner.invoke(app, ["inspect", str(bad)])
    assert result.exit_code == 2 and f"{bad}:4:1: missing ';'" in result.output  # file:line:column
    assert len(result.stderr.strip().splitlines()) == 1


def test_train_small_model(tmp_path) -> None:
    out = tmp_path / "m"
    args = ["train", "--arch", "zfm_ra", "--dataset", "iris", "--classes", "0,1", "--out", str(out)]
    result = runner.invoke(app, args + ["--maxiter", "15", "--per-class", "20", "--quiet"])
    assert result.exit_code == 0, result.output
    model = artifact.load(out)
    assert model.manifest["training"]["train_samples"] == 40
    assert model.manifest["training"]["test_accuracy"] >= 0.5


def test_rows_whose_labels_are_not_classes_refuse_or_drop_in_one_line(iris_model, tmp_path) -> None:
    """30 rows, 5 labelled 7 for a 3-class model: refused in one line naming the option (exit 2);
    with --drop-unknown-labels 25 are evaluated and the CLI says so in one warning line."""
    import subprocess
    import sys

    x = np.random.default_rng(0).uniform(0, 1, (30, 4))
    y = np.r_[np.zeros(10), np.ones(10), 2 * np.ones(5), 7 * np.ones(5)]
    np.savetxt(tmp_path / "lab.csv", np.c_[x, y], delimiter=",")
    code = "from qmltest_cli.main import run; run()"
    args = ["evaluate", str(iris_model), "--data", str(tmp_path / "lab.csv"), "--exact", "--json", "-"]
    what = str(tmp_path / "lab.csv") + ": 5 of 30 rows have labels [7] that are not classes of the model ([0, 1, 2])"
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [f"error: {what}: give --drop-unknown-labels to leave them out"]
    args.append("--drop-unknown-labels")
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["samples"] == 25
    assert res.stderr.strip().splitlines() == [f"warning: {what}: left out"]


def test_every_simulating_command_reads_its_own_table_of_the_run_config(iris_model, tmp_path, monkeypatch) -> None:
    """[evaluate] and [profile] in ./qmltest.toml fill unset options; a flag wins; a wrong key in
    [fuzz] is refused naming it (a [fuzz] table was silently ignored before)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qmltest.toml").write_text("[evaluate]\nexact = true\nper-class = 2\n[fuzz]\nbudgte = 3\n")
    res = runner.invoke(app, ["evaluate", str(iris_model), "--data", "iris", "--json", "-"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["exact"] and doc["samples"] == 6
    flag = runner.invoke(app, ["evaluate", str(iris_model), "--data", "iris", "--per-class", "3", "--json", "-"])
    assert json.loads(flag.stdout)["samples"] == 9
    bad = runner.invoke(app, ["fuzz", str(iris_model), "--profile", "p.json"])
    assert bad.exit_code == 2 and "unknown key 'budgte' in [fuzz]" in bad.output


def test_data_specs_are_never_rendered_as_emoji() -> None:
    """rich turned 'iris:train:' into a tram emoji in titles and lines; qmltest's consoles print text."""
    from qmltest_cli.common import err, out

    for console in (out, err):
        with console.capture() as cap:
            console.print("iris:train: plain mutation score", markup=False)
        assert cap.get().strip() == "iris:train: plain mutation score"


def test_help_keeps_its_bracketed_words() -> None:
    """Issue 61: Rich read '[evaluate]' and 'qmltest[gpu]' as markup tags and dropped them from
    --help ('Run config TOML ( table; ...'); they are escaped now."""
    res = runner.invoke(app, ["evaluate", "--help"])
    text = " ".join(w for w in res.output.split() if w != "│")  # the panel's borders out
    assert "([evaluate] table; [tool.qmltest.evaluate] in pyproject.toml)" in text
    assert "needs qmltest[gpu] and a CUDA device" in text
