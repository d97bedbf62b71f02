"""Issue 59: the projection `mutate` prints before a run is within 2x of the run's wall time (the
same cost model auto chooses by, plus start-up, generation and evidence). Timed, so slow."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from qmltest import api

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "model, options",
    [
        ("qcl-mnist01", {"suite": "qml"}),
        ("zfm-ra-iris", {"suite": "qml"}),
        ("qcnn-mnist01", {"suite": "classic", "sample": 150}),
    ],
)
def test_the_projection_is_within_twice_the_wall_time(model, options) -> None:
    plan: dict = {}
    start = time.perf_counter()
    api.mutate(str(ROOT / "data" / "models" / model), None, announce=plan.update, **options)
    wall = time.perf_counter() - start
    assert plan["seconds"] > 0
    assert 0.5 <= wall / plan["seconds"] <= 2.0, (wall, plan)
