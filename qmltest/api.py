"""The Python API: every command of the CLI as one call returning a typed result.

    from qmltest import api
    model = api.load("data/models/qcl-mnist01")
    r = api.mutate(model, ["mnist:test"], suite="qml", per_class=40)
    r.score, r.interval, r.survivors, r.to_json(), r.to_frame()

The CLI's commands are thin calls of these functions (`qmltest_cli`): the same arguments give the
same report, byte for byte (tests/test_api.py). Ranges are checked here, once, for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from qmltest.coverage.profile import loaded as load_profile
from qmltest.data import datasets
from qmltest.errors import InputError
from qmltest.model.loading import (  # noqa: F401
    Source,
    check_range,
    classifier_only,
    input_sets,
    load,
    model_and_name,
    model_data,
    noise_of,
)
from qmltest.mutation.facade import list_mutants, merge, mutate, mutation_options, scan_cells, suite_data  # noqa: F401
from qmltest.report.results import (  # noqa: F401
    CoverageResult,
    DiffResult,
    EvaluationResult,
    FuzzResult,
    MutationResult,
    PredictionResult,
    ProfileResult,
    Result,
)
from qmltest.util import parallel
from qmltest.util import writers as report
from qmltest.util.defaults import SHOTS


def evaluate(
    model: Source,
    data: str | None = None,
    *,
    split: str = "test",
    shots: int | None = SHOTS,
    shots_budget: int | None = None,
    per_class: int | None = None,
    seed: int = 0,
    noise: str | Path | None = None,
    target: str | None = None,
    backend: str = "auto",
    workers: int = 1,
    cluster: str | None = None,
    manifest: str | Path | None = None,
    drop_unknown_labels: bool = False,
) -> EvaluationResult:
    """Accuracy and per-class accuracy on a data split (`shots=None`: exact probabilities)."""
    from qmltest.evaluate import evaluate as evaluate_model

    check_range("--shots", shots, 1, 10**8)
    check_range("--per-class", per_class, 1, 10**7)
    check_range("--shots-budget", shots_budget, 1, 10**10)
    if shots is None and shots_budget is not None:
        raise InputError("--exact and --shots-budget exclude each other")
    m, name_of = model_and_name(model, manifest)
    spec = model_data(m, data, split, "--data")
    x, y = datasets.for_model(spec, split, m, per_class, seed, drop_unknown_labels)
    cfg = noise_of(noise, target, hardware=True)
    result = evaluate_model(m, x, y, shots, seed, backend, cfg, parallel.plan(workers, cluster), shots_budget)
    name, part = datasets.parse_spec(spec, split)  # a split written in the spec wins over split
    result.update(data=name, split=part, model=name_of, versions=report.versions())
    return EvaluationResult(result, {"model_name": m.manifest["name"], "noise_name": getattr(cfg, "name", None)})


def predict(
    model: Source,
    data: str | np.ndarray | None = None,
    *,
    split: str = "test",
    shots: int | None = None,
    per_class: int | None = None,
    seed: int = 0,
    noise: str | Path | None = None,
    target: str | None = None,
    backend: str = "auto",
    manifest: str | Path | None = None,
    drop_unknown_labels: bool = False,
) -> PredictionResult:
    """Per-input predictions: one row per input with its index, label, prediction and class scores,
    exact (`shots=None`, the default) or as shot frequencies. `data`: a data spec as elsewhere
    (labels kept) or an array of raw inputs (no labels)."""
    from qmltest.evaluate import per_input

    check_range("--shots", shots, 1, 10**8)
    check_range("--per-class", per_class, 1, 10**7)
    m, name_of = model_and_name(model, manifest)
    cfg = noise_of(noise, target)
    if isinstance(data, np.ndarray) or (data is not None and not isinstance(data, (str, Path))):
        x, y, name, part = np.asarray(data, dtype=float), None, "array", None
        if x.ndim != 2:
            raise InputError(f"predict: inputs must be a 2-D array (inputs x features), got shape {x.shape}")
    else:
        spec = model_data(m, None if data is None else str(data), split, "--data")
        x, y = datasets.for_model(spec, split, m, per_class, seed, drop_unknown_labels)
        name, part = datasets.parse_spec(spec, split)
    result = per_input(m, x, y, shots, seed, backend, cfg)
    result.update(model=name_of, data=name, split=part, versions=report.versions())
    return PredictionResult(result)


def profile(
    model: Source,
    data: str | None = None,
    *,
    split: str = "train",
    per_class: int = 100,
    shots: int | None = None,
    seed: int = 0,
    noise: str | Path | None = None,
    target: str | None = None,
    register: str = "all",
    backend: str = "auto",
    workers: int = 1,
    cluster: str | None = None,
    manifest: str | Path | None = None,
    drop_unknown_labels: bool = False,
    entanglement: bool = False,
) -> ProfileResult:
    """QCov's per basis state profile (l, u, mean, std, median, MAD) on training inputs (Sec. 3.1);
    `entanglement` also keeps each input's Meyer-Wallach Q, which `cover` then reads as KEC."""
    from qmltest.coverage import profile as profiling
    from qmltest.coverage.measure import estimate
    from qmltest.simulate.runner import model_probabilities

    check_range("--per-class", per_class, 1, 10**7)
    check_range("--shots", shots, 1, 10**8)
    m, _ = model_and_name(model, manifest)
    spec = model_data(m, data, split, "--data")
    x, _ = datasets.for_model(spec, split, m, per_class, seed, drop_unknown_labels)
    cfg = noise_of(noise, target)
    probs = model_probabilities(m, x, backend, register=register, noise=cfg, where=parallel.plan(workers, cluster))
    probs = estimate(probs, shots, np.random.default_rng(seed))
    prof = profiling.build(
        probs,
        m.sha256,
        entangled(m, x) if entanglement else None,
        data=spec,
        split=split,
        per_class=per_class,
        shots=shots,
        register=register,
        noise=None if cfg is None else cfg.sha256,
        seed=seed,
        model=m.manifest["name"],
        versions=report.versions(),
    )
    return ProfileResult(prof.to_dict(), {"inputs": len(x), "states": prof.num_states})


