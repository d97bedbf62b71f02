"""Issue 61: output that says what happened. Each report names where it went; a gate gives its
verdict either way; bare `qmltest` is help, exit 0; option groups are named for people; a model's
repr is one line; a result's notebook view is a short styled table; `show` reads a report JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest import api

ROOT = Path(__file__).resolve().parents[1]
IRIS = ROOT / "data" / "models" / "zfm-ra-iris"
runner = CliRunner()


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "from qmltest_cli.main import run; run()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)


@pytest.mark.slow  # 14 s: four subprocess runs
def test_reports_say_where_they_went_and_gates_pass_aloud(tmp_path) -> None:
    prof = tmp_path / "p.json"
    assert _cli("profile", str(IRIS), "--data", "iris:train", "--per-class", "5", "--out", str(prof)).returncode == 0
    html = ["--html", str(tmp_path / "h"), "--fail-under", "tsc=1", "-q"]
    res = _cli("cover", str(IRIS), "--profile", str(prof), "--data", "iris:test", *html)
    assert res.returncode == 0, res.stderr
    lines = res.stderr.strip().splitlines()
    assert f"wrote HTML report: {tmp_path / 'h' / 'index.html'}" in lines
    assert any(line.startswith("coverage gate passed: tsc ") and ">= 1.00%" in line for line in lines)
    args = ["mutate", str(IRIS), "--test", "iris:test", "--suite", "qml", "--sample", "6", "--per-class", "3"]
    res = _cli(*args, "--csv", str(tmp_path / "m.csv"), "--fail-under", "1", "-q")
    assert res.returncode == 0, res.stderr
    assert f"wrote csv report: {tmp_path / 'm.csv'}" in res.stderr
    assert "mutation score gate passed (>= 1%)" in res.stderr
    res = _cli(*args, "--fail-under", "100", "--fail-under-lower", "-q")
    assert res.returncode == 1 and "below 100%" in res.stderr and "passed" not in res.stderr


def test_bare_qmltest_is_help_and_option_groups_are_named_for_people() -> None:
    script = Path(sys.executable).parent / "qmltest"  # the console script names itself in the usage line
    res = subprocess.run([str(script)], capture_output=True, text=True, check=False)
    assert res.returncode == 0 and res.stdout.startswith("Usage: qmltest") and "error" not in res.stderr
    assert "mutate" in res.stdout and res.stderr == ""
    text = runner.invoke(app, ["mutate", "--help"]).output
    assert "─ Ci ─" not in text and "CI: shards, cache, reruns" in text and "Killing: criterion" in text


def test_a_model_repr_is_one_line_and_results_show_short_tables() -> None:
    model = api.load(IRIS)
    assert repr(model) == f"<Model 'zfm_ra-iris012': 4 qubits, 41 gates, classes [0, 1, 2], from {IRIS}>"
    res = api.mutate(model, ["iris:test"], suite="qml", per_class=3, sample=8)
    page = res._repr_html_()
    assert page.count("<tr>") == 1 + len(res.data["operators"]) and "border-collapse" in page
    ev = api.evaluate(model, "iris:test", shots=None)
    lo, hi = ev.data["per_class"]["0"]["accuracy_interval"]
    assert f"[{lo:.4g}, {hi:.4g}]" in ev._repr_html_() and repr(hi) not in ev._repr_html_()


def test_show_reads_a_report_json(tmp_path) -> None:
    out = tmp_path / "run"
    args = ["mutate", str(IRIS), "--test", "iris:test", "--suite", "classic", "--sample", "4", "--per-class", "2"]
    res = runner.invoke(app, [*args, "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "report.json").read_text())
    mid = doc["mutants"][0]["id"]
    from_json = runner.invoke(app, ["show", str(out / "report.json"), mid[:8]])
    from_folder = runner.invoke(app, ["show", str(out), mid[:8]])
    assert from_json.exit_code == 0 and from_json.output == from_folder.output
    (tmp_path / "x.json").write_text("{}")
    bad = runner.invoke(app, ["show", str(tmp_path / "x.json"), "ab"])
    assert bad.exit_code == 2 and "not a mutation report" in bad.output


def test_a_failing_assertion_helper_hides_its_own_frame() -> None:
    from qmltest import testing

    with pytest.raises(AssertionError) as err:
        testing.assert_mutation_score(IRIS, "iris:test", at_least=1.01, suite="qml", per_class=2, sample=4)
    assert "mutation score" in str(err.value) and "<Model" not in str(err.value)
    assert err.traceback[-1].frame.f_locals.get("__tracebackhide__") is True


def test_github_annotations_name_the_line_a_survivor_changes() -> None:
    from qmltest.report import annotations

    model = api.load(IRIS)
    first = model.ir.gates[5].span.start_line
    result = {
        "mutants": [
            {"id": "a1", "operator": "APC", "site": "APC(5, 0)", "status": "survived", "touched": [5]},
            {"id": "b2", "operator": "DFC", "site": "DFC('x', 1)", "status": "survived", "touched": []},
            {"id": "c3", "operator": "APC", "site": "APC(6, 0)", "status": "killed", "touched": [6]},
        ]
    }
    lines = annotations.github(result, model, "models/m,1/model.qasm")
    assert lines[0].startswith(f"::warning file=models/m%2C1/model.qasm,line={first},title=surviving mutant a1::APC at")
    assert lines[1].startswith("::warning file=models/m%2C1/model.json,line=1,") and len(lines) == 2
    res = runner.invoke(app, ["mutate", str(IRIS), "--annotations", "gitlab"])
    assert res.exit_code == 2 and "--annotations must be one of github" in res.output


@pytest.mark.slow  # 7 s: a fuzz campaign in a subprocess
def test_the_fuzz_report_shows_failing_inputs_and_tsr_intervals(tmp_path) -> None:
    """Tabular data has no pictures: its failing inputs are listed beside their seeds, per guide,
    as many as the run folder's NPZ holds (up to 20 shown); the TSR bars carry 95% intervals."""
    import numpy as np

    prof = tmp_path / "p.json"
    assert _cli("profile", str(IRIS), "--data", "iris:train", "--per-class", "10", "--out", str(prof)).returncode == 0
    args = ["fuzz", str(IRIS), "--profile", str(prof), "--seeds", "iris:test", "--per-class", "5", "--budget", "60"]
    res = _cli(*args, "--seed", "1", "--out", str(tmp_path / "f"), "--html", str(tmp_path / "h"), "-q")
    assert res.returncode == 0, res.stderr
    page = (tmp_path / "h" / "index.html").read_text()
    doc = json.loads((tmp_path / "f" / "report.json").read_text())
    for guide, summary in doc["guides"].items():
        with np.load(tmp_path / "f" / f"{guide}-failures.npz") as z:
            count = len(z["x"])
        assert summary["failures"] == count
        if count:
            assert f"<h3>{guide}: {count} failing input(s)" in page
    assert any(s["failures"] for s in doc["guides"].values())
    assert "test success rate per guide (95% intervals)" in (tmp_path / "h" / "tsr-per-guide.svg").read_text()
