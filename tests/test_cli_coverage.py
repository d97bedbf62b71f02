"""CLI: profile -> cover -> diversity on a small model; --fail-under exits 1; foreign profiles refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

runner = CliRunner()


def _profile(iris_model, tmp_path) -> str:
    path = tmp_path / "p.json"
    result = runner.invoke(app, ["profile", str(iris_model), "--data", "iris", "--per-class", "20", "--out", str(path)])
    assert result.exit_code == 0, result.output
    return str(path)


def test_profile_cover_json_csv_and_determinism(iris_model, tmp_path) -> None:
    prof = _profile(iris_model, tmp_path)
    data = json.loads(open(prof).read())
    assert data["num_samples"] == 60 and data["num_states"] == 16
    args = ["cover", str(iris_model), "--profile", prof, "--data", "iris", "--k", "10", "--shots", "500", "--seed", "4"]
    for name in ("a", "b"):
        result = runner.invoke(app, args + ["--json", str(tmp_path / f"{name}.json"), "--csv", str(tmp_path / "s.csv")])
        assert result.exit_code == 0, result.output
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    report = json.loads((tmp_path / "a.json").read_text())
    assert report["meta"]["format"] == "qmltest.coverage/1"
    assert set(report["totals"]) == {"ksc", "scc", "tsc"}
    assert all(0 <= v <= 1 for v in report["totals"].values())
    assert len((tmp_path / "s.csv").read_text().splitlines()) == 17


def test_cover_on_profiling_data_exact_has_zero_scc(iris_model, tmp_path) -> None:
    prof = _profile(iris_model, tmp_path)
    args = ["cover", str(iris_model), "--profile", prof, "--data", "iris", "--split", "train", "--per-class", "20"]
    result = runner.invoke(app, args + ["--json", "-"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["totals"]["scc"] == 0.0


def test_fail_under_exits_1_and_passes_when_met(iris_model, tmp_path) -> None:
    prof = _profile(iris_model, tmp_path)
    base = ["cover", str(iris_model), "--profile", prof, "--data", "iris", "--quiet"]
    assert runner.invoke(app, base + ["--fail-under", "ksc=100"]).exit_code == 1
    assert runner.invoke(app, base + ["--fail-under", "tsc=0"]).exit_code == 0
    assert runner.invoke(app, base + ["--fail-under", "nope=3"]).exit_code == 2


def test_profile_for_another_model_refused(iris_model, tmp_path) -> None:
    prof = tmp_path / "p.json"
    data = json.loads(open(_profile(iris_model, tmp_path)).read())
    data["model_sha256"] = "0" * 64
    prof.write_text(json.dumps(data))
    result = runner.invoke(app, ["cover", str(iris_model), "--profile", str(prof), "--data", "iris"])
    assert result.exit_code == 2 and "another model" in result.output


def test_suite_parts_and_shots_sweep(iris_model, tmp_path) -> None:
    prof = _profile(iris_model, tmp_path)
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "noise.npz", x=rng.uniform(0, 8, (10, 4)), y=np.zeros(10, int))
    args = ["cover", str(iris_model), "--profile", prof, "--data", "iris", "--suite", str(tmp_path / "noise.npz")]
    result = runner.invoke(app, args + ["--shots-sweep", "100,1000", "--json", "-"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [p["part"] for p in report["parts"]] == ["iris:test", "noise.npz"]
    assert [row["shots"] for row in report["shots_sweep"]] == ["exact", 100, 1000]


def test_diversity_command(iris_model) -> None:
    result = runner.invoke(app, ["diversity", str(iris_model), "--data", "iris", "--json", "-"])
    assert result.exit_code == 0, result.output
    assert 0.0 <= json.loads(result.output)["js_divergence"] <= 1.0


def test_fuzz_fail_under_states_the_value_and_the_bar(iris_model, tmp_path) -> None:
    """fuzz --fail-under uses cover's scale (percent per criterion) and names what it measured."""
    prof = _profile(iris_model, tmp_path)
    base = ["fuzz", str(iris_model), "--profile", prof, "--seeds", "iris", "--per-class", "30", "--budget", "30"]
    base += ["--guide", "ksc", "--json", str(tmp_path / "f.json")]
    res = runner.invoke(app, base + ["--fail-under", "ksc=100"])
    assert res.exit_code == 1, res.output
    measured = json.loads((tmp_path / "f.json").read_text())["guides"]["ksc"]["final_coverage"]["ksc"]
    assert f"ksc: ksc {100 * measured:.2f}% < 100.00%" in res.output
    assert runner.invoke(app, base + ["--fail-under", "ksc=0"]).exit_code == 0
    assert runner.invoke(app, base + ["--fail-under", "ksc=abc"]).exit_code == 2


def test_cover_junit_has_a_case_per_criterion_and_fails_the_gated_one(iris_model, tmp_path) -> None:
    from xml.etree import ElementTree as ET

    prof = _profile(iris_model, tmp_path)
    args = ["cover", str(iris_model), "--profile", prof, "--data", "iris", "--quiet"]
    args += ["--json", str(tmp_path / "c.json")]
    res = runner.invoke(app, [*args, "--junit", str(tmp_path / "c.xml"), "--fail-under", "ksc=100"])
    assert res.exit_code == 1
    ksc = json.loads((tmp_path / "c.json").read_text())["totals"]["ksc"]
    root = ET.parse(tmp_path / "c.xml").getroot()
    cases = {c.get("name"): c for c in root.findall("./testsuite/testcase")}  # names without values: stable
    assert set(cases) == {"ksc", "scc", "tsc"} and root.get("tests") == "3" and root.get("failures") == "1"
    assert cases["ksc"].find("system-out").text == f"ksc {100 * ksc:.2f}%"
    assert cases["ksc"].find("failure").text == f"ksc {100 * ksc:.2f}% < 100.00%"
    assert cases["tsc"].find("failure") is None
    xmlschema = pytest.importorskip("xmlschema")
    xmlschema.XMLSchema(Path(__file__).parent / "fixtures" / "junit.xsd").validate(tmp_path / "c.xml")
