"""`qmltest mutate` end to end on a small model: seeded reports are byte-identical, the run folder
resumes without re-simulating, mutants are saved as loadable QASM3 artifacts; `qmltest shots`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.model import artifact

runner = CliRunner()

ARGS = [
    "--operators",
    "PSF,RGD",
    "--reference",
    "iris:train",
    "--reference-per-class",
    "20",
    "--test",
    "iris:test",
    "--repeats",
    "10",
    "--shots",
    "200",
    "--k-max",
    "3",
    "--batch",
    "4",
    "--seed",
    "2",
    "--quiet",
]


@pytest.fixture(scope="module")
def first_run(iris_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = runner.invoke(
        app,
        [
            "mutate",
            str(iris_model),
            *ARGS,
            "--out",
            str(out / "run"),
            "--json",
            str(out / "a.json"),
            "--csv",
            str(out / "a.csv"),
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def test_report_fields_and_saved_mutants(first_run) -> None:
    report = json.loads((first_run / "a.json").read_text())
    assert report["meta"]["format"] == "qmltest.mutation/3"
    assert set(report["generation"]["cells"]["all"]) == {"PSF", "RGD"}
    assert "iris:test" in report["suites"]
    suite = report["suites"]["iris:test"]
    assert 0.0 <= suite["null_control_kill_rate"] <= 1.0
    ids = {m["id"] for m in report["mutants"] if m["status"] in ("killed", "survived", "not-effective", "equivalent")}
    assert ids
    for mid in list(ids)[:3]:
        mutant = artifact.load(first_run / "run" / "mutants" / mid)
        assert mutant.manifest["qasm_sha256"]
    rows = (first_run / "a.csv").read_text().splitlines()
    assert rows[0].startswith("id,operator,cell,status,percentage") and len(rows) == len(report["mutants"]) + 1


def test_rerun_resumes_and_is_byte_identical(iris_model, first_run) -> None:
    log = first_run / "run" / "results.jsonl"
    lines_before = log.read_text().count("\n")
    result = runner.invoke(
        app, ["mutate", str(iris_model), *ARGS, "--out", str(first_run / "run"), "--json", str(first_run / "b.json")]
    )
    assert result.exit_code == 0, result.output
    assert (first_run / "a.json").read_bytes() == (first_run / "b.json").read_bytes()
    assert log.read_text().count("\n") == lines_before  # nothing was simulated again


def test_interrupted_log_line_is_redone(iris_model, first_run, tmp_path) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(first_run / "run", run)
    log = run / "results.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-3]) + "\n" + lines[-3][: len(lines[-3]) // 2])  # a torn write
    result = runner.invoke(
        app, ["mutate", str(iris_model), *ARGS, "--out", str(run), "--json", str(tmp_path / "c.json")]
    )
    assert result.exit_code == 0, result.output
    assert (first_run / "a.json").read_bytes() == (tmp_path / "c.json").read_bytes()


def test_shots_command() -> None:
    result = runner.invoke(app, ["shots", "--epsilon", "0.05", "--confidence", "0.95", "--outputs", "2"])
    assert result.exit_code == 0 and result.output.strip() == "877"
    assert runner.invoke(app, ["shots", "--epsilon", "2"]).exit_code == 2


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--operators", "XYZ"], "unknown operator"),
        (["--depth", "80-20%"], "depth range"),
        (["--gate-types", "bogus"], "unknown gate type"),
        (["--scan", "diagonal"], "--scan"),
    ],
)
def test_bad_mutate_arguments_exit_2(iris_model, extra, message) -> None:
    result = runner.invoke(app, ["mutate", str(iris_model), "--reference", "iris:train", *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output


@pytest.mark.slow
def test_lconf_suite_scores_above_hconf_on_shipped_qcl() -> None:
    """QuanForge Table 3 direction on the shipped MNIST 0/1 QCL model."""
    from qmltest import suites
    from qmltest.data import datasets
    from qmltest.data.labelled import Data
    from qmltest.mutation import pipeline
    from qmltest.zoo.catalog import MODELS_DIR

    model = artifact.load(MODELS_DIR / "qcl-mnist01")
    x, y = datasets.select("mnist", "train", model.classes, 50, 0)
    ref = Data.of("ref", model, x, y, keep_raw=False)
    xt, yt = datasets.select("mnist", "all", model.classes)
    data = []
    for kind in ("hconf", "lconf"):
        idx = suites.build(model, xt, yt, kind, 50, 0)
        data.append(Data.of(kind, model, xt[idx], yt[idx], keep_raw=False))
    opts = pipeline.Options(operators=("PF", "GR"), seed=1)
    res, _ = pipeline.run(model, data, opts, ref)
    scores = {k: v["mutation_score"] for k, v in res["suites"].items()}
    assert scores["lconf"] > scores["hconf"]
    assert np.isfinite(list(scores.values())).all()


def test_resumed_mutants_take_percentage_and_notes_from_their_draw(iris_model, first_run, tmp_path) -> None:
    """A logged record supplies a mutant's evaluation (a function of its id), not where it was
    drawn: on workers the first record of a mutant drawn twice can come from either draw, so a
    record's percentage must not reach the report. Records with a wrong percentage resume to the
    same report, without simulating anything again."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(first_run / "run", run)
    log = run / "results.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    changed = 0
    for rec in records:
        if "percentage" in rec:
            rec["percentage"], rec["notes"] = 0.123, ["from another draw"]
            changed += 1
    assert changed > 10
    log.write_text("".join(json.dumps(rec) + "\n" for rec in records))
    result = runner.invoke(
        app, ["mutate", str(iris_model), *ARGS, "--out", str(run), "--json", str(tmp_path / "d.json")]
    )
    assert result.exit_code == 0, result.output
    assert (first_run / "a.json").read_bytes() == (tmp_path / "d.json").read_bytes()
    assert log.read_text().count("\n") == len(records)  # nothing was simulated again


