"""Issue 60: per-input outputs. `qmltest predict` and `api.predict` give one row per input (index,
label, prediction, class scores), equal to Aer's forward pass of the model, exact or as shot
frequencies; bare arrays of inputs work; bad input is one line, exit 2."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest import api
from qmltest.data import datasets
from qmltest.errors import InputError
from qmltest.model import artifact, readout
from qmltest.simulate import engine, program

ROOT = Path(__file__).resolve().parents[1]
IRIS = ROOT / "data" / "models" / "zfm-ra-iris"
runner = CliRunner()


def test_predict_csv_equals_aers_forward_pass_and_evaluate() -> None:
    res = runner.invoke(app, ["predict", str(IRIS), "--data", "iris:test", "--csv", "-"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    model = artifact.load(IRIS)
    x, y = datasets.select("iris:test", "test", model.classes)
    probs = engine.probabilities(program.of_model(model), model.encode(x), "aer")  # the reference
    want = readout.class_probabilities(probs, model.readout_matrix, model.num_classes)
    got = np.array([[float(r[f"p_{c}"]) for c in model.classes] for r in rows])
    assert len(rows) == len(x) == 30
    np.testing.assert_allclose(got, want, atol=1e-9)
    assert [r["prediction"] for r in rows] == [str(model.classes[i]) for i in np.argmax(want, axis=1)]
    assert [r["label"] for r in rows] == [str(v) for v in y]
    exact = api.evaluate(IRIS, "iris:test", shots=None)
    assert exact.accuracy == np.mean([r["correct"] == "True" for r in rows])


def test_an_array_of_inputs_and_shot_frequencies() -> None:
    x = np.random.default_rng(0).uniform(0, 1, (5, 4))
    bare = api.predict(IRIS, x)
    assert [r["index"] for r in bare.data["rows"]] == list(range(5))
    assert all(r["label"] is None and r["correct"] is None for r in bare.data["rows"])
    shots = api.predict(IRIS, x, shots=64, seed=3)
    again = api.predict(IRIS, x, shots=64, seed=3)
    assert shots.to_csv() == again.to_csv()
    for row, exact in zip(shots.data["rows"], bare.data["rows"]):
        freq = np.array(list(row["scores"].values()))
        assert np.allclose(freq * 64, np.round(freq * 64)) and abs(freq.sum() - 1) < 1e-12
        assert np.abs(freq - np.array(list(exact["scores"].values()))).max() < 5 * 0.5 / 8  # 5 sd of 64 shots
    assert shots.data["exact"] is False and bare.data["exact"] is True


def test_bad_input_is_one_line() -> None:
    with pytest.raises(InputError, match="2-D array"):
        api.predict(IRIS, np.zeros(4))
    res = runner.invoke(app, ["predict", str(IRIS), "--json", "-", "--csv", "-"])
    assert res.exit_code == 2 and "write to stdout" in res.stderr
    res = runner.invoke(app, ["predict", str(IRIS), "--shots", "0"])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    doc = json.loads(runner.invoke(app, ["predict", str(IRIS), "--per-class", "1", "--json", "-"]).stdout)
    assert doc["format"] == "qmltest.predictions/1" and len(doc["rows"]) == 3