def entangled(model: object, x: np.ndarray) -> np.ndarray:
    """Meyer-Wallach Q of the model's final state per input (KEC's reading, exact, noise-free)."""
    from qmltest.coverage.entanglement import values

    return values(model, x)


def cover(
    model: Source,
    tests: str | Path | Iterable[str] | dict | ProfileResult | None = None,
    data: str | None = None,
    *,
    profile: str | Path | dict | ProfileResult | None = None,
    suites: Iterable[str | Path] = (),
    split: str = "test",
    per_class: int | None = None,
    k: int = 100,
    top_k: int = 1,
    bounds: str = "minmax",
    mad_confidence: float = 0.99,
    shots: int | None = None,
    shots_sweep: Iterable[int] | None = None,
    seed: int = 0,
    noise: str | Path | None = None,
    target: str | None = None,
    backend: str = "auto",
    workers: int = 1,
    cluster: str | None = None,
    manifest: str | Path | None = None,
    drop_unknown_labels: bool = False,
) -> CoverageResult:
    """KSC, SCC and TSC (and every registered criterion) of a test suite against a profile (QCov Eq. 2-4).

    Called as `mutate` is, `cover(model, tests, profile=...)` with `tests` a data spec or a list of
    them (one part each); the older order `cover(model, profile, data)` works too."""
    from qmltest.coverage import measure
    from qmltest.simulate import fake_device as device
    from qmltest.simulate.runner import model_probabilities

    check_range("--k", k, 1, 100_000)
    check_range("--top-k", top_k, 1, 2**20)
    check_range("--per-class", per_class, 1, 10**7)
    check_range("--shots", shots, 1, 10**8)
    m, name_of = model_and_name(model, manifest)
    if profile is None:  # cover(model, profile, data)
        profile, specs = tests, [data] if data else []
    elif data is not None:
        raise InputError("cover: give the test data once (cover(model, tests, profile=...))")
    else:
        specs = [str(tests)] if isinstance(tests, (str, Path)) else [str(t) for t in tests or []]  # type: ignore[union-attr]
    if profile is None:
        raise InputError("cover needs a profile (profile=..., made by profile())")
    prof = load_profile(profile, m)
    if prof.num_states * k > 50_000_000:
        raise InputError(f"--k {k} over {prof.num_states} basis states is {prof.num_states * k} cells (at most 5e7)")
    parts = input_sets(m, specs, list(suites), split, per_class, seed, drop_unknown_labels)
    rng = np.random.default_rng(seed)
    register = prof.meta.get("register", "readout")
    cfg = noise_of(noise, target)
    where = parallel.plan(workers, cluster)
    exact = [(name, model_probabilities(m, x, backend, register=register, noise=cfg, where=where)) for name, x in parts]
    probs = [(name, measure.estimate(p, shots, rng)) for name, p in exact]
    params = {"k": k, "top_k": top_k, "method": bounds, "mad_confidence": mad_confidence}
    ent = [entangled(m, x) for _, x in parts] if prof.entanglement is not None else None
    result = measure.cover(probs, prof, **params, entanglement=ent)  # type: ignore[arg-type]
    result["meta"] = {
        "format": measure.FORMAT,
        "model": name_of,
        "model_sha256": m.sha256,
        "profile": str(profile) if isinstance(profile, (str, Path)) else "<profile>",
        "shots": shots,
        "seed": seed,
        "register": register,
        "noise": None if cfg is None else cfg.sha256,
        "device": device.describe(m, cfg),
        "versions": report.versions(),
    }
    if shots_sweep:
        suite_exact = np.concatenate([p for _, p in exact])
        result["shots_sweep"] = measure.shots_sweep(suite_exact, prof, [c for c in shots_sweep if c], seed, **params)
    return CoverageResult(result, {"parts": [label for label, _ in parts]})


