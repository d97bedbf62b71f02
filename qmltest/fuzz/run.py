"""A fuzzing campaign: every requested guide on the same seeds and budget, saved in a run folder.

Per guide the folder holds `<guide>.json` (summary, coverage trace), `<guide>-failures.npz`
(mutants, their seeds, labels, predictions) and, for images, `<guide>-failures/NNN.png` (seed | mutant).
A guide whose JSON exists with the same configuration is not run again (resume).
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qmltest.coverage.criteria import Bounds
from qmltest.data.labelled import digest
from qmltest.errors import InputError, QmlTestError
from qmltest.fuzz import mutators, png
from qmltest.fuzz.loop import Outcome, check_schedule, fuzz
from qmltest.model.artifact import Model
from qmltest.runs.folder import claimed, settle
from qmltest.simulate.backends import REGISTRY
from qmltest.util import intervals, parallel
from qmltest.util import writers as report
from qmltest.util.seeds import seed_of

FORMAT = "qmltest.fuzz/1"
RUN_FORMAT = "qmltest.fuzz-run/1"
"""A fuzz run folder: run.json, then per guide its JSON, failures and images."""


def _read_timing(path: Path) -> dict:
    """A guide's timing file, or {} when absent or damaged (timings never decide a result)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def config_hash(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def save_outcome(
    out: Path, outcome: Outcome, seeds_x: np.ndarray, image_shape, mutator, config: dict, classes: list | None = None
) -> dict:
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
    if classes is not None:  # y and predicted are class indices; their names as the manifest writes them
        arrays["classes"] = np.array([str(c) for c in classes])
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


@dataclass(frozen=True)
class FuzzShared:
    """What every fuzzing task needs (scattered to workers once)."""

    model: Model
    seeds: tuple
    bounds: Bounds
    mutator: object
    budget: int
    k: int
    top_k: int
    register: str
    schedule: str = "fifo"
    backend: str = "auto"


def _fuzz_task(shared: FuzzShared, item: tuple[str, int]) -> Outcome:
    """One guide under one campaign seed: pure, its randomness seeded by (seed, guide)."""
    guide, seed = item
    rng = np.random.default_rng(seed_of(seed, "fuzz", guide))
    return fuzz(
        shared.model,
        list(shared.seeds),
        shared.bounds,
        shared.mutator,
        guide,
        shared.budget,
        rng,  # type: ignore[arg-type]
        shared.k,
        shared.top_k,
        register=shared.register,
        schedule=shared.schedule,
        backend=shared.backend,
    )


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
    where: parallel.Plan | None = None,
    seeds_list: list[int] | None = None,
    schedule: str = "fifo",
    backend: str = "auto",
    force: bool = False,
) -> dict:
    """Run the guides (under each seed of `seeds_list`, or `seed`); the report's 'timing' entry is
    for the caller to print, not to save. Guides x seeds are independent tasks (`where`). A guide
    saved in `out` with other settings (another profile, seeds or budget) is refused in one line,
    or with `force` run again and overwritten."""
    check_schedule(schedule)
    with claimed(out):
        mutator = mutators.for_data(x, image_shape)
        seeds = tuple(mutators.Seed(x[i], x[i], i, int(y[i])) for i in range(len(x)))
        runs = seeds_list or [seed]
        folders = {s: (None if out is None else (out if not seeds_list else out / f"seed-{s}")) for s in runs}
        identity = {  # everything else that changes a result: a folder made with other inputs is never reused
            "seeds_sha256": digest(x, y)[:16],
            "bounds_sha256": digest(np.asarray(bounds.lower, float), np.asarray(bounds.upper, float))[:16],
            "backend": REGISTRY.check(backend or "auto"),
        }
        rest = dict(k=k, top_k=top_k, model=model.sha256, seeds=len(x), register=register, **identity)
        rest.update({} if schedule == "fifo" else {"schedule": schedule})  # fifo folders keep their hashes
        configs = {s: dict(config or {}, budget=budget, seed=s, **rest) for s in runs}
        results: dict[int, dict] = {s: {} for s in runs}
        timings: dict[int, dict] = {s: {} for s in runs}
        todo = _resumed(folders, configs, guides, force, results, timings)

        def done(index: int, outcome: object) -> None:
            guide, s = todo[index]
            if isinstance(outcome, parallel.TaskError):
                raise QmlTestError(f"fuzzing with guide {guide} (seed {s}) failed: {outcome.message}")
            folder = folders[s]
            if folder:
                folder.mkdir(parents=True, exist_ok=True)
                results[s][guide] = save_outcome(folder, outcome, x, image_shape, mutator, configs[s], model.classes)  # type: ignore[arg-type]
            else:
                results[s][guide] = dict(outcome.summary(), coverage_trace=outcome.coverage_trace)  # type: ignore[attr-defined]
            timings[s][guide] = outcome.timing()  # type: ignore[attr-defined]
            if progress:
                progress(guide)

        shared = FuzzShared(model, seeds, bounds, mutator, budget, k, top_k, register, schedule, backend)
        parallel.run_tasks(_fuzz_task, shared, todo, where, done)
        reports = {s: _report(model, s, configs[s], {g: results[s][g] for g in guides}) for s in runs}
        if not seeds_list:
            return dict(reports[seed], timing=timings[seed])
        mean = {g: float(np.mean([reports[s]["guides"][g]["tsr"] for s in runs])) for g in guides}
        return {
            "pooled_tsr": pooled_tsr(reports, runs, guides),
            "timing": {str(s): timings[s] for s in runs},
            "meta": {"format": FORMAT, "model_sha256": model.sha256, "seeds": runs, "versions": report.versions()},
            "config": dict(config or {}, budget=budget, k=k, top_k=top_k, register=register, seeds=len(x)),
            "mean_tsr": mean,
            "runs": {str(s): {key: r[key] for key in ("guides", "coverage_traces")} for s, r in reports.items()},
        }


