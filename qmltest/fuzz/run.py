"""A fuzzing campaign: every requested guide on the same seeds and budget, saved in a run folder.

Per guide the folder holds `<guide>.json` (summary, coverage trace), `<guide>-failures.npz`
(mutants, their seeds, labels, predictions) and, for images, `<guide>-failures/NNN.png` (seed | mutant).
A guide whose JSON exists with the same configuration is not run again (resume).
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np

from qmltest import report
from qmltest.artifact import Model
from qmltest.coverage.criteria import Bounds
from qmltest.fuzz import mutators, png
from qmltest.fuzz.loop import Outcome, fuzz
from qmltest.mutation.evaluate import seed_of

FORMAT = "qmltest.fuzz/1"


def config_hash(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def save_outcome(out: Path, outcome: Outcome, seeds_x: np.ndarray, image_shape, mutator, config: dict) -> dict:
    summary = outcome.summary()
    summary["coverage_trace"] = outcome.coverage_trace
    summary["config_hash"] = config_hash(config)
    failures = outcome.failures
    width = int(np.prod(seeds_x.shape[1:]))  # a guide without failures still writes (0, F) arrays
    arrays = {
        "x": np.array([s.x for s, _ in failures], dtype=float).reshape(len(failures), width),
        "seed_x": np.array([seeds_x[s.origin] for s, _ in failures], dtype=float).reshape(len(failures), width),
        "y": np.array([s.label for s, _ in failures], dtype=int),
        "predicted": np.array([p for _, p in failures], dtype=int),
        "origin": np.array([s.origin for s, _ in failures], dtype=int),
    }
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    report.write_bytes_atomic(out / f"{outcome.guide}-failures.npz", buf.getvalue())
    if image_shape is not None and failures:
        folder = out / f"{outcome.guide}-failures"
        folder.mkdir(exist_ok=True)
        for i, (s, _) in enumerate(failures):
            img = png.side_by_side(
                seeds_x[s.origin].reshape(image_shape), s.x.reshape(image_shape), mutator.low, mutator.high
            )
            png.write(folder / f"{i:04d}.png", img)
    report.write_text_atomic(out / f"{outcome.guide}.json", report.to_json(summary))
    report.write_text_atomic(out / f"{outcome.guide}.timing.json", report.to_json(outcome.timing()))
    return summary


def campaign(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    image_shape: tuple[int, int] | None,
    bounds: Bounds,
    guides: list[str],
    budget: int,
    seed: int,
    out: Path | None,
    k: int = 100,
    top_k: int = 1,
    config: dict | None = None,
    progress=None,
    register: str = "all",
) -> dict:
    """Run the guides; returns the report, whose 'timing' entry the caller prints but does not save."""
    mutator = mutators.for_data(x, image_shape)
    seeds = [mutators.Seed(x[i], x[i], i, int(y[i])) for i in range(len(x))]
    config = dict(
        config or {}, budget=budget, seed=seed, k=k, top_k=top_k, model=model.sha256, seeds=len(x), register=register
    )
    results, timings = {}, {}
    for guide in guides:
        cached = out / f"{guide}.json" if out else None
        if cached and cached.exists():
            data = json.loads(cached.read_text())
            if data.get("config_hash") == config_hash(config):
                results[guide] = data
                timing = out / f"{guide}.timing.json"  # type: ignore[operator]
                timings[guide] = json.loads(timing.read_text()) if timing.exists() else {}
                continue
        rng = np.random.default_rng(seed_of(seed, "fuzz", guide))
        outcome = fuzz(model, seeds, bounds, mutator, guide, budget, rng, k, top_k, register=register)
        if out:
            out.mkdir(parents=True, exist_ok=True)
            results[guide] = save_outcome(out, outcome, x, image_shape, mutator, config)
        else:
            results[guide] = dict(outcome.summary(), coverage_trace=outcome.coverage_trace)
        timings[guide] = outcome.timing()
        if progress:
            progress(guide)
    return {
        "timing": timings,
        "meta": {"format": FORMAT, "model_sha256": model.sha256, "seed": seed, "versions": report.versions()},
        "config": config,
        "guides": {g: {k2: v for k2, v in r.items() if k2 != "coverage_trace"} for g, r in results.items()},
        "coverage_traces": {g: r["coverage_trace"] for g, r in results.items()},
    }
