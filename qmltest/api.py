"""The Python API: every command of the CLI as one call returning a typed result (issue 46).

    from qmltest import api
    model = api.load("data/models/qcl-mnist01")
    r = api.mutate(model, ["mnist:test"], suite="qml", per_class=40)
    r.score, r.interval, r.survivors, r.to_json(), r.to_frame()

The CLI's commands are thin calls of these functions (`qmltest_cli`): the same arguments give the
same report, byte for byte (tests/test_api.py). Ranges are checked here, once, for both.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from qmltest.data import datasets
from qmltest.errors import InputError
from qmltest.model import artifact
from qmltest.model.artifact import Model
from qmltest.util import parallel
from qmltest.util import writers as report

Source = str | Path | Model


def check_range(name: str, value: int | float | None, low: float, high: float) -> None:
    """One clear error for an argument outside its sensible range (before any work starts)."""
    if value is not None and not low <= value <= high:
        raise InputError(f"{name} must be between {low:g} and {high:g}, got {value}")


def load(path: str | Path, manifest: str | Path | None = None) -> Model:
    """A model folder or .qasm file (with `manifest` for a bare .qasm)."""
    return artifact.load(Path(path), None if manifest is None else Path(manifest))


def _model(model: Source, manifest: str | Path | None = None) -> tuple[Model, str]:
    """The model and the name reports give it (the path it was loaded from)."""
    if isinstance(model, Model):
        return model, str(model.source)
    return load(model, manifest), str(model)


def model_data(model: Model, spec: str | None, split: str, option: str) -> str:
    """A data spec, defaulting to the model's own data set (its manifest's training set) with `split`;
    a model that names none needs the option given (one line, exit 2)."""
    if spec:
        return spec
    name = (model.manifest.get("training") or {}).get("dataset")
    if not name:
        raise InputError(f"{model.source}: the model names no training data set: give {option} NAME[:SPLIT] or a file")
    return f"{name}:{split}"


def noise_of(noise: str | Path | None, target: str | None, hardware: bool = False) -> object | None:
    """The noise config of a noise file or a target (not both); an ibm: target only where the
    command can spend device shots (`hardware`)."""
    from qmltest import targets
    from qmltest.noise.config import load as load_noise

    if noise is not None and target is not None:
        raise InputError("give --noise FILE or --target, not both (--target noise:FILE is the same as --noise FILE)")
    if target is not None:
        parsed = targets.parse(target)
        if isinstance(parsed, targets.Hardware) and not hardware:
            raise InputError(
                f"--target {target}: real devices run `qmltest evaluate` only (this command needs many "
                "circuits per input); test on the device's model with --target fake:NAME"
            )
        return parsed
    return load_noise(Path(noise)) if noise is not None else None


class Result:
    """A report as the CLI writes it (`data`), with the figures a caller reads most."""

    kind = "report"

    def __init__(self, data: dict, timing: dict | None = None, text: str | None = None) -> None:
        self.data, self.timing, self._text = data, timing or {}, text

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def to_json(self) -> str:
        """The report's JSON text, as `--json` writes it (a finished run replayed: the text it read)."""
        return self._text if self._text is not None else report.to_json(self.data)

    def rows(self) -> list[dict]:
        """The report's table, one dict per row (what `to_frame` shows)."""
        return [{k: v for k, v in self.data.items() if not isinstance(v, (dict, list))}]

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame (pandas is optional: ImportError names it)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas ships with the dev extra
            raise ImportError("to_frame needs pandas: pip install pandas") from exc
        return pd.DataFrame(self.rows())

    def summary(self) -> str:
        return self.kind

    def _repr_html_(self) -> str:
        rows = self.rows()
        cols = list(rows[0]) if rows else []
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(r.get(c)))}</td>" for c in cols) + "</tr>" for r in rows[:50]
        )
        more = f"<p>{len(rows) - 50} more rows</p>" if len(rows) > 50 else ""
        return f"<p><b>{html.escape(self.summary())}</b></p><table><tr>{head}</tr>{body}</table>{more}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.summary()}>"