def fuzz(
    model: Source,
    profile: str | Path | dict | ProfileResult,
    seeds: str | None = None,
    *,
    per_class: int = 50,
    guide: str = "all",
    budget: int = 2000,
    k: int = 100,
    top_k: int = 1,
    bounds: str = "minmax",
    seed: int = 0,
    seeds_list: Iterable[int] | None = None,
    schedule: str = "fifo",
    out: str | Path | None = None,
    force: bool = False,
    backend: str = "auto",
    workers: int = 1,
    cluster: str | None = None,
    manifest: str | Path | None = None,
    drop_unknown_labels: bool = False,
    progress: Callable[[str], None] | None = None,
) -> FuzzResult:
    """Coverage-guided fuzzing of correctly classified seeds, every guide against random (QCov Algorithm 1)."""
    from qmltest.coverage.criteria import Bounds
    from qmltest.coverage.profile import bounds as profile_bounds
    from qmltest.evaluate import label_indices
    from qmltest.fuzz.loop import check_schedule
    from qmltest.fuzz.loop import guides as fuzz_guides
    from qmltest.fuzz.run import campaign
    from qmltest.simulate.runner import model_probabilities

    guides = list(fuzz_guides()) if guide == "all" else [guide]
    if any(g not in fuzz_guides() for g in guides):
        raise InputError(f"unknown guide '{guide}' (choose from {', '.join(fuzz_guides())}, all)")
    check_schedule(schedule)
    check_range("--budget", budget, 1, 10**7)
    check_range("--k", k, 1, 100_000)
    check_range("--top-k", top_k, 1, 2**20)
    check_range("--per-class", per_class, 1, 10**7)
    runs = sorted(set(seeds_list)) if seeds_list else None
    m, _ = model_and_name(model, manifest)
    classifier_only(m, "fuzz", circuits=True)
    prof = load_profile(profile, m)
    spec = model_data(m, seeds, "test", "--seeds")
    source, split = datasets.parse_spec(spec)
    x, labels = datasets.select(source, split, m.classes, per_class, seed, drop_unknown_labels)
    y, shape = label_indices(m, labels), datasets.load(source).image_shape
    correct = m.predict(model_probabilities(m, x, backend)) == y
    if not correct.any():
        raise InputError("no seed is classified correctly: nothing to fuzz")
    dropped = int((~correct).sum())
    x, y = x[correct], y[correct]
    lo, hi = profile_bounds(prof, bounds)
    config = {"seeds": spec, "per_class": per_class, "bounds": bounds, "dropped_misclassified_seeds": dropped}
    result = campaign(
        m,
        x,
        y,
        shape,
        Bounds(lo, hi),
        guides,
        budget,
        seed,
        None if out is None else Path(out),
        k,
        top_k,
        config,
        progress or (lambda g: None),
        where=parallel.plan(workers, cluster),
        seeds_list=runs,
        schedule=schedule,
        backend=backend,
        force=force,
    )
    timing = result.pop("timing")
    if out is not None:
        report.write_text_atomic(Path(out) / "report.json", report.to_json(result))
    return FuzzResult(result, dict(timing, seeds=len(x), dropped=dropped, guides=guides, runs=runs))


