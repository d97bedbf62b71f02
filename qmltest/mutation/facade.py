"""The mutation calls of the API (`qmltest.api` re-exports them): options from keyword arguments,
--list, the search scan's cells, `mutate` and `merge` of shards."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from qmltest.data import datasets
from qmltest.errors import InputError
from qmltest.model.artifact import Model
from qmltest.model.loading import Source, check_range, load, model_and_name, model_data, noise_of
from qmltest.mutation.options import Options, for_regressor
from qmltest.report.results import MutationResult
from qmltest.util import parallel
from qmltest.util import writers as report

_D = Options()
"""The mutation defaults, declared once (`Options`)."""


def _operators(operators: str | Iterable[str] | None) -> tuple[str, ...]:
    if operators is None:
        return ()
    names = tuple(n.strip() for n in (operators.split(",") if isinstance(operators, str) else operators) if n.strip())
    if not names:
        raise InputError(f"--operators names no operator: '{operators}'")
    return names


def mutation_options(
    *,
    suite: str = _D.suite,
    operators: str | Iterable[str] | None = None,
    strategy: str = "",
    criterion: str = "",
    correction: str = "",
    scoring: str = "",
    shots: int | None = _D.shots,
    repeats: int = _D.repeats,
    alpha: float = _D.settings.alpha,
    effect: float = _D.settings.effect,
    tau_rse: float = _D.settings.tau_rse,
    tau_trivial: float = _D.settings.tau_trivial,
    lb: float = _D.settings.lb,
    ub: float = _D.settings.ub,
    k_max: int = _D.settings.k_max,
    batch: int = _D.settings.i,
    distribution: str = _D.distribution,
    scale: float = _D.scale,
    seed: int = _D.seed,
    null_copies: int | None = None,
    sequential: bool = False,
    sample: int | None = None,
    precision: float | None = None,
    shots_budget: int | None = None,
    power: float = _D.power,
    margin: float = _D.margin,
    regressor: bool = False,
) -> Any:
    """The mutation pipeline's options from keyword arguments, every range checked (one line each);
    `regressor`: a regressor's choices (`options.for_regressor`)."""
    from qmltest.mutation import pipeline
    from qmltest.mutation.strategies import chooser as strategies
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
    opts = pipeline.Options(
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
    )
    opts = (for_regressor(opts) if regressor else opts).resolved()
    strategies.checked(opts)
    return opts


def list_mutants(model: Source, *, rows: bool = False, manifest: str | Path | None = None, **options: Any) -> dict:
    """The site strategies' mutant counts per operator (and with `rows`, each mutant's id and site)."""
    from qmltest.mutation.operators import sites
    from qmltest.mutation.strategies import chooser as strategies

    m, _ = model_and_name(model, manifest)
    opts = mutation_options(regressor=m.is_regressor, **options)
    planned = strategies.get(opts.strategy).plan(m, opts)
    if planned is None:
        raise InputError(f"--list counts the site strategies (directed, exhaustive); {opts.strategy} finds its mutants")
    found: list[dict] | None = [] if rows else None
    counts = sites.tally(m, planned, found)
    listing = {"strategy": opts.strategy, "counts": counts}
    return listing if found is None else dict(listing, mutants=found)


