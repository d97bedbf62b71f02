"""One simulator seam: every command that simulates takes --backend; auto picks by the measured
crossover; the choice reaches the mutation evaluator and its report; numpy and Aer agree to 1e-9."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest import artifact
from qmltest.errors import InputError
from qmltest.mutation.evaluate import Evaluator
from qmltest.simulate import backend

runner = CliRunner()


def test_auto_follows_the_crossover_and_using_sets_the_process_choice() -> None:
    assert backend.resolve("auto", backend.CROSSOVER) == "numpy"
    assert backend.resolve("auto", backend.CROSSOVER + 1) == "aer"
    assert backend.resolve("aer", 4) == "aer" and backend.resolve(None, 20) == "aer"
    with backend.using("numpy"):
        assert backend.resolve(None, 20) == "numpy" and os.environ[backend.ENV] == "numpy"
    assert backend.current() == "auto" and backend.ENV not in os.environ
    with pytest.raises(InputError, match="unknown backend"):
        backend.resolve("gpu0", 4)


@pytest.mark.parametrize("command", ["evaluate", "profile", "cover", "fuzz", "mutate", "suite build", "suite attack"])
def test_every_simulating_command_takes_backend(command) -> None:
    res = runner.invoke(app, [*command.split(), "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "--backend" in res.output


def test_mutation_records_and_uses_the_backend(iris_model, tmp_path) -> None:
    """The evaluator runs on the chosen backend (Aer: no prefix reuse) and the report names it; the
    probabilities equal numpy's to 1e-9, so exact runs give the same verdicts."""
    model = artifact.load(iris_model)
    x = np.random.default_rng(0).uniform(0, 1, (10, 4))
    from qmltest.mutation.evaluate import Data

    data = Data("d", model.encode(x), np.zeros(10, int), x)
    a = Evaluator(model, 5, None, 0, backend="aer")
    b = Evaluator(model, 5, None, 0, backend="numpy")
    assert a.backend == "aer" and b.backend == "numpy"
    assert np.max(np.abs(a.original_probs(data) - b.original_probs(data))) < 1e-9
    reports = {}
    for name in ("numpy", "aer"):
        args = ["mutate", str(iris_model), "--suite", "qml", "--operators", "ALD", "--test", "iris:test", "--exact"]
        args += ["--null-copies", "5", "--backend", name, "--json", str(tmp_path / f"{name}.json"), "--quiet"]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        reports[name] = json.loads((tmp_path / f"{name}.json").read_text())
        assert reports[name]["meta"]["backend"] == name
    assert [m["status"] for m in reports["numpy"]["mutants"]] == [m["status"] for m in reports["aer"]["mutants"]]