def _cell(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else "" if v is None else str(v)


class MutationResult(Result):
    """`mutate`'s report: the first suite's score and interval, per-operator rows, survivors."""

    kind = "mutation"

    @property
    def score(self) -> float | None:
        return self.data["mutation_score"]

    @property
    def interval(self) -> list[float] | None:
        return self.data.get("sampling", {}).get("interval") or self.data.get("mutation_score_interval")

    @property
    def survivors(self) -> list[dict]:
        """The mutants no test killed: id, operator and site."""
        return [
            {k: m[k] for k in ("id", "operator", "site")} for m in self.data["mutants"] if m["status"] == "survived"
        ]

    def rows(self) -> list[dict]:
        return [{k: m[k] for k in ("id", "operator", "site", "status")} for m in self.data["mutants"]]

    def summary(self) -> str:
        lo_hi = self.interval
        inside = f" [{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]" if lo_hi else ""
        score = "n/a" if self.score is None else f"{self.score:.3f}"
        return f"mutation score {score}{inside}, {len(self.data['mutants'])} mutants, {len(self.survivors)} survived"


class EvaluationResult(Result):
    kind = "evaluation"

    @property
    def accuracy(self) -> float:
        return self.data["accuracy"]

    @property
    def interval(self) -> list[float]:
        return self.data["accuracy_interval"]

    def rows(self) -> list[dict]:
        return [{"class": c, **r} for c, r in self.data["per_class"].items()]

    def summary(self) -> str:
        lo, hi = self.interval
        return f"accuracy {self.accuracy:.3f} [{lo:.3f}, {hi:.3f}] on {self.data['samples']} inputs"


class CoverageResult(Result):
    kind = "coverage"

    @property
    def totals(self) -> dict[str, float]:
        return self.data["totals"]

    def rows(self) -> list[dict]:
        return [{"part": p["part"], "inputs": p["cumulative_inputs"], **p["cumulative"]} for p in self.data["parts"]]

    def summary(self) -> str:
        return "coverage " + ", ".join(f"{k} {100 * v:.2f}%" for k, v in self.totals.items())


class ProfileResult(Result):
    kind = "profile"

    def rows(self) -> list[dict]:
        return [{"states": len(self.data.get("states", []))}]

    def summary(self) -> str:
        return f"profile of {self.data.get('meta', {}).get('model', 'a model')}"


class FuzzResult(Result):
    kind = "fuzz"

    def rows(self) -> list[dict]:
        guides = self.data.get("guides") or {}
        return [
            {"guide": g, **{k: v for k, v in r.items() if not isinstance(v, (dict, list))}} for g, r in guides.items()
        ]

    def summary(self) -> str:
        return "fuzzing " + ", ".join(f"{r['guide']} TSR {r.get('tsr', 0):.3f}" for r in self.rows())


class DiffResult(Result):
    kind = "diff"

    def summary(self) -> str:
        return f"{self.data['disagree']} of {self.data['inputs']} inputs disagree"


def evaluate(
    model: Source,
    data: str | None = None,
    *,
    split: str = "test",
    shots: int | None = 1000,
    shots_budget: int | None = None,
    per_class: int | None = None,
    seed: int = 0,
    noise: str | Path | None = None,
    target: str | None = None,
    backend: str = "auto",
    workers: int = 1,
    cluster: str | None = None,
    manifest: str | Path | None = None,
) -> EvaluationResult:
    """Accuracy and per-class accuracy on a data split (`shots=None`: exact probabilities)."""
    from qmltest.evaluate import evaluate as evaluate_model

    check_range("--shots", shots, 1, 10**8)
    check_range("--per-class", per_class, 1, 10**7)
    check_range("--shots-budget", shots_budget, 1, 10**10)
    if shots is None and shots_budget is not None:
        raise InputError("--exact and --shots-budget exclude each other")
    m, name_of = _model(model, manifest)
    spec = model_data(m, data, split, "--data")
    x, y = datasets.select(spec, split, m.classes, per_class, seed)
    cfg = noise_of(noise, target, hardware=True)
    result = evaluate_model(m, x, y, shots, seed, backend, cfg, parallel.plan(workers, cluster), shots_budget)
    name, part = datasets.parse_spec(spec, split)  # a split written in the spec wins over split
    result.update(data=name, split=part, model=name_of, versions=report.versions())
    return EvaluationResult(result, {"model_name": m.manifest["name"], "noise_name": getattr(cfg, "name", None)})


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
) -> ProfileResult:
    """QCov's per basis state profile (l, u, mean, std, median, MAD) on training inputs (Sec. 3.1)."""
    from qmltest.coverage import profile as profiling
    from qmltest.coverage.measure import estimate
    from qmltest.simulate.runner import model_probabilities

    check_range("--per-class", per_class, 1, 10**7)
    check_range("--shots", shots, 1, 10**8)
    m, _ = _model(model, manifest)
    spec = model_data(m, data, split, "--data")
    x, _ = datasets.select(spec, split, m.classes, per_class, seed)
    cfg = noise_of(noise, target)
    probs = model_probabilities(m, x, backend, register=register, noise=cfg, where=parallel.plan(workers, cluster))
    probs = estimate(probs, shots, np.random.default_rng(seed))
    prof = profiling.build(
        probs,
        m.sha256,
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


def load_profile(path: str | Path | dict | ProfileResult, model: Model) -> Any:
    """A profile (file, dict or `profile`'s result) checked to belong to `model`."""
    from qmltest.coverage.profile import Profile

    if isinstance(path, ProfileResult):
        doc, where = path.data, "<profile>"
    elif isinstance(path, dict):
        doc, where = path, "<profile>"
    else:
        doc, where = report.read_json(Path(path)), str(path)
    prof = Profile.from_dict(doc, where)
    if prof.model_sha256 != model.sha256:
        raise InputError(f"{where}: profile was made for another model (hash {prof.model_sha256[:12]}...)")
    return prof


def cover(
    model: Source,
    profile: str | Path | dict | ProfileResult,
    data: str | None = None,
    *,
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
) -> CoverageResult:
    """KSC, SCC and TSC (and every registered criterion) of a test suite against a profile (QCov Eq. 2-4)."""
    from qmltest.coverage import measure
    from qmltest.simulate import fake_device as device
    from qmltest.simulate.runner import model_probabilities

    check_range("--k", k, 1, 100_000)
    check_range("--top-k", top_k, 1, 2**20)
    check_range("--per-class", per_class, 1, 10**7)
    check_range("--shots", shots, 1, 10**8)
    m, name_of = _model(model, manifest)
    prof = load_profile(profile, m)
    if prof.num_states * k > 50_000_000:
        raise InputError(f"--k {k} over {prof.num_states} basis states is {prof.num_states * k} cells (at most 5e7)")
    suites = list(suites)
    parts: list[tuple[str, np.ndarray]] = []
    if not data and not suites:
        data = model_data(m, None, split, "--data or --suite")
    if data:
        source, part_split = datasets.parse_spec(data, split)
        label = f"{source}:{part_split}" if source in datasets.BUILTIN else source
        parts.append((label, datasets.select(data, split, m.classes, per_class, seed)[0]))
    for path in suites:
        parts.append((Path(path).name, datasets.load(str(path)).x))
    rng = np.random.default_rng(seed)
    register = prof.meta.get("register", "readout")
    cfg = noise_of(noise, target)
    where = parallel.plan(workers, cluster)
    exact = [(name, model_probabilities(m, x, backend, register=register, noise=cfg, where=where)) for name, x in parts]
    probs = [(name, measure.estimate(p, shots, rng)) for name, p in exact]
    params = {"k": k, "top_k": top_k, "method": bounds, "mad_confidence": mad_confidence}
    result = measure.cover(probs, prof, **params)
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
    m, _ = _model(model, manifest)
    prof = load_profile(profile, m)
    spec = model_data(m, seeds, "test", "--seeds")
    source, split = datasets.parse_spec(spec)
    x, labels = datasets.select(source, split, m.classes, per_class, seed)
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
) -> DiffResult:
    """Where two models, or one model on two targets, give different answers on the same inputs."""
    from qmltest import diff as diff_mod
    from qmltest.evaluate import label_indices
    from qmltest.simulate.runner import model_probabilities

    check_range("--shots", shots, 1, 10**8)
    check_range("--repeats", repeats, 2, 10_000)
    if not 0 < alpha < 1:
        raise InputError(f"--alpha must lie in (0, 1), got {alpha}")
    a, name_a = _model(model_a)
    b, name_b = _model(model_b) if model_b is not None else (a, name_a)
    if b.classes != a.classes:
        raise InputError(f"the models classify different labels ({a.classes} vs {b.classes})")
    if model_b is None and target_a == target_b:
        raise InputError("one model needs two different targets (--target-a, --target-b) or a second model")
    spec = model_data(a, data, "test", "--data")
    x, labels = datasets.select(spec, "test", a.classes, per_class, seed)
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


