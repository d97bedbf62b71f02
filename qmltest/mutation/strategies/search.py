"""The search strategy (QuanForge Algorithm 1): binary search over the gate percentage per operator
and cell, in-process or with its draws fanned out to workers (the feedback driver)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from qmltest.data.labelled import Data
from qmltest.errors import QmlTestError
from qmltest.model.artifact import Model
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.evidence.stats import finite as _finite
from qmltest.mutation.operators import delta as delta_mod
from qmltest.mutation.operators import quanforge as qf_ops
from qmltest.mutation.operators.mutant import Mutant
from qmltest.mutation.operators.scope import Scope
from qmltest.mutation.options import Cell, Options
from qmltest.mutation.strategies.base import Strategy, register
from qmltest.mutation.strategies.generate import Generator, Step
from qmltest.runs.folder import RunFolder
from qmltest.util import parallel
from qmltest.util.parallel import TaskError

# ---------------------------------------------------------------- generation


def generate_search(
    original: Model,
    reference: Data,
    cells: list[Cell],
    opts: Options,
    evaluator: Evaluator,
    folder: RunFolder,
    progress: Callable[[int], None],
    where: parallel.Plan | None = None,
) -> tuple[list[Mutant], dict]:
    """QuanForge Algorithm 1 per cell and operator; effective mutants are scored. On workers every
    search runs at once and each stability round's draws are split over the workers."""
    names = list(opts.operators) or list(qf_ops.REGISTRY)
    for n in names:
        qf_ops.get(n)  # unknown names fail here, not in a worker
    records = {k: v for k, v in folder.records.items() if "percentage" in v}

    def on_mutant(m: Mutant) -> None:
        folder.save_model(m.id, m.model if m.status in ("ok", "equivalent") else None)
        folder.append(m.record())

    items = [(cell, op) for cell in cells for op in names]
    if where is None or where.local:  # in-process: each mutant is logged the moment it is evaluated
        gen = Generator(original, reference, evaluator, opts.settings, opts.seed, records, on_mutant)
        results: list = []
        for cell, name in items:
            results.append(gen.run(_operator(opts, name), cell.scope, cell.name))
            progress(1)
    else:
        results = _search_on_workers(original, reference, evaluator, opts, records, items, where, on_mutant, progress)
    table: dict[str, dict] = {cell.name: {} for cell in cells}
    cands: dict[str, Mutant] = {}
    for (cell, name), result in zip(items, results):
        if isinstance(result, TaskError):
            raise QmlTestError(f"the search for {name} in cell '{cell.name}' failed: {result.message}")
        effective, generated, log = result
        table[cell.name][name] = _search_summary(effective, generated, log)
        chosen = {m.id for m in effective}  # Algorithm 1's effective set, not every killable mutant
        for m in sorted(generated, key=lambda m: m.id):
            if m.id in cands:
                if m.id in chosen and cands[m.id].status == "not-effective":
                    cands[m.id].status = "scored"
                continue
            cands[m.id] = _reported(m, cell.name, m.id in chosen)
    generation = {
        "reference": {
            "name": reference.name,
            "inputs": int(len(reference.y)),
            "original_mean_accuracy": float(np.mean(evaluator.original_accuracies(reference))),
        },
        "cells": table,
    }
    return [cands[k] for k in sorted(cands)], generation


def _reported(m: Mutant, cell: str, chosen: bool) -> Mutant:
    """A search draw as the report keeps it: its final status, the cell it was first drawn in, the
    verdict rounded (the draw itself stays untouched: the cache may hand it to another cell)."""
    incompetent = m.status.startswith("incompetent")
    status = "scored" if chosen else ("not-effective" if m.status == "ok" else m.status)
    v = m.search
    search = {
        "mean_accuracy": _finite(round(m.mean_accuracy, 6)) if m.accuracies is not None else None,
        "p_value": _finite(v.get("p_value", math.nan)),
        "effect_size": _finite(v.get("effect_size", math.nan)),
        "killable": bool(v.get("killable")),
        "nontrivial": bool(v.get("nontrivial")),
    }
    model = None if incompetent else m.model
    return Mutant(m.id, m.operator, cell, m.site, model, status, round(m.percentage or 0.0, 6), search)


@dataclass(frozen=True)
class SearchShared:
    """What every search task needs (scattered to workers once)."""

    original: Model
    reference: Data
    evaluator: Evaluator
    opts: Options
    records: dict[str, dict]


