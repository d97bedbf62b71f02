"""Machine output that parses: every `--json -` (and `--json` flag) is one JSON document alone on
stdout, and piped tables are not cut at 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

runner = CliRunner()


@pytest.fixture(scope="module")
def mutation_json(iris_model, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("j") / "m.json"
    args = ["mutate", str(iris_model), "--suite", "qml", "--operators", "ALD", "--test", "iris:test"]
    res = runner.invoke(app, [*args, "--null-copies", "5", "--json", str(path), "--quiet"])
    assert res.exit_code == 0, res.output
    return str(path)


def _commands(model: str, mutation: str) -> list[list[str]]:
    return [
        ["inspect", model, "--json", "-"],
        ["zoo", "list", "--json", "-"],
        ["evaluate", model, "--data", "iris", "--json", "-"],
        ["diversity", model, "--data", "iris", "--per-class", "3", "--json", "-"],
        [
            "mutate",
            model,
            "--suite",
            "qml",
            "--operators",
            "ALD",
            "--test",
            "iris:test",
            "--null-copies",
            "5",
            "--json",
            "-",
        ],
        ["report", mutation, "--json", "-"],
        ["report", mutation, "--criterion", "majority-literal", "--json", "-"],
    ]


def _more_commands(model: str, tmp: Path) -> list[list[str]]:
    """cover, fuzz, diff and import too: every command with --json (issue 30)."""
    from qiskit import qasm3
    from qiskit.circuit.library import real_amplitudes, z_feature_map

    prof = tmp / "p.json"
    made = runner.invoke(app, ["profile", model, "--data", "iris", "--per-class", "10", "--out", str(prof), "-q"])
    assert made.exit_code == 0, made.output
    fm, an = z_feature_map(2), real_amplitudes(2, reps=1)
    (tmp / "c.qasm").write_text(qasm3.dumps(fm.compose(an).assign_parameters(dict(zip(an.parameters, [0.1] * 4)))))
    return [
        ["cover", model, "--profile", str(prof), "--data", "iris", "--json", "-"],
        ["fuzz", model, "--profile", str(prof), "--seeds", "iris", "--budget", "20", "--guide", "ksc", "--json", "-"],
        ["diff", model, "--data", "iris", "--target-b", "noise:configs/noise/depolarizing-1pct.toml", "--json", "-"],
        ["import", str(tmp / "c.qasm"), "--out", str(tmp / "imported"), "--classes", "0,1", "--json", "-"],
    ]


def test_every_json_to_stdout_is_one_document_alone(iris_model, mutation_json, tmp_path) -> None:
    for argv in _commands(str(iris_model), mutation_json) + _more_commands(str(iris_model), tmp_path):
        res = runner.invoke(app, argv)
        assert res.exit_code == 0, (argv, res.output)
        doc = json.loads(res.stdout)  # fails on anything before or after the document
        assert isinstance(doc, dict), argv


def test_piped_tables_keep_their_columns(iris_model) -> None:
    """Into a pipe (not a terminal) a table is never cut to 80 columns with ellipses."""
    res = runner.invoke(app, ["inspect", str(iris_model)])
    assert res.exit_code == 0 and "…" not in res.stdout


def test_junit_and_baseline_comparison(iris_model, tmp_path) -> None:
    """--junit: one testcase per scored mutant, survived = failure; report --against: per-suite
    scores of both runs with a p-value, and the mutants that survive now but were killed before."""
    from xml.etree import ElementTree as ET

    base = ["mutate", str(iris_model), "--suite", "qml", "--operators", "ALD,APC", "--null-copies", "5", "--quiet"]
    a = runner.invoke(
        app, [*base, "--test", "iris:test", "--json", str(tmp_path / "a.json"), "--junit", str(tmp_path / "a.xml")]
    )
    assert a.exit_code == 0, a.output
    report = json.loads((tmp_path / "a.json").read_text())
    root = ET.parse(tmp_path / "a.xml").getroot()
    cases = root.findall("./testsuite/testcase")
    survived = sum(m["status"] == "survived" for m in report["mutants"])
    scored = sum(m["status"] in ("killed", "survived", "undecided") for m in report["mutants"])
    assert root.tag == "testsuites" and len(cases) == scored == int(root.get("tests"))
    xmlschema = pytest.importorskip("xmlschema")
    xmlschema.XMLSchema(Path(__file__).parent / "fixtures" / "junit.xsd").validate(tmp_path / "a.xml")
    assert int(root.get("failures")) == survived == len(root.findall("./testsuite/testcase/failure"))
    b = runner.invoke(app, [*base, "--test", "iris:test", "--per-class", "3", "--json", str(tmp_path / "b.json")])
    assert b.exit_code == 0, b.output
    res = runner.invoke(app, ["report", str(tmp_path / "b.json"), "--against", str(tmp_path / "a.json"), "--json", "-"])
    assert res.exit_code == 0, res.output
    cmp = json.loads(res.stdout)["against"]
    s = cmp["suites"]["iris:test"]
    assert s["baseline_score"] == report["suites"]["iris:test"]["mutation_score"]
    assert 0 <= s["p_value"] <= 1 and cmp["mutants_shared"] > 0
    now = {m["id"]: m["status"] for m in json.loads((tmp_path / "b.json").read_text())["mutants"]}
    before = {m["id"]: m["status"] for m in report["mutants"]}
    expected = sorted(i for i in now if now[i] == "survived" and before.get(i) == "killed")
    assert sorted(m["id"] for m in cmp["newly_survived"]) == expected


def test_inspect_states_what_mutation_may_touch(iris_model) -> None:
    res = runner.invoke(app, ["inspect", str(iris_model), "--json", "-"])
    mutable = json.loads(res.stdout)["mutable"]
    assert set(mutable) == {"feature_map", "ansatz", "preprocessing", "readout"}
    assert "never its data angles" in mutable["feature_map"] and "DFC" in mutable["preprocessing"]


def test_evaluate_reports_accuracy_with_its_interval(iris_model) -> None:
    res = runner.invoke(app, ["evaluate", str(iris_model), "--data", "iris", "--exact", "--json", "-"])
    doc = json.loads(res.stdout)
    lo, hi = doc["accuracy_interval"]
    assert lo <= doc["accuracy"] <= hi and hi - lo > 0
    for row in doc["per_class"].values():
        assert row["accuracy_interval"][0] <= row["accuracy"] <= row["accuracy_interval"][1]


def test_stryker_mutants_carry_their_replacement_without_a_run_folder(tmp_path) -> None:
    """--stryker alone (no --out): every mutant has its mutated text; circuit mutants on the QASM3
    lines they change, DFC's preprocessing steps on model.json, the second file; the official schema."""
    import jsonschema

    from qmltest.report.stryker import replaced

    assert replaced("a\nb\nc\n", "a\nB\nc\n") == (
        {"start": {"line": 2, "column": 1}, "end": {"line": 2, "column": 2}},
        "B",
    )
    assert replaced("a\nb\n", "a\nnew\nb\n")[1] == "new\nb" and replaced("a\n", "a\n") is None
    model = Path(__file__).resolve().parents[1] / "data" / "models" / "zfm-ra-iris"
    args = ["mutate", str(model), "--suite", "qml", "--operators", "APGC,DFC", "--shots", "300", "--null-copies", "5"]
    res = runner.invoke(app, [*args, "--stryker", str(tmp_path / "s.json"), "--quiet"])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "s.json").read_text())
    schema = json.loads((Path(__file__).parent / "fixtures" / "stryker-report-schema.json").read_text())
    jsonschema.validate(doc, schema)
    files = {Path(k).name: f for k, f in doc["files"].items()}
    assert set(files) == {"model.qasm", "model.json"}
    assert {m["mutatorName"] for m in files["model.json"]["mutants"]} == {"DFC"}
    assert {m["mutatorName"] for m in files["model.qasm"]["mutants"]} == {"APGC"}
    lines = files["model.qasm"]["source"].splitlines()
    for m in files["model.qasm"]["mutants"]:
        old = lines[m["location"]["start"]["line"] - 1]
        assert m["replacement"] != old and m["replacement"].split("(")[0] in ("rx", "ry", "rz")
    assert all('"feature_change"' in m["replacement"] for m in files["model.json"]["mutants"])