def test_sequential_run_gates_on_the_lower_bound_and_names_undecided(iris_model, tmp_path) -> None:
    """--sequential stores shots used and per-mutant decisions; --fail-under-lower gates on the 95%
    lower bound and names it; a budget too small for two predictions is one line, exit 2."""
    args = ["mutate", str(iris_model), "--suite", "qml", "--operators", "ALD,APC", "--test", "iris:test"]
    args += ["--shots", "100", "--sequential", "--null-copies", "40", "--seed", "1", "--quiet"]
    res = runner.invoke(app, [*args, "--json", str(tmp_path / "r.json"), "--fail-under", "50", "--fail-under-lower"])
    report = json.loads((tmp_path / "r.json").read_text())
    suite = report["suites"]["iris:test"]
    lo, hi = suite["mutation_score_interval"]
    assert lo <= suite["mutation_score"] <= hi
    assert suite["shots_used"] > 0 and suite["null_control"]["copies"] == 40
    assert all(m["status"] in ("killed", "survived", "undecided", "equivalent") for m in report["mutants"])
    assert res.exit_code == (1 if lo < 0.5 else 0), res.output
    if lo < 0.5:
        assert f"lower bound {100 * lo:.2f}%" in res.output and "below 50%" in res.output
    bad = runner.invoke(app, [*args, "--shots-budget", "150"])
    assert bad.exit_code == 2 and "--shots-budget must allow at least 2 predictions" in bad.output
    literal = runner.invoke(app, ["report", str(tmp_path / "r.json"), "--criterion", "majority-literal"])
    assert literal.exit_code == 0 and "identical copies killed" in literal.output


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--qubits", "1.5-2.5"], "whole qubits"),
        (["--lb", "0.9", "--ub", "0.1"], "--lb and --ub"),
        (["--alpha", "0"], "--alpha must lie in (0, 1)"),
        (["--effect", "-1"], "--effect"),
        (["--tau-rse", "-1"], "--tau-rse"),
        (["--scale", "nan"], "--scale"),
        (["--scale", "-1"], "--scale"),
        (["--scan", "depth=0-10"], "percent sign"),
        (["--operators", ","], "--operators names no operator"),
    ],
)
def test_option_values_are_checked_at_the_door(iris_model, extra, says) -> None:
    res = runner.invoke(app, ["mutate", str(iris_model), "--test", "iris:test", "--reference", "iris:train", *extra])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and says in lines[0]


def test_list_mutants_gives_the_ids_a_run_gives(iris_model, tmp_path) -> None:
    """`mutate --list-mutants`: every mutant's id, operator and site, without simulating; the
    same ids as the run's report."""
    base = ["mutate", str(iris_model), "--suite", "qml", "--operators", "ALD,LS", "--test", "iris:test"]
    listed = runner.invoke(app, [*base, "--list-mutants", "--json", "-"])
    assert listed.exit_code == 0, listed.output
    doc = json.loads(listed.stdout)
    assert sum(doc["counts"].values()) == len(doc["mutants"]) > 0
    run = runner.invoke(app, [*base, "--exact", "--null-copies", "3", "--json", str(tmp_path / "r.json"), "--quiet"])
    assert run.exit_code == 0, run.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert [(m["id"], m["site"]) for m in doc["mutants"]] == [(m["id"], m["site"]) for m in report["mutants"]]