def _resumed(
    folders: dict, configs: dict, guides: list[str], force: bool, results: dict, timings: dict
) -> list[tuple[str, int]]:
    """Each seed folder settled (run.json: the one resume-or-refuse rule of every run folder), the
    guides it finished under the same settings read back into `results` and `timings`; the
    (guide, seed) pairs left to run."""
    todo = []
    for s, folder in folders.items():
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            settle(folder, RUN_FORMAT, configs[s], force, "profile bounds, seeds, budget, k or backend")
        for guide in guides:
            cached = folder / f"{guide}.json" if folder else None
            if cached and cached.exists():
                data = _read_guide(cached)
                if data.get("config_hash") == config_hash(configs[s]):
                    results[s][guide] = data
                    timings[s][guide] = _read_timing(folder / f"{guide}.timing.json")
                    continue
                if not force:
                    raise InputError(
                        f"{cached}: made with other settings (profile bounds, seeds, budget, k or backend): "
                        "use --force to run it again over it, or another --out"
                    )
            todo.append((guide, s))
    return todo


def pooled_tsr(reports: dict, runs: list[int], guides: list[str]) -> dict:
    """Per guide over every seed: failures / iterations with a Wilson 95% interval, and Fisher's
    exact p-value against each other guide (the paired comparison of two guides on the same seeds).
    Failures of one run share their seeds, so the interval is a lower bound on the uncertainty."""
    counts = {
        g: (
            sum(reports[s]["guides"][g]["failures"] for s in runs),
            sum(reports[s]["guides"][g]["iterations"] for s in runs),
        )
        for g in guides
    }
    return {
        g: {
            "failures": k,
            "iterations": n,
            "tsr": k / n if n else None,
            "interval": intervals.wilson(k, n),
            "p_vs": {h: intervals.two_proportions(k, n, *counts[h]) for h in guides if h != g},
        }
        for g, (k, n) in counts.items()
    }


def _read_guide(path: Path) -> dict:
    """A finished guide's JSON, or a clear error when the run folder is damaged."""
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(f"{path}: this run folder is damaged (not JSON): use another --out or delete it") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: this run folder is damaged (not an object): use another --out or delete it")
    missing = [key for key in GUIDE_FIELDS if key not in data]
    if missing and "config_hash" in data:
        raise InputError(
            f"{path}: this run folder is damaged (no {', '.join(repr(k) for k in missing[:3])}): "
            "use another --out or delete it"
        )
    return data


GUIDE_FIELDS = ("guide", "iterations", "failures", "tsr", "final_coverage", "stop", "coverage_trace")
"""What a finished guide's JSON must hold for a resumed run to report it."""


def _report(model: Model, seed: int, config: dict, results: dict) -> dict:
    return {
        "meta": {"format": FORMAT, "model_sha256": model.sha256, "seed": seed, "versions": report.versions()},
        "config": config,
        "guides": {g: {k2: v for k2, v in r.items() if k2 != "coverage_trace"} for g, r in results.items()},
        "coverage_traces": {g: r["coverage_trace"] for g, r in results.items()},
    }
