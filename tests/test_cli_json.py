"""Machine output that parses: every `--json -` (and `--json` flag) is one JSON document alone on
stdout, and piped tables are not cut at 80 columns."""

from __future__ import annotations

import json

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
        ["inspect", model, "--json"],
        ["zoo", "list", "--json"],
        ["evaluate", model, "--data", "iris", "--json", "-"],
        ["diversity", "--model", model, "--data", "iris", "--per-class", "3", "--json", "-"],
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


def test_every_json_to_stdout_is_one_document_alone(iris_model, mutation_json) -> None:
    for argv in _commands(str(iris_model), mutation_json):
        res = runner.invoke(app, argv)
        assert res.exit_code == 0, (argv, res.output)
        doc = json.loads(res.stdout)  # fails on anything before or after the document
        assert isinstance(doc, dict), argv


def test_piped_tables_keep_their_columns(iris_model) -> None:
    """Into a pipe (not a terminal) a table is never cut to 80 columns with ellipses."""
    res = runner.invoke(app, ["inspect", str(iris_model)])
    assert res.exit_code == 0 and "…" not in res.stdout
