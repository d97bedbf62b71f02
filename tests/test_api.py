"""The Python API (issue 46): each command's call gives the report its CLI writes, byte for byte;
typed results read the right figures; bad arguments are one InputError; the CLI is thin."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest import api
from qmltest.errors import InputError

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
QCL = str(ROOT / "data" / "models" / "qcl-mnist01")


def cli_json(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "cli.json"
    res = runner.invoke(app, [*args, "--json", str(out), "-q"])
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


def same(a: dict, b: dict, drop: tuple[str, ...] = ()) -> None:
    """Equal reports, but for the recorded command line (the CLI records its argv; Python none)."""
    for doc in (a, b):
        meta = doc.get("meta")
        if isinstance(meta, dict):
            meta.pop("command", None)
        for key in drop:
            doc.pop(key, None)
    assert a == b


def test_evaluate_matches_the_cli(tmp_path) -> None:
    got = api.evaluate(QCL, "mnist:test", per_class=20, shots=200, seed=3)
    same(
        cli_json(
            tmp_path, "evaluate", QCL, "--data", "mnist:test", "--per-class", "20", "--shots", "200", "--seed", "3"
        ),
        got.data,
    )
    assert got.accuracy == got["accuracy"] and got.interval[0] <= got.accuracy <= got.interval[1]
    assert sum(r["samples"] for r in got.rows()) == got["samples"] == 40


def test_profile_cover_and_fuzz_match_the_cli(tmp_path) -> None:
    prof_cli = tmp_path / "p.json"
    res = runner.invoke(app, ["profile", QCL, "--per-class", "20", "--out", str(prof_cli), "-q"])
    assert res.exit_code == 0, res.output
    prof = api.profile(QCL, per_class=20)
    assert json.loads(prof_cli.read_text()) == json.loads(prof.to_json())
    cov = api.cover(QCL, prof, "mnist:test", per_class=15, k=20)
    cli = cli_json(
        tmp_path, "cover", QCL, "--profile", str(prof_cli), "--data", "mnist:test", "--per-class", "15", "--k", "20"
    )
    assert cli["meta"].pop("profile") == str(prof_cli) and cov.data["meta"].pop("profile") == "<profile>"
    same(cli, cov.data)
    assert set(cov.totals) >= {"ksc", "scc", "tsc"} and all(0 <= v <= 1 for v in cov.totals.values())
    fz = api.fuzz(QCL, prof_cli, "mnist:test", per_class=4, guide="ksc", budget=30, seed=1)
    same(cli_json(tmp_path, "fuzz", QCL, "--profile", str(prof_cli), "--seeds", "mnist:test", "--per-class", "4",
                  "--guide", "ksc", "--budget", "30", "--seed", "1"), fz.data)  # fmt: skip
    assert fz.rows()[0]["guide"] == "ksc" and fz.rows()[0]["iterations"] == 30


def test_mutate_matches_the_cli_and_reads_its_figures(tmp_path) -> None:
    got = api.mutate(QCL, ["mnist:test"], suite="qml", per_class=20, sample=30, seed=2)
    cli = cli_json(tmp_path, "mutate", QCL, "--suite", "qml", "--test", "mnist:test", "--per-class", "20",
                   "--sample", "30", "--seed", "2")  # fmt: skip
    same(cli, got.data)
    assert got.score == got["mutation_score"] and got.interval == got["sampling"]["interval"]
    assert {m["id"] for m in got.survivors} == {m["id"] for m in got["mutants"] if m["status"] == "survived"}
    frame = got.to_frame()
    assert len(frame) == len(got["mutants"]) and list(frame.columns) == ["id", "operator", "site", "status"]
    html = got._repr_html_()
    assert "<table" in html and "mutation score" in html and got["mutants"][0]["operator"] in html  # per operator
    listing = api.list_mutants(QCL, suite="qml")
    res = runner.invoke(app, ["mutate", QCL, "--suite", "qml", "--list", "--json", "-"])
    assert json.loads(res.stdout) == listing and sum(listing["counts"].values()) > 0


def test_diff_matches_the_cli(tmp_path) -> None:
    got = api.diff(QCL, None, "mnist:test", per_class=10, target_b="noise:configs/noise/depolarizing-1pct.toml")
    cli = cli_json(
        tmp_path,
        "diff",
        QCL,
        "--data",
        "mnist:test",
        "--per-class",
        "10",
        "--target-b",
        "noise:configs/noise/depolarizing-1pct.toml",
    )
    same(cli, got.data)
    assert got["inputs"] == 20 and 0 <= got["disagree"] <= 20


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: api.evaluate(QCL, shots=0), "--shots must be between 1 and 1e+08, got 0"),
        (lambda: api.mutate(QCL, suite="qml", repeats=1), "--repeats must be between 2 and 10000, got 1"),
        (lambda: api.mutate(QCL, suite="nope"), "unknown operator suite 'nope'"),
        (lambda: api.cover(QCL, "missing.json", k=0), "--k must be between 1 and 100000, got 0"),
        (lambda: api.diff(QCL), "one model needs two different targets"),
    ],
)
def test_bad_arguments_are_one_input_error(call, message) -> None:
    with pytest.raises(InputError, match=message.replace("+", r"\+").replace("(", r"\(")):
        call()


def test_the_cli_is_thin() -> None:
    """`--workers` declared once in cli/; `mutate` under 80 lines; no command checks a range itself."""
    found = subprocess.run(["grep", "-rc", '"--workers"', str(ROOT / "cli")], capture_output=True, text=True).stdout
    assert sum(int(line.rsplit(":", 1)[1]) for line in found.splitlines()) == 1
    tree = ast.parse((ROOT / "cli" / "mutate_cmd.py").read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "mutate")
    assert fn.end_lineno - fn.lineno + 1 < 80
    for name in ("evaluate", "profile", "cover", "mutate", "fuzz", "diff"):
        path = ROOT / "cli" / f"{name}_cmd.py"
        text = path.read_text()
        assert text.count("check_range(") <= 1, path.name  # the CLI's own gates (--fail-under/--fail-over) only
    assert set(api.__all__) >= {"load", "evaluate", "profile", "cover", "mutate", "fuzz", "diff"}


def test_the_example_notebook_runs(tmp_path) -> None:
    """docs/examples/quickstart.ipynb executed as a test (nbmake), its assertions included."""
    pytest.importorskip("nbmake")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbmake", str(ROOT / "docs" / "examples")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


def test_cover_takes_its_tests_as_mutate_does(tmp_path) -> None:
    """`cover(model, tests, profile=...)` (a spec or a list: one part each) and the older
    `cover(model, profile, data)` give the same totals; data given twice is one line."""
    prof = api.profile(QCL, "mnist:train", per_class=10)
    old = api.cover(QCL, prof, "mnist:test", per_class=5, k=20)
    new = api.cover(QCL, ["mnist:test"], profile=prof, per_class=5, k=20)
    assert new.data["totals"] == old.data["totals"]
    two = api.cover(QCL, ["mnist:test", "mnist:train"], profile=prof, per_class=5, k=20)
    assert [p["name"] if isinstance(p, dict) else p for p in two.timing["parts"]] == ["mnist:test", "mnist:train"]
    with pytest.raises(InputError, match="give the test data once"):
        api.cover(QCL, "mnist:test", "mnist:train", profile=prof)