def _search_on_workers(
    original: Model,
    reference: Data,
    evaluator: Evaluator,
    opts: Options,
    records: dict[str, dict],
    items: list[tuple[Cell, str]],
    where: parallel.Plan,
    on_mutant: Callable[[Mutant], None],
    progress: Callable[[int], None],
) -> list[tuple[list[Mutant], list[Mutant], list[Step]]]:
    """Every (cell, operator) search at once, the draws of each stability round made and evaluated
    on the workers (issue 13: parallel across operators, cells and the i mutants of a round).

    Each mutant is logged as it comes back. A mutant drawn more than once (the same circuit from
    two draws) is, in the results, its first draw in the order the in-process run makes them (cell
    and operator, then draw), whatever order the workers finished in: the same report either way.
    """
    gen = Generator(original, reference, evaluator, opts.settings, opts.seed, records)
    searches = [gen.search(_operator(opts, name), cell.scope, cell.name) for cell, name in items]
    made: dict[int, list[Mutant | None]] = {}
    left: dict[int, int] = {}
    results: dict[int, tuple[list[Mutant], list[Mutant], list[Step]]] = {}
    first: dict[str, tuple[tuple[int, int], Mutant]] = {}  # id -> (search, draw number), mutant
    drawn = [0] * len(items)
    workers = 1

    def advance(n: int, sent: list[Mutant | None] | None) -> list[list[tuple]]:
        """Search n's next round as tasks: whole while the searches outnumber the workers (a round
        trip per task costs more than it balances), else split over the workers left to it."""
        draws: list[tuple[float, str]] = []
        while not draws:  # a round of no draws (i = 0) goes straight back
            try:
                draws = next(searches[n]) if sent is None else searches[n].send(sent)
            except StopIteration as stop:
                results[n] = stop.value
                progress(1)
                return []
            sent = []
        made[n], left[n] = [None] * len(draws), len(draws)
        cell, name = items[n]
        out = [(n, j, drawn[n] + j, cell, name, p, tag) for j, (p, tag) in enumerate(draws)]
        drawn[n] += len(draws)
        active = len(items) - len(results)
        size = -(-len(out) // min(len(out), -(-workers // active)))
        return [out[k : k + size] for k in range(0, len(out), size)]

    def begin(k: int) -> list[list[tuple]]:
        nonlocal workers
        workers = k
        return [batch for n in range(len(items)) for batch in advance(n, None)]

    def on_result(item: tuple, result: object) -> list[list[tuple]]:
        n, j, number = item[:3]
        if isinstance(result, TaskError):
            cell, name = items[n]
            raise QmlTestError(f"the search for {name} in cell '{cell.name}' failed: {result.message}")
        m = None
        if result is not None:
            m, shipped_delta = result  # type: ignore[misc]
            if shipped_delta is None:  # not writable as QASM3: incompetent, neither logged nor cached (as in `make`)
                m.model = original
            else:
                m.model = delta_mod.apply(original, shipped_delta)
                seen = first.get(m.id)
                if seen is None and m.id not in records:
                    on_mutant(m)
                if seen is None or (n, number) < seen[0]:
                    first[m.id] = ((n, number), m)
        made[n][j] = m  # type: ignore[assignment]
        left[n] -= 1
        return [] if left[n] else advance(n, made.pop(n))

    shared = SearchShared(original, reference, evaluator, opts, records)
    parallel.run_feedback(_draw_task, shared, begin, where, on_result)

    def canonical(ms: list[Mutant]) -> list[Mutant]:
        return [first[m.id][1] if m.id in first else m for m in ms]

    return [(canonical(results[n][0]), canonical(results[n][1]), results[n][2]) for n in range(len(items))]


def _draw_task(shared: SearchShared, item: tuple) -> tuple[Mutant, delta_mod.Delta | None] | None:
    """One draw of a search round, made and evaluated: pure, seeded by its tag and its mutant's id.
    The mutant goes back without its model, which travels as a delta from the original (None: the
    original itself); a whole model took the client ~3 ms per mutant to unpickle."""
    _, _, _, cell, name, percentage, tag = item
    o = shared.opts
    gen = Generator(shared.original, shared.reference, shared.evaluator, o.settings, o.seed, shared.records)
    m = gen.make(_operator(o, name), cell.scope, percentage, tag, cell.name)
    if m is None:
        return None
    model = m.model
    m.model = None  # type: ignore[assignment]
    return m, None if model is shared.original else delta_mod.delta_of(shared.original, model)


def _operator(opts: Options, name: str) -> qf_ops.Operator:
    return qf_ops.get(name, distribution=opts.distribution, scale=opts.scale)


def _search_summary(effective: list[Mutant], generated: list[Mutant], log: list[Step]) -> dict:
    scored = [m for m in generated if m.status == "ok"]
    n = len(scored)
    return {
        "generated": len(generated),
        "scored": n,  # the denominator of KR and NR
        "equivalent": sum(m.status == "equivalent" for m in generated),
        "incompetent": sum(m.status.startswith("incompetent") for m in generated),
        "killable": sum(bool(m.search.get("killable")) for m in scored),
        "nontrivial": sum(bool(m.search.get("nontrivial")) for m in scored),
        "effective": len(effective),
        "KR": sum(bool(m.search.get("killable")) for m in scored) / n if n else None,
        "NR": sum(bool(m.search.get("nontrivial")) for m in scored) / n if n else None,
        "mean_effective_accuracy": float(np.mean([m.mean_accuracy for m in effective])) if effective else None,
        "search": [s.to_dict() for s in log],
    }


@register
class Search(Strategy):
    """QuanForge Algorithm 1: its mutants are found as it runs, so nothing is enumerated up front."""

    name = "search"
    description = "QuanForge Algorithm 1: binary search over the gate percentage (the quanforge default)"
    families = ("quanforge",)
    enumerates = False
    needs_reference = True
    scoped = True

    def stream(self, state) -> tuple[Iterator[Mutant], int]:  # type: ignore[override]
        cells = state.cells or [Cell("all", Scope())]
        made, found = generate_search(
            state.original, state.reference, cells, state.opts, state.evaluator, state.folder, state.tick, state.where
        )
        state.generation.update(found)
        return iter(made), len(made)