def suite_data(spec: str, model: Model, per_class: int | None, seed: int, drop_unknown: bool = False) -> Any:
    """'mnist:train' (builtin and split) or a file, as the mutation pipeline's data (labels as class indices)."""
    from qmltest.data.labelled import Data

    x, y = datasets.for_model(spec, "test", model, per_class, seed, drop_unknown)
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
    drop_unknown_labels: bool = False,
    shard: str | None = None,
    cache: str | Path | None = None,
    iterate: str | Path | None = None,
    changed_since: str | Path | None = None,
    progress: Callable[..., None] | None = None,
    announce: Callable[[dict], None] | None = None,
    command: list[str] | None = None,
    **options: Any,
) -> MutationResult:
    """Mutation testing (QuanForge Algorithm 1, Eq. 2-4; the QML and classic sites): the report
    `--json` writes. `options`: `mutation_options`' keywords; `announce` gets the projected mutants
    x inputs and time first. For CI: `shard="k/n"` scores every n-th mutant from the k-th
    (`merge` joins the shards); `cache` (default $QMLTEST_CACHE) reuses evidence made before under
    the same settings; `iterate` (a previous report) skips what it killed; `changed_since` (the
    model before an edit) keeps the mutants touching gates the edit changed."""
    from qmltest.mutation import pipeline
    from qmltest.mutation.strategies import chooser as strategies
    from qmltest.mutation.strategies import precision as precision_mod

    check_range("--per-class", per_class, 1, 10**7)
    check_range("--reference-per-class", reference_per_class, 1, 10**7)
    m, name_of = model_and_name(model, manifest)
    where = parallel.plan(workers, cluster)
    opts = mutation_options(regressor=m.is_regressor, **options)
    strategy = strategies.get(opts.strategy)
    cells = _cells(strategy, opts, m, scan, qubits, depth, gate_types)
    specs = [tests] if isinstance(tests, str) else list(tests or [])
    specs = specs or [model_data(m, None, "test", "--test")]
    ref = None
    if strategy.needs_reference:
        ref = suite_data(
            model_data(m, reference, "train", "--reference"), m, reference_per_class, opts.seed, drop_unknown_labels
        )
    suites = [suite_data(t, m, per_class, opts.seed, drop_unknown_labels) for t in specs]
    cfg = noise_of(noise, target)
    reuse = _reuse(m, cache, iterate, changed_since, shard)
    plan = None if announce is None else precision_mod.projection(m, suites, opts, backend)
    if plan and announce is not None:  # planning every site costs time: only when it is shown
        announce(plan)
    folder = None if out is None else Path(out)
    result, timing = pipeline.run(
        m, suites, opts, reference=ref, cells=cells, out=folder, fresh=force, progress=progress, noise=cfg,
        command=command, where=where, backend=backend, reuse=reuse,
    )  # fmt: skip
    if folder is not None:  # what `merge` needs to finish the shards' run as one
        paths = {"noise": noise, "manifest": manifest}
        call = dict(
            model=name_of, tests=specs, per_class=per_class, reference=reference,
            reference_per_class=reference_per_class, qubits=qubits, depth=depth, gate_types=gate_types, scan=scan,
            target=target, backend=backend, drop_unknown_labels=drop_unknown_labels,
            **{k: None if v is None else str(v) for k, v in paths.items()},
        )  # fmt: skip
        _save_call(folder, call, options, command, reuse.shard)
    return MutationResult(result, timing, timing.pop("report_text", None))


def _cells(strategy: Any, opts: Any, m: Model, scan, qubits, depth, gate_types) -> list | None:
    """The scoped strategy's cells (--scan and the scope options); None for the others, which
    refuse the scope options. Unknown operators fail here, before any data is loaded."""
    from qmltest.mutation.operators import quanforge as ops
    from qmltest.mutation.operators import registry
    from qmltest.mutation.operators.scope import make_scope

    if strategy.scoped:
        for name in opts.operators:
            ops.get(name)
        return scan_cells(scan, make_scope(m.ir.num_qubits, qubits, depth, gate_types), m)
    registry.operators(opts.suite, list(opts.operators) or None)
    if scan or qubits or depth or gate_types:
        raise InputError("--scan, --qubits, --depth and --gate-types apply to the search strategy (quanforge)")
    return None


def _reuse(m: Model, cache, iterate, changed_since, shard) -> Any:
    """The work a run may skip: the result cache (default $QMLTEST_CACHE), --iterate, --changed-since, --shard."""
    from qmltest.runs import reuse as reuse_mod

    cache = cache if cache is not None else os.environ.get(reuse_mod.ENV) or None
    return reuse_mod.Reuse(
        cache=None if cache is None else reuse_mod.folder(cache),
        killed=_killed(iterate),
        changed=None if changed_since is None else reuse_mod.changed_gates(load(changed_since).ir, m.ir),
        shard=reuse_mod.parse_shard(shard),
    )


def _save_call(folder: Path, call: dict, options: dict, command: list[str] | None, shard: object) -> None:
    """`call.json`: the run's arguments, so `merge` can finish the shards' run as one."""
    call = dict(call, options={k: (list(v) if isinstance(v, tuple) else v) for k, v in options.items()})
    call["command"] = _without(_without(command or [], "--shard"), "--out")
    shard_of = None if shard is None else list(shard)  # type: ignore[call-overload]
    report.write_text_atomic(folder / "call.json", report.to_json({"call": call, "shard": shard_of}))


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
