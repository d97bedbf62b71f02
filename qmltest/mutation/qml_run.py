"""Site-based mutation runs for the QML and classic suites (efficient-QML paper Sec. IV-B, V).

Generation enumerates every site (exhaustive) or the directed, non-redundant sites, builds each
mutant, and drops mutants whose canonical form repeats an earlier one or the original (reporting
how many and why). The test suite is the inputs the original model classifies correctly; a mutant
is killed when it mispredicts any of them (majority of `shots` shots, seeded by the mutant id), or
with killing='statistical' by the GLM + Cohen's d rule of QuanForge. Equivalent mutants (identical
outputs) and incompetent ones (cannot be built or run) are counted apart, not scored.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from qmltest import report
from qmltest.artifact import Model
from qmltest.errors import InputError, QmlTestError
from qmltest.mutation import stats
from qmltest.mutation.evaluate import Data, Evaluator, seed_of
from qmltest.mutation.qml import CLASSIC, QML, QmlOperator, Site, canonical
from qmltest.mutation.run import RunFolder

FORMAT = "qmltest.mutation-sites/1"
SUITES = {"qml": QML, "classic": CLASSIC}


def operators(suite: str, names: list[str] | None) -> list[QmlOperator]:
    if suite not in SUITES:
        raise InputError(f"unknown operator suite '{suite}' (quanforge, qml, classic)")
    table = SUITES[suite]
    names = names or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        raise InputError(f"unknown {suite} operator(s) {unknown} (choose from {', '.join(table)})")
    return [table[n]() for n in names]


@dataclass
class Generated:
    site: Site
    model: Model | None
    id: str
    status: str = "pending"  # pending | killed | survived | equivalent | incompetent: ...
    seconds: float = 0.0
    eval_seconds: float = 0.0
    killed_by: list[int] = field(default_factory=list)


def mutant_id(model: Model, site: Site, mutant: Model | None) -> str:
    """Content address from the original's hash, the site and the mutant's canonical form."""
    body = "" if mutant is None else repr(canonical(mutant))
    return hashlib.sha256(f"{model.sha256}\x1f{site.describe()}\x1f{body}".encode()).hexdigest()[:16]


def generate(model: Model, ops: list[QmlOperator], strategy: str) -> tuple[list[Generated], dict]:
    """Mutants of every operator; in 'directed' mode redundant ones are skipped and counted."""
    if strategy not in ("directed", "exhaustive"):
        raise InputError(f"--strategy must be directed or exhaustive, got '{strategy}'")
    directed = strategy == "directed"
    seen = {canonical(model)}
    out: list[Generated] = []
    skipped: dict[str, dict[str, int]] = {}
    for op in ops:
        counts = {"sites": 0, "duplicate_circuit": 0, "identical_to_original": 0}
        if directed:
            counts["commuting_insertions"] = len(op.sites(model, False)) - len(op.sites(model, True))
        for site in op.sites(model, directed):
            counts["sites"] += 1
            start = time.perf_counter()
            try:
                mutant = op.apply(model, site)
                status = "pending"
            except QmlTestError as exc:
                mutant, status = None, f"incompetent: {exc}"
            except Exception as exc:  # an edit that yields no valid circuit is an incompetent mutant
                mutant, status = None, f"incompetent: {type(exc).__name__}: {exc}"
            if directed and mutant is not None:
                form = canonical(mutant)
                if form in seen:
                    counts["identical_to_original" if form == canonical(model) else "duplicate_circuit"] += 1
                    continue
                seen.add(form)
            g = Generated(site, mutant, mutant_id(model, site, mutant), status)
            g.seconds = time.perf_counter() - start
            out.append(g)
        skipped[op.name] = counts
    return out, skipped


def suite_of_correct(model: Model, data: Data) -> Data:
    """The test suite of the paper: inputs the original model classifies correctly."""
    from qmltest.simulate import engine

    pred = model.predict(engine.probabilities(model.job(), data.encoded))
    keep = pred == data.y
    return Data(data.name, data.encoded[keep], data.y[keep], None if data.raw is None else data.raw[keep])


def run(
    model: Model,
    data: Data,
    ops: list[QmlOperator],
    strategy: str,
    shots: int | None,
    seed: int,
    killing: str = "majority",
    repeats: int = 20,
    out: Path | None = None,
    fresh: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict:
    if killing not in ("majority", "statistical"):
        raise InputError(f"--killing must be majority or statistical, got '{killing}'")
    gen_start = time.perf_counter()
    mutants, skipped = generate(model, ops, strategy)
    gen_seconds = time.perf_counter() - gen_start
    suite = suite_of_correct(model, data)
    if len(suite.y) == 0:
        raise InputError(f"{data.name}: the original model classifies no input correctly")
    evaluator = Evaluator(model, repeats, shots, seed)
    folder = RunFolder(out, fresh)
    for g in mutants:
        if g.status == "pending":
            rec = folder.records.get(g.id)
            if rec is not None:
                g.status, g.killed_by, g.eval_seconds = rec["status"], rec["killed_by"], rec["eval_seconds"]
            else:
                evaluate(g, model, suite, evaluator, shots, seed, killing)
                save(folder, g)
        if progress:
            progress(1)
    return summarize(model, data, suite, mutants, skipped, gen_seconds, strategy, shots, seed, killing)


def evaluate(g: Generated, model: Model, suite: Data, evaluator: Evaluator, shots, seed, killing) -> None:
    start = time.perf_counter()
    assert g.model is not None
    probs, status = evaluator.mutant_probs(g.model, suite)
    if status != "ok" or probs is None:
        g.status = status
    elif killing == "statistical":
        acc = evaluator.accuracies(probs, suite, g.id)
        base = evaluator.original_accuracies(suite, None, f"vs/{g.id}")
        g.status = "killed" if stats.is_killed(base, acc).killed else "survived"
    else:
        mutant = g.model
        if shots is None:
            pred = mutant.predict(probs)
        else:
            from qmltest.simulate import engine

            counts = engine.sample_counts(probs, shots, np.random.default_rng(seed_of(seed, g.id)))
            pred = mutant.predict(counts)
        wrong = np.flatnonzero(pred != suite.y)
        g.killed_by = [int(i) for i in wrong]
        g.status = "killed" if len(wrong) else "survived"
    g.eval_seconds = time.perf_counter() - start


def save(folder: RunFolder, g: Generated) -> None:
    if folder.path is None:
        return
    import json

    from qmltest import artifact

    if g.model is not None and not g.status.startswith("incompetent"):
        artifact.save(g.model.exported(), folder.path / "mutants" / g.id)
    rec = {
        "id": g.id,
        "site": g.site.describe(),
        "status": g.status,
        "killed_by": g.killed_by,
        "eval_seconds": g.eval_seconds,
    }
    with open(folder.path / "results.jsonl", "a") as fh:
        fh.write(json.dumps(rec, sort_keys=True) + "\n")
    folder.records[g.id] = rec


def summarize(model, data, suite, mutants, skipped, gen_seconds, strategy, shots, seed, killing) -> dict:
    per_op: dict[str, dict] = {}
    for g in mutants:
        row = per_op.setdefault(
            g.site.operator,
            {"total": 0, "killed": 0, "survived": 0, "equivalent": 0, "incompetent": 0, "eval_seconds": 0.0},
        )
        row["total"] += 1
        key = "incompetent" if g.status.startswith("incompetent") else g.status
        row[key] = row.get(key, 0) + 1
        row["eval_seconds"] += g.eval_seconds
    for name, row in per_op.items():
        scored = row["killed"] + row["survived"]
        row["mutation_score"] = row["killed"] / scored if scored else None
        evaluated = row["killed"] + row["survived"] + row["equivalent"]
        row["eval_seconds_per_mutant"] = row.pop("eval_seconds") / evaluated if evaluated else None
        row["skipped"] = skipped.get(name, {})
    killed = sum(r["killed"] for r in per_op.values())
    scored = killed + sum(r["survived"] for r in per_op.values())
    return {
        "meta": {
            "format": FORMAT,
            "model": model.source,
            "model_sha256": model.sha256,
            "seed": seed,
            "shots": shots,
            "strategy": strategy,
            "killing": killing,
            "versions": report.versions(),
        },
        "test_suite": {"data": data.name, "inputs": int(len(data.y)), "correctly_classified": int(len(suite.y))},
        "mutation_score": killed / scored if scored else None,
        "operators": per_op,
        "generated": len(mutants),
        "mutants": [
            {
                "id": g.id,
                "operator": g.site.operator,
                "site": g.site.describe(),
                "status": g.status,
                "killed_by": len(g.killed_by),
                "site_args": list(g.site.args),
            }
            for g in mutants
        ],
        "timing": {  # wall-clock: callers print it and keep it out of reports (byte-identical per seed)
            "generation_seconds_per_mutant": gen_seconds / max(len(mutants), 1),
            "eval_seconds_per_mutant": {name: row.pop("eval_seconds_per_mutant") for name, row in per_op.items()},
        },
    }


def count(model: Model, ops: list[QmlOperator], strategy: str) -> dict[str, int]:
    """Mutants per operator without simulating (`--list`); directed counts after deduplication."""
    if strategy == "exhaustive":
        return {op.name: len(op.sites(model, False)) for op in ops}
    mutants, skipped = generate(model, ops, strategy)
    totals: dict[str, int] = {op.name: 0 for op in ops}
    for g in mutants:
        totals[g.site.operator] += 1
    return totals