def _operators(operators: str | Iterable[str] | None) -> tuple[str, ...]:
    if operators is None:
        return ()
    names = tuple(n.strip() for n in (operators.split(",") if isinstance(operators, str) else operators) if n.strip())
    if not names:
        raise InputError(f"--operators names no operator: '{operators}'")
    return names


def mutation_options(
    *,
    suite: str = "quanforge",
    operators: str | Iterable[str] | None = None,
    strategy: str = "",
    criterion: str = "",
    correction: str = "",
    scoring: str = "",
    shots: int | None = 1000,
    repeats: int = 20,
    alpha: float = 0.05,
    effect: float = 0.5,
    tau_rse: float = 0.05,
    tau_trivial: float = 0.75,
    lb: float = 0.0,
    ub: float = 0.5,
    k_max: int = 10,
    batch: int = 10,
    distribution: str = "gaussian",
    scale: float = 1.0,
    seed: int = 0,
    null_copies: int | None = None,
    sequential: bool = False,
    sample: int | None = None,
    precision: float | None = None,
    shots_budget: int | None = None,
    power: float = 0.8,
    margin: float = 0.3,
) -> Any:
    """The mutation pipeline's options from keyword arguments, every range checked (one line each)."""
    from qmltest.mutation import pipeline
    from qmltest.mutation.strategies.generate import Settings

    check_range("--shots", shots, 1, 10**8)
    check_range("--repeats", repeats, 2, 10_000)
    check_range("--null-copies", null_copies, 1, 10**6)
    check_range("--shots-budget", shots_budget, 1, 10**12)
    check_range("--k-max", k_max, 1, 1000)
    check_range("--batch", batch, 1, 10_000)
    for name, value in (("--alpha", alpha), ("--lb", lb), ("--ub", ub), ("--tau-trivial", tau_trivial)):
        check_range(name, value, 0.0, 1.0)
    settings = Settings(
        lb=lb, ub=ub, k_max=k_max, i=batch, alpha=alpha, effect=effect, tau_rse=tau_rse, tau_trivial=tau_trivial
    )
    return pipeline.Options(
        suite=suite,
        operators=_operators(operators),
        strategy=strategy,
        criterion=criterion,
        correction=correction,
        scoring=scoring,
        shots=shots,
        repeats=repeats,
        seed=seed,
        settings=settings,
        distribution=distribution,
        scale=scale,
        null_copies=pipeline.NULL_COPIES if null_copies is None else null_copies,
        sample=sample,
        precision=precision,
        sequential=sequential,
        shots_budget=shots_budget,
        power=power,
        margin=margin,
    ).resolved()


