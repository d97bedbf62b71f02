"""Shot budgets spent sequentially (qmltest.util.budget): decided predictions are the exact ones, a tie is
almost never decided (alpha), the budget is never exceeded, and ibm: targets run the same rounds
through qiskit-ibm-runtime's local testing mode (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.data import datasets
from qmltest.errors import InputError
from qmltest.model import artifact, readout
from qmltest.simulate import engine
from qmltest.simulate.runner import model_probabilities
from qmltest.util import budget

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
runner = CliRunner()


def _draws(probs: np.ndarray, seed: int):
    rng = np.random.default_rng(seed)
    return lambda idx, per: engine.sample_counts(probs[idx], per, rng)


def test_decided_predictions_are_the_exact_ones_and_the_budget_holds() -> None:
    model = artifact.load(MODELS / "zfm-ra-iris")
    x, _ = datasets.select("iris", "all", model.classes, None, 0)
    probs = model_probabilities(model, x)
    exact = model.predict(probs)
    for seed, cap in [(0, 10**6), (1, 10**6), (2, 4000)]:
        out = budget.predict(_draws(probs, seed), len(x), model.readout_matrix, cap)
        assert out.shots.sum() <= cap and out.counts.sum() == out.shots.sum()
        assert np.array_equal(out.predictions[out.decided], exact[out.decided])
        if cap == 10**6:  # a large budget decides all but the near-ties; most inputs need few shots
            scores = probs @ model.readout_matrix
            gap = np.sort(scores, axis=1)[:, -1] - np.sort(scores, axis=1)[:, -2]
            assert np.all(out.decided[gap > 0.1]) and np.median(out.shots) <= 500 < cap / len(x)
    small = budget.predict(_draws(probs, 3), len(x), model.readout_matrix, 2 * len(x))
    assert small.rounds == 1 and small.shots.tolist() == [2] * len(x) and not small.decided.any()


def test_a_tie_is_decided_at_most_alpha_of_the_time() -> None:
    """Two classes with probability 1/2 each: any decision is an error. Over 200 runs of 20 inputs
    the family-wise error (a run deciding any input) stays within Binomial(200, 0.05)'s 99.9% bound."""
    matrix = readout.class_matrix([0, 1], 2)
    probs = np.full((20, 2), 0.5)
    wrong = sum(budget.predict(_draws(probs, s), 20, matrix, 200_000).decided.any() for s in range(200))
    assert wrong <= 22


def test_observables_in_two_bases_and_bad_budgets() -> None:
    """Per-shot differences of an expectation readout are bounded too; the counts have G blocks."""
    matrix = readout.expectation_matrix(["XZ", "ZZ"], [0, 1])
    probs = np.array([[0.5, 0, 0, 0, 0.2, 0.1, 0.1, 0.1], [0.1, 0.1, 0.2, 0.1, 0.25, 0, 0, 0.25]])
    out = budget.predict(_draws(probs, 0), 2, matrix, 10**6, bases=2)
    assert out.decided.all() and out.predictions.tolist() == np.argmax(probs @ matrix, axis=1).tolist()
    with pytest.raises(InputError, match="less than one shot per input and basis"):
        budget.predict(_draws(probs, 0), 2, matrix, 3, bases=2)


def test_evaluate_with_a_shots_budget_on_the_ideal_target() -> None:
    args = ["evaluate", str(MODELS / "zfm-ra-iris"), "--shots-budget", "20000", "--json", "-"]
    rep = json.loads(runner.invoke(app, args).stdout)
    seq = rep["sequential"]
    assert seq["shots_spent"] <= 20000 and seq["decided"] + seq["undecided"] == rep["samples"]
    exact = json.loads(runner.invoke(app, args[:2] + ["--exact", "--json", "-"]).stdout)
    assert (
        rep["shots"] is None and not rep["exact"] and abs(rep["accuracy"] - exact["accuracy"]) <= seq["undecided"] / 30
    )
    res = runner.invoke(app, args[:2] + ["--exact", "--shots-budget", "10"])
    assert res.exit_code == 2 and "exclude each other" in res.output


def test_ibm_fake_device_runs_the_runtime_code_in_local_testing_mode(monkeypatch, tmp_path) -> None:
    """ibm:fake_manila: one job per round through Runtime's sampler on the fake device; decided
    predictions equal the argmax of the fake:FakeManilaV2 target's exact noisy probabilities."""
    pytest.importorskip("qiskit_ibm_runtime")
    from qmltest import targets

    model = MODELS / "zfm-ra-iris"
    args = ["evaluate", str(model), "--target", "ibm:fake_manila", "--shots-budget", "60000", "--json", "-"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    dev, seq = rep["device"], rep["sequential"]
    assert dev["device"] == "fake_manila" and dev["runtime"] == "local testing mode" and len(dev["layout"]) == 4
    assert rep["backend"] == "ibm" and seq["shots_spent"] <= 60000 and seq["decided"] >= 25
    m = artifact.load(model)
    x, _ = datasets.select("iris", "test", m.classes, None, 0)
    from qmltest.simulate import runtime
    from qmltest.util import budget as b

    enc, seeds = m.encode(x), iter(range(b.MAX_ROUNDS))
    out = b.predict(
        lambda i, per: runtime.counts(m, enc[i], "fake_manila", per, next(seeds)), len(x), m.readout_matrix, 60000
    )
    noisy = m.predict(model_probabilities(m, x, noise=targets.parse("fake:FakeManilaV2")))
    assert out.decided.sum() == seq["decided"]
    assert np.array_equal(out.predictions[out.decided], noisy[out.decided])
    # the same target with fixed shots; every other command refuses a real device in one line
    res = runner.invoke(app, ["evaluate", str(model), "--target", "ibm:fake_manila", "--shots", "500", "-q"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["mutate", str(model), "--target", "ibm:fake_manila"])
    assert res.exit_code == 2 and "evaluate` only" in res.output and len(res.output.strip().splitlines()) == 1
    res = runner.invoke(app, ["evaluate", str(model), "--target", "ibm:fake_manila", "--exact"])
    assert res.exit_code == 2 and "drop --exact" in res.output
    res = runner.invoke(app, ["evaluate", str(model), "--target", "ibm:fake_nowhere"])
    assert res.exit_code == 2 and "unknown fake device" in res.output
    for var in ("QISKIT_IBM_TOKEN", "QISKIT_IBM_CHANNEL", "QISKIT_IBM_INSTANCE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    runtime.backend.cache_clear()
    res = runner.invoke(app, ["evaluate", str(model), "--target", "ibm:ibm_torino"])
    assert res.exit_code == 2 and "no usable IBM Quantum account" in res.output
