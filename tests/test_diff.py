"""`qmltest diff`: a model against itself disagrees nowhere (exact, and under shots at alpha over
200 repeats); two different models disagree exactly where their predictions differ; targets and
--fail-over; bad targets are one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest import diff
from qmltest.data import datasets
from qmltest.evaluate import label_indices
from qmltest.model import artifact
from qmltest.simulate.runner import model_probabilities

runner = CliRunner()
MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


def _inputs(model):
    x, labels = datasets.select("iris", "all", model.classes)
    return x, label_indices(model, labels)


def test_a_model_against_itself_disagrees_nowhere_even_under_shots() -> None:
    model = artifact.load(MODELS / "zzfm-su2-iris")
    x, y = _inputs(model)
    p = model_probabilities(model, x)
    exact = diff.compare(p, p, model, model, y)
    assert exact["disagree"] == 0 and exact["tvd_max"] == 0.0
    shots = diff.compare(p, p, model, model, y, shots=1000, repeats=200, seed=3)
    assert shots["disagree"] == 0 and len(y) == 150  # Holm over 150 inputs at alpha 0.05


def test_two_models_disagree_where_their_predictions_differ() -> None:
    a, b = artifact.load(MODELS / "zzfm-su2-iris"), artifact.load(MODELS / "zfm-ra-iris")
    x, y = _inputs(a)
    pa, pb = model_probabilities(a, x), model_probabilities(b, x)
    r = diff.compare(pa, pb, a, b, y)
    expected = np.flatnonzero(a.predict(pa) != b.predict(pb))
    assert [d["index"] for d in r["inputs_that_disagree"]] == expected.tolist() and len(expected) > 0
    assert r["accuracy_a"] == float(np.mean(a.predict(pa) == y))
    lo, hi = r["disagree_interval"]
    assert lo <= r["disagree_rate"] <= hi


def test_cli_diff_targets_gate_and_errors(tmp_path) -> None:
    model = str(MODELS / "zzfm-su2-iris")
    res = runner.invoke(app, ["diff", model, str(MODELS / "zfm-ra-iris"), "--json", "-", "--fail-over", "5"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert doc["disagree"] > 0 and "more than --fail-over 5.0%" in res.output
    bad = runner.invoke(app, ["diff", model, "--target-b", "warp:9"])
    assert bad.exit_code == 2 and "unknown target" in bad.output
    same = runner.invoke(app, ["diff", model])
    assert same.exit_code == 2 and "two different targets" in same.output


def test_fake_device_target() -> None:
    pytest.importorskip("qiskit_ibm_runtime")
    model = str(MODELS / "zzfm-su2-iris")
    res = runner.invoke(app, ["diff", model, "--target-b", "fake:FakeManilaV2", "--json", "-"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["b"]["target"] == "fake:FakeManilaV2" and doc["tvd_max"] > 0  # the device's noise moves the outputs
    nope = runner.invoke(app, ["diff", model, "--target-b", "fake:FakeNope"])
    assert nope.exit_code == 2 and "unknown fake backend" in nope.output


def test_target_option_on_evaluate() -> None:
    pytest.importorskip("qiskit_ibm_runtime")
    model = str(MODELS / "zzfm-su2-iris")
    res = runner.invoke(
        app, ["evaluate", model, "--data", "iris", "--exact", "--target", "fake:FakeManilaV2", "--json", "-"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["noise"]["name"] == "fake:FakeManilaV2"
    both = runner.invoke(app, ["evaluate", model, "--data", "iris", "--target", "ideal", "--noise", "x.toml"])
    assert both.exit_code == 2 and "not both" in both.output