def list_mutants(model: Source, *, rows: bool = False, manifest: str | Path | None = None, **options: Any) -> dict:
    """The site strategies' mutant counts per operator (and with `rows`, each mutant's id and site)."""
    from qmltest.mutation.operators import registry, sites

    m, _ = _model(model, manifest)
    opts = mutation_options(**options)
    if opts.strategy == "search":
        raise InputError("--list counts the site strategies (directed, exhaustive); search samples mutants")
    found: list[dict] | None = [] if rows else None
    counts = sites.count(
        m, registry.operators(opts.suite, list(opts.operators) or None, opts.seed), opts.strategy, found
    )
    listing = {"strategy": opts.strategy, "counts": counts}
    return listing if found is None else dict(listing, mutants=found)


def suite_data(spec: str, model: Model, per_class: int | None, seed: int) -> Any:
    """'mnist:train' (builtin and split) or a file, as the mutation pipeline's data (labels as class indices)."""
    from qmltest.data.labelled import Data

    x, y = datasets.select(spec, "test", model.classes, per_class, seed)
    return Data.of(spec, model, x, y)


def scan_cells(scan: str | None, base: Any, model: Model) -> list:
    """The cells of a search-strategy scan: depth ranges, gate types or single qubits."""
    from qmltest.mutation.operators.categories import CATEGORIES, categories_of
    from qmltest.mutation.operators.scope import Scope, parse_range
    from qmltest.mutation.pipeline import Cell

    if not scan:
        return [Cell("all", base)]
    kind, _, value = scan.partition("=")
    if kind == "depth":
        value = value or "0-25%,25-50%,50-75%,75-100%"
        return [Cell(f"depth {r}", Scope(base.qubits, parse_range(r), base.gate_types)) for r in value.split(",")]
    if kind == "gate-type":
        present = set().union(*(categories_of(g.name) for g in model.ir.gates))
        names = value.split(",") if value else [c for c in CATEGORIES if c in present]
        return [Cell(f"type {c}", Scope(base.qubits, base.depth, (c,))) for c in names]
    if kind == "qubit":
        return [
            Cell(f"qubit {q}", Scope(frozenset({q}), base.depth, base.gate_types)) for q in range(model.ir.num_qubits)
        ]
    raise InputError(f"--scan takes depth=RANGES, gate-type or qubit, got '{scan}'")