def diff(
    model_a: Source,
    model_b: Source | None = None,
    data: str | None = None,
    *,
    per_class: int | None = None,
    target_a: str = "ideal",
    target_b: str = "ideal",
    shots: int | None = None,
    repeats: int = 20,
    alpha: float = 0.05,
    seed: int = 0,
    backend: str = "auto",
    drop_unknown_labels: bool = False,
) -> DiffResult:
    """Where two models, or one model on two targets, give different answers on the same inputs."""
    from qmltest import diff as diff_mod
    from qmltest.evaluate import label_indices
    from qmltest.simulate.runner import model_probabilities

    check_range("--shots", shots, 1, 10**8)
    check_range("--repeats", repeats, 2, 10_000)
    if not 0 < alpha < 1:
        raise InputError(f"--alpha must lie in (0, 1), got {alpha}")
    a, name_a = model_and_name(model_a)
    b, name_b = model_and_name(model_b) if model_b is not None else (a, name_a)
    classifier_only(a, "diff")
    classifier_only(b, "diff")
    if b.classes != a.classes:
        raise InputError(f"the models classify different labels ({a.classes} vs {b.classes})")
    if model_b is None and target_a == target_b:
        raise InputError("one model needs two different targets (--target-a, --target-b) or a second model")
    spec = model_data(a, data, "test", "--data")
    x, labels = datasets.select(spec, "test", a.classes, per_class, seed, drop_unknown_labels)
    probs_a = model_probabilities(a, x, backend, noise=noise_of(None, target_a))
    probs_b = model_probabilities(b, x, backend, noise=noise_of(None, target_b))
    result = diff_mod.compare(probs_a, probs_b, a, b, label_indices(a, labels), shots, repeats, alpha, seed)
    result.update(
        a={"model": name_a, "sha256": a.sha256, "target": target_a},
        b={"model": name_b, "sha256": b.sha256, "target": target_b},
        data=spec,
        meta={"format": "qmltest.diff/1", "seed": seed, "versions": report.versions()},
    )
    return DiffResult(result)


__all__ = [
    "CoverageResult",
    "DiffResult",
    "EvaluationResult",
    "FuzzResult",
    "MutationResult",
    "PredictionResult",
    "ProfileResult",
    "Result",
    "cover",
    "diff",
    "evaluate",
    "fuzz",
    "list_mutants",
    "load",
    "merge",
    "mutate",
    "predict",
    "profile",
]