def mutate(
    model: Source,
    tests: Iterable[str] | str | None = None,
    *,
    per_class: int | None = None,
    reference: str | None = None,
    reference_per_class: int = 100,
    qubits: str | None = None,
    depth: str | None = None,
    gate_types: str | None = None,
    scan: str | None = None,
    noise: str | Path | None = None,
    target: str | None = None,
    out: str | Path | None = None,
    force: bool = False,
    workers: int = 1,
    cluster: str | None = None,
    backend: str = "auto",
    manifest: str | Path | None = None,
    shard: str | None = None,
    cache: str | Path | None = None,
    iterate: str | Path | None = None,
    changed_since: str | Path | None = None,
    progress: Callable[..., None] | None = None,
    announce: Callable[[dict], None] | None = None,
    command: list[str] | None = None,
    **options: Any,
) -> MutationResult:
    """Mutation testing (QuanForge Algorithm 1 and Eq. 2-4; the QML and classic suites' sites):
    the report `--json` writes. `options` are `mutation_options`' (suite, operators, strategy,
    criterion, shots=None for exact, sample, precision, ...). `announce` gets the projected
    mutants x inputs and time before the run starts.

    CI (issue 47): `shard="k/n"` scores every n-th mutant from the k-th (`merge` joins the shards'
    run folders); `cache` (default $QMLTEST_CACHE) reuses any mutant's evidence made before under
    the same settings; `iterate` (a previous report) skips the mutants it killed; `changed_since`
    (the model before an edit) keeps only mutants touching gates the edit changed."""
    from qmltest.mutation import pipeline
    from qmltest.mutation.operators import quanforge as ops
    from qmltest.mutation.operators import registry
    from qmltest.mutation.operators.scope import make_scope
    from qmltest.mutation.strategies import precision as precision_mod
    from qmltest.runs import reuse as reuse_mod

    check_range("--per-class", per_class, 1, 10**7)
    check_range("--reference-per-class", reference_per_class, 1, 10**7)
    m, name_of = _model(model, manifest)
    where = parallel.plan(workers, cluster)
    opts = mutation_options(**options)
    cells = None
    if opts.strategy == "search":
        for name in opts.operators:
            ops.get(name)  # unknown operators and scopes fail before any data is loaded
        cells = scan_cells(scan, make_scope(m.ir.num_qubits, qubits, depth, gate_types), m)
    else:
        registry.operators(opts.suite, list(opts.operators) or None)
        if scan or qubits or depth or gate_types:
            raise InputError("--scan, --qubits, --depth and --gate-types apply to the search strategy (quanforge)")
    specs = [tests] if isinstance(tests, str) else list(tests or [])
    specs = specs or [model_data(m, None, "test", "--test")]
    ref = None
    if opts.strategy == "search":
        ref = suite_data(model_data(m, reference, "train", "--reference"), m, reference_per_class, opts.seed)
    suites = [suite_data(t, m, per_class, opts.seed) for t in specs]
    cfg = noise_of(noise, target)
    cache = cache if cache is not None else os.environ.get(reuse_mod.ENV) or None
    reuse = reuse_mod.Reuse(
        cache=None if cache is None else reuse_mod.folder(cache),
        killed=_killed(iterate),
        changed=None if changed_since is None else reuse_mod.changed_gates(load(changed_since).ir, m.ir),
        shard=reuse_mod.parse_shard(shard),
    )
    plan = None if announce is None else precision_mod.projection(m, suites, opts, backend)
    if plan and announce is not None:  # planning every site costs time: only when it is shown
        announce(plan)
    folder = None if out is None else Path(out)
    result, timing = pipeline.run(
        m, suites, opts, ref, cells, folder, force, progress, cfg, command, where, backend, reuse
    )
    if folder is not None:  # what `merge` needs to finish the shards' run as one
        call = {
            "model": name_of,
            "tests": specs,
            "per_class": per_class,
            "reference": reference,
            "reference_per_class": reference_per_class,
            "qubits": qubits,
            "depth": depth,
            "gate_types": gate_types,
            "scan": scan,
            "noise": None if noise is None else str(noise),
            "target": target,
            "backend": backend,
            "manifest": None if manifest is None else str(manifest),
            "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in options.items()},
            "command": _without(_without(command or [], "--shard"), "--out"),
        }
        shard_of = None if reuse.shard is None else list(reuse.shard)
        report.write_text_atomic(folder / "call.json", report.to_json({"call": call, "shard": shard_of}))
    return MutationResult(result, timing, timing.pop("report_text", None))


def _without(argv: list[str], flag: str) -> list[str]:
    """The command line without one option and its value (--shard k/n or --shard=k/n)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == flag:
            skip = True
        elif not arg.startswith(flag + "="):
            out.append(arg)
    return out


def _killed(previous: str | Path | None) -> frozenset[str]:
    """The ids a previous mutate report killed (--iterate)."""
    if previous is None:
        return frozenset()
    doc = report.read_json(Path(previous))
    if not isinstance(doc, dict) or not isinstance(doc.get("mutants"), list):
        raise InputError(f"--iterate {previous}: not a qmltest mutate report (no mutants list)")
    return frozenset(m["id"] for m in doc["mutants"] if isinstance(m, dict) and m.get("status") == "killed")


def merge(
    runs: Iterable[str | Path], out: str | Path, *, progress: Callable[..., None] | None = None
) -> MutationResult:
    """The shards' run folders (`mutate(..., shard="k/n", out=...)`) joined into `out`, and the
    report an unsharded run gives (every mutant's evidence is in the shards: nothing is simulated
    again). Shards of different runs, or a missing or repeated shard, are refused in one line."""
    import shutil

    runs = [Path(r) for r in runs]
    if not runs:
        raise InputError("merge: give the shards' run folders")
    docs = []
    for r in runs:
        try:
            doc = report.read_json(r / "call.json")
            fingerprint = report.read_json(r / "run.json")["fingerprint"]  # type: ignore[index]
        except (InputError, KeyError, TypeError):
            raise InputError(f"{r}: not a mutate run folder made with --out (no call.json / run.json)") from None
        docs.append((r, doc, fingerprint))
    first = docs[0]
    for r, doc, fingerprint in docs[1:]:
        mine, theirs = dict(doc["call"], command=None), dict(first[1]["call"], command=None)
        if mine != theirs or fingerprint != first[2]:
            raise InputError(f"{r} and {first[0]} are shards of different runs (other model, data or options)")
    shards = [d["shard"] for _, d, _ in docs]
    if any(s is None for s in shards):
        raise InputError("merge: every run folder must be a shard (--shard k/n)")
    n = shards[0][1]
    if sorted(s[0] for s in shards) != list(range(1, n + 1)) or any(s[1] != n for s in shards):
        got = ", ".join(f"{k}/{m}" for k, m in shards)
        raise InputError(f"merge: need shards 1/{n} to {n}/{n} once each, got {got}")
    target = Path(out)
    if target.exists() and any(target.iterdir()):
        raise InputError(f"merge --out {target}: exists and is not empty")
    target.mkdir(parents=True, exist_ok=True)
    with open(target / "results.jsonl", "w") as log:
        for r, _, _ in docs:
            log.write((r / "results.jsonl").read_text() if (r / "results.jsonl").exists() else "")
            if (r / "mutants").is_dir():
                shutil.copytree(r / "mutants", target / "mutants", dirs_exist_ok=True)
    report.write_text_atomic(target / "run.json", (runs[0] / "run.json").read_text())
    call = dict(first[1]["call"])
    options, command = call.pop("options"), call.pop("command")
    model_path = call.pop("model")
    return mutate(model_path, out=target, progress=progress, command=command or None, **call, **options)


__all__ = [
    "CoverageResult",
    "DiffResult",
    "EvaluationResult",
    "FuzzResult",
    "MutationResult",
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
    "profile",
]
