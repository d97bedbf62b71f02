"""One mutation pipeline: generation strategy x kill criterion x scoring -> one record per mutant.

- Strategies: ``search`` (QuanForge Algorithm 1, binary search over the gate percentage, for the
  nine QuanForge operators; its effective mutants are scored) and ``directed`` / ``exhaustive`` site
  enumeration (QML and classic operators; every competent, non-duplicate mutant is scored).
- Evidence: each scored mutant is evaluated once per test suite and both kinds of evidence are kept
  (GLM p-value and Cohen's d per class and overall; the correctly classified inputs it mispredicts
  under a majority of shots), so any strategy works with any criterion (`criteria`).
- Report ``qmltest.mutation/3`` (`build_report`, a pure function of the stored rows): meta (versions,
  seed, command line, options), generation tables, per suite / operator / cell scores, the kill
  matrix, the null control (identical copies judged by the same criterion) and every mutant.

The run folder (`RunFolder`) keeps `run.json` (settings that decide the evidence), the original
model, `results.jsonl` (one line per finished mutant or evidence, append-only, last line wins) and
`mutants/<id>/` artifacts; re-running the same command resumes without re-simulating.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from qmltest import artifact, intervals, parallel, report
from qmltest.artifact import Model
from qmltest.errors import InputError, QmlTestError
from qmltest.mutation import criteria, sequential, sites, stats, votes
from qmltest.mutation import delta as delta_mod
from qmltest.mutation import operators as qf_ops
from qmltest.mutation.evaluate import Data, Evaluator, seed_of
from qmltest.mutation.generate import Generator, Mutant, Settings, Step
from qmltest.mutation.scope import Scope
from qmltest.parallel import TaskError
from qmltest.splice import Splicer

FORMAT = "qmltest.mutation/3"
OPERATOR_SUITES = ("quanforge", "qml", "classic")
STRATEGIES = ("search", "directed", "exhaustive")
NULL_COPIES = 200
DEFAULT_CORRECTION = {"statistical": "none", "majority": "holm", "majority-literal": "none"}
DEFAULTS = {  # per operator suite: strategy, criterion, scoring (the papers' own settings)
    "quanforge": ("search", "statistical", "class"),
    "qml": ("directed", "majority", "plain"),
    "classic": ("directed", "majority", "plain"),
}


@dataclass(frozen=True)
class Cell:
    """A scope the search strategy runs in (QuanForge RQ2's depth / gate-type / qubit cells)."""

    name: str
    scope: Scope


@dataclass(frozen=True)
class Options:
    """Everything that decides a mutation run (the CLI and run configs fill it)."""

    suite: str = "quanforge"
    operators: tuple[str, ...] = ()
    strategy: str = ""
    criterion: str = ""
    correction: str = ""
    scoring: str = ""
    shots: int | None = 1000
    repeats: int = 20
    seed: int = 0
    settings: Settings = field(default_factory=Settings)
    distribution: str = "gaussian"
    scale: float = 1.0
    null_copies: int = NULL_COPIES
    sequential: bool = False
    shots_budget: int | None = None  # sequential: most shots per (mutant, input); default 5 x repeats x shots
    power: float = 0.8  # sequential: 1 - beta, the chance a mutant at the effect / margin is not survived
    margin: float = 0.3  # sequential majority: the vote-probability drop survival must rule out

    @property
    def max_repeats(self) -> int:
        """Repeats at the sequential design's last look (the fixed design's repeats otherwise)."""
        if not self.sequential:
            return self.repeats
        if self.shots_budget is None:
            return 5 * self.repeats
        return max(2, self.shots_budget // (self.shots or 1))

    def resolved(self) -> Options:
        """Defaults by operator suite filled in, every choice validated (one clear error)."""
        if self.suite not in OPERATOR_SUITES:
            raise InputError(f"unknown operator suite '{self.suite}' (choose from {', '.join(OPERATOR_SUITES)})")
        strategy, criterion, scoring = DEFAULTS[self.suite]
        out = replace(
            self,
            strategy=self.strategy or strategy,
            criterion=self.criterion or criterion,
            scoring=self.scoring or scoring,
        )
        if out.criterion in criteria.CRITERIA:
            out = replace(out, correction=out.correction or DEFAULT_CORRECTION[out.criterion])
        if out.strategy not in STRATEGIES:
            raise InputError(f"--strategy must be one of {', '.join(STRATEGIES)}, got '{out.strategy}'")
        if (out.strategy == "search") != (out.suite == "quanforge"):
            raise InputError(
                f"--strategy {out.strategy} does not generate {out.suite} mutants: search (Algorithm 1) is for "
                "the quanforge operators, directed/exhaustive site enumeration for qml and classic"
            )
        for value, allowed, name in (
            (out.criterion, criteria.CRITERIA, "--criterion"),
            (out.correction, criteria.CORRECTIONS, "--correction"),
            (out.scoring, criteria.SCORINGS, "--scoring"),
        ):
            if value not in allowed:
                raise InputError(f"{name} must be one of {', '.join(allowed)}, got '{value}'")
        if out.shots is not None and out.shots < 1:
            raise InputError(f"--shots must be positive, got {out.shots}")
        if out.repeats < 2:
            raise InputError(f"--repeats must be at least 2 (a distribution), got {out.repeats}")
        if out.null_copies < 1:
            raise InputError(f"--null-copies must be at least 1, got {out.null_copies}")
        if out.sequential:
            if out.shots is None:
                raise InputError("--sequential draws shots: it does not apply with --exact")
            if out.shots_budget is not None and out.shots_budget < 2 * out.shots:
                raise InputError(
                    f"--shots-budget must allow at least 2 predictions of {out.shots} shots, got {out.shots_budget}"
                )
            if out.criterion == "statistical" and out.correction != "none":
                raise InputError("--sequential decides each mutant on its own: --correction must be none")
            if out.criterion == "majority-literal":
                raise InputError("--sequential applies to the statistical and majority criteria")
            if not 0 < out.power < 1:
                raise InputError(f"--power must be in (0, 1), got {out.power}")
            if not 0 < out.margin < 1:
                raise InputError(f"--margin must be in (0, 1), got {out.margin}")
        elif out.shots_budget is not None:
            raise InputError("--shots-budget applies to --sequential runs")
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["operators"] = list(self.operators)
        return d


@dataclass
class Candidate:
    """A generated mutant: where it came from, its model (None when incompetent, and once it is
    scored and saved) and its evidence."""

    id: str
    operator: str
    cell: str
    site: str
    model: Model | None
    status: str  # scored | not-effective | equivalent | incompetent: ...
    percentage: float | None = None
    search: dict = field(default_factory=dict)
    touched: list[int] = field(default_factory=list)
    evidence: dict[str, dict] = field(default_factory=dict)
    delta: delta_mod.Delta | None = None  # set instead of `model` on the way to a worker


class RunFolder:
    """Append-only results log (last line per id wins, torn last line ignored) + mutant artifacts."""

    def __init__(self, path: Path | None, fresh: bool, fingerprint: dict, original: Model) -> None:
        self.path = path
        self.records: dict[str, dict] = {}
        self._original = original
        self._splicer: Splicer | None = None
        self._checked: set[str] = set()
        if path is None:
            return
        if path.exists() and not path.is_dir():
            raise InputError(f"--out {path}: exists and is not a folder")
        path.mkdir(parents=True, exist_ok=True)
        log, meta = path / "results.jsonl", path / "run.json"
        if fresh:
            log.unlink(missing_ok=True)
            meta.unlink(missing_ok=True)
        if log.exists() and not meta.exists():
            raise InputError(
                f"{path}: a run folder of an older qmltest (qmltest.mutation/1) or damaged: "
                "use --force or another --out"
            )
        if meta.exists():
            old = report.read_json(meta)
            if not isinstance(old, dict) or old.get("format") != FORMAT:
                raise InputError(f"{meta}: not a {FORMAT} run folder: use --force or another --out")
            if old.get("fingerprint") != fingerprint:
                raise InputError(
                    f"{path}: made with other settings (model, data, seed, shots or repeats): "
                    "use --force or another --out"
                )
        report.write_text_atomic(meta, report.to_json({"format": FORMAT, "fingerprint": fingerprint}))
        artifact.save(original.exported(), path / "original")
        if log.is_dir():
            raise InputError(f"{log}: is a directory: this run folder is damaged; use --force or another --out")
        if log.exists():
            for n, line in enumerate(log.read_text().splitlines(), 1):
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # an interrupted write: that mutant is simply redone
                if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
                    raise InputError(f"{log}: line {n} is not a mutant record: use --force or another --out")
                self.records.setdefault(rec["id"], {}).update(rec)

    def append(self, rec: dict) -> None:
        self.records.setdefault(rec["id"], {}).update(rec)
        if self.path is None:
            return
        with open(self.path / "results.jsonl", "a") as fh:
            fh.write(json.dumps(rec, sort_keys=True, default=_json_default) + "\n")
            fh.flush()

    def save_model(self, mid: str, model: Model | None) -> None:
        """A mutant's model folder, its text spliced from the original's (`splice`; Qiskit's
        exporter where splicing does not apply) and its manifest checked once per distinct
        preprocessing and readout."""
        if self.path is None or model is None or (self.path / "mutants" / mid / "model.json").exists():
            return
        if not model.qasm_text:
            if self._splicer is None:
                self._splicer = Splicer(self._original.ir)
            text = self._splicer.text(model.ir)
            model = model.exported() if text is None else replace(model, qasm_text=text)
        key = json.dumps(
            {k: v for k, v in model.manifest.items() if k not in ("layers", "qasm_sha256")}, sort_keys=True
        )
        artifact.save(model, self.path / "mutants" / mid, validate=key not in self._checked)
        self._checked.add(key)


def _json_default(obj: object) -> object:
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(type(obj).__name__)


def _finite(x: float) -> float | None:
    return None if x is None or x != x or x in (float("inf"), float("-inf")) else float(x)


def touched_gates(original: Model, mutant: Model) -> list[int]:
    """Indices of the original's gates a mutant changes (an insertion marks the gate it precedes).

    The common head and tail are skipped first (a mutant shares the original's unchanged gate
    objects), so the diff runs only over the few changed gates.
    """

    def sig(g) -> tuple:
        return (g.name, g.qubits, tuple(str(p.value) for p in g.params))

    ga, gb = original.ir.gates, mutant.ir.gates

    def same(x, y) -> bool:
        return x is y or sig(x) == sig(y)

    head = 0
    while head < min(len(ga), len(gb)) and same(ga[head], gb[head]):
        head += 1
    tail = 0
    while tail < min(len(ga), len(gb)) - head and same(ga[-1 - tail], gb[-1 - tail]):
        tail += 1
    a = [sig(g) for g in ga[head : len(ga) - tail]]
    b = [sig(g) for g in gb[head : len(gb) - tail]]
    out: set[int] = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            out.update(range(head + i1, head + i2))
        elif tag == "insert" and ga:
            out.add(min(head + i1, len(ga) - 1))
    return sorted(out)


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
) -> tuple[list[Candidate], dict]:
    """QuanForge Algorithm 1 per cell and operator; effective mutants are scored. On workers every
    search runs at once and each stability round's draws are split over the workers."""
    names = list(opts.operators) or list(qf_ops.QUANFORGE)
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
    cands: dict[str, Candidate] = {}
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
            status = "scored" if m.id in chosen else ("not-effective" if m.status == "ok" else m.status)
            cands[m.id] = Candidate(
                m.id,
                m.operator,
                cell.name,
                "; ".join(m.notes),
                m.model if not m.status.startswith("incompetent") else None,
                status,
                round(m.percentage, 6),
                {
                    "mean_accuracy": _finite(round(m.mean_accuracy, 6)) if m.accuracies is not None else None,
                    "p_value": _finite(m.p_value),
                    "effect_size": _finite(m.effect_size),
                    "killable": m.killable,
                    "nontrivial": m.nontrivial,
                },
            )
    generation = {
        "reference": {
            "name": reference.name,
            "inputs": int(len(reference.y)),
            "original_mean_accuracy": float(np.mean(evaluator.original_accuracies(reference))),
        },
        "cells": table,
    }
    return [cands[k] for k in sorted(cands)], generation


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
    m = gen.make(_operator(o, name), cell.scope, percentage, tag)
    if m is None:
        return None
    model = m.model
    m.model = None  # type: ignore[assignment]
    return m, None if model is shared.original else delta_mod.delta_of(shared.original, model)


def _operator(opts: Options, name: str) -> qf_ops.Operator:
    return qf_ops.get(name, distribution=opts.distribution, scale=opts.scale)


@dataclass(frozen=True)
class EvalShared:
    """What every evaluation task needs (scattered to workers once)."""

    evaluator: Evaluator
    suites: tuple[Data, ...]
    masks: dict[str, np.ndarray]
    opts: Options


def shipped(original: Model, cand: Candidate, remote: bool) -> Candidate:
    """The candidate as a task item; for remote workers its mutant as a delta from the original
    (see `delta`): in-process there is nothing to pickle, so the model goes as it is."""
    if cand.model is None or not remote:
        return replace(cand, evidence=dict(cand.evidence))
    if cand.model is original:  # a null copy: the worker takes the shared original
        return replace(cand, evidence=dict(cand.evidence), model=None)
    return replace(cand, evidence=dict(cand.evidence), model=None, delta=delta_mod.delta_of(original, cand.model))


def _evaluate_task(shared: EvalShared, cand: Candidate) -> tuple[dict[str, dict], list[int]]:
    """Evidence of one candidate on the suites it has none for yet, and the original's gates it
    touches (found here rather than in the client, which on a small machine shares the cores)."""
    if cand.delta is not None:
        cand = replace(cand, model=delta_mod.apply(shared.evaluator.original, cand.delta), delta=None)
    elif cand.model is None:  # a null copy
        cand = replace(cand, model=shared.evaluator.original)
    assert cand.model is not None
    original = shared.evaluator.original
    touched = [] if cand.model is original else touched_gates(original, cand.model)
    evidence = {
        s.name: evidence_for(cand, s, shared.masks[s.name], shared.evaluator, shared.opts)
        for s in shared.suites
        if s.name not in cand.evidence
    }
    return evidence, touched


def _search_summary(effective: list[Mutant], generated: list[Mutant], log: list[Step]) -> dict:
    scored = [m for m in generated if m.status == "ok"]
    n = len(scored)
    return {
        "generated": len(generated),
        "equivalent": sum(m.status == "equivalent" for m in generated),
        "incompetent": sum(m.status.startswith("incompetent") for m in generated),
        "killable": sum(m.killable for m in scored),
        "nontrivial": sum(m.nontrivial for m in scored),
        "effective": len(effective),
        "KR": sum(m.killable for m in scored) / n if n else None,
        "NR": sum(m.nontrivial for m in scored) / n if n else None,
        "mean_effective_accuracy": float(np.mean([m.mean_accuracy for m in effective])) if effective else None,
        "search": [s.to_dict() for s in log],
    }


def iter_sites(
    original: Model, opts: Options, progress: Callable[[int], None], generation: dict
) -> Iterator[Candidate]:
    """Every (directed) site of the QML / classic operators, one candidate at a time; duplicates
    skipped and counted in `generation` once the last one is made."""
    ops = sites.operators(opts.suite, list(opts.operators) or None, opts.seed)
    skipped: dict[str, dict[str, int]] = {}
    per_op: dict[str, dict] = {op.name: {"generated": 0, "skipped": {}} for op in ops}
    for g in sites.iter_generate(original, ops, opts.strategy, skipped):
        status = "scored" if g.status == "pending" else g.status
        per_op[g.site.operator]["generated"] += 1
        progress(1)
        yield Candidate(g.id, g.site.operator, "all", g.site.describe(), g.model, status)
    for name, counts in skipped.items():
        per_op[name]["skipped"] = counts
    generation["cells"] = {"all": per_op}


# ---------------------------------------------------------------- evaluation


def correct_mask(original: Model, evaluator: Evaluator, suite: Data) -> np.ndarray:
    """Inputs the original classifies correctly (exactly): the majority criterion's test suite."""
    return original.predict(evaluator.original_probs(suite)) == suite.y


def evidence_for(cand: Candidate, suite: Data, correct: np.ndarray, evaluator: Evaluator, opts: Options) -> dict:
    """Every criterion's kill evidence of one mutant on one suite (or its incompetence): the
    statistical (p, d) pairs, the vote p-values of the majority criterion, one literal vote per
    input (majority-literal) and, with --sequential, each criterion's sequential decision."""
    assert cand.model is not None
    probs, status = evaluator.mutant_probs(cand.model, suite)
    if probs is None:
        return {"status": status}
    matrix = cand.model.readout_matrix
    reps = opts.max_repeats
    acc = evaluator.accuracies(probs, suite, cand.id, None, matrix, repeats=reps)
    base = evaluator.original_accuracies(suite, None, f"vs/{cand.id}", repeats=reps)
    R = opts.repeats
    overall = stats.is_killed(base[:R], acc[:R], opts.settings.alpha, opts.settings.effect)
    per_class, class_acc = {}, {}
    for c in sorted({int(v) for v in suite.y}):
        mask = suite.y == c
        a = evaluator.accuracies(probs, suite, f"{cand.id}/class{c}", mask, matrix, repeats=reps)
        b = evaluator.original_accuracies(suite, mask, f"vs/{cand.id}/class{c}", repeats=reps)
        class_acc[str(c)] = (b, a)
        v = stats.is_killed(b[:R], a[:R], opts.settings.alpha, opts.settings.effect)
        per_class[str(c)] = [_finite(v.p_value), _finite(v.effect_size)]
    idx = np.flatnonzero(correct)
    w0, exact = evaluator.original_win(suite, idx)
    rng = np.random.default_rng(seed_of(opts.seed, cand.id, suite.name, "votes"))
    right = votes.model_votes(probs[idx], matrix, suite.y[idx], cand.model.predict, opts.shots, reps, rng)
    k = right[:R].sum(axis=0)
    pv = votes.pvalues(k, R, w0)
    if opts.shots is None:
        pred = cand.model.predict(probs[idx])
    else:
        from qmltest.simulate import engine

        rng = np.random.default_rng(seed_of(opts.seed, cand.id, suite.name, "majority"))
        pred = cand.model.predict(engine.sample_counts(probs[idx], opts.shots, rng))
    ev = {
        "status": "equivalent" if status == "equivalent" else "ok",
        "stat": {"all": [_finite(overall.p_value), _finite(overall.effect_size)], "classes": per_class},
        "mean_accuracy": round(float(np.mean(acc[:R])), 6),
        "votes": {
            "repeats": R,
            "family": int(len(idx)),
            "exact": bool(exact),
            "p": {str(int(i)): float(p) for i, p in zip(idx, pv) if p < 1.0},
        },
        "killed_by": [int(i) for i in idx[pred != suite.y[idx]]],
    }
    if opts.sequential:
        ev["sequential"] = sequential_evidence(opts, right, w0, idx, base, acc, class_acc, len(suite.y))
    return ev


def sequential_evidence(
    opts: Options,
    right: np.ndarray,
    w0: np.ndarray,
    idx: np.ndarray,
    base: np.ndarray,
    acc: np.ndarray,
    class_acc: dict[str, tuple[np.ndarray, np.ndarray]],
    inputs: int,
) -> dict:
    """Both criteria decided sequentially (`sequential`), with the shots each used on the mutant."""
    looks = sequential.schedule(opts.max_repeats)
    s = opts.settings
    beta = 1.0 - opts.power
    shots = opts.shots or 0
    correction = opts.correction if opts.criterion == "majority" else DEFAULT_CORRECTION["majority"]
    maj = sequential.majority(right, w0, looks, s.alpha, beta, opts.margin, correction)
    maj["inputs"] = [int(idx[j]) for j in maj["inputs"]]
    maj["shots"] = maj["repeats"] * shots * int(len(idx))
    overall = sequential.statistical(base, acc, looks, s.alpha, beta, s.effect)
    classes = {c: sequential.statistical(b, a, looks, s.alpha, beta, s.effect) for c, (b, a) in class_acc.items()}
    used = max([overall["repeats"]] + [v["repeats"] for v in classes.values()])
    return {
        "looks": looks,
        "majority": maj,
        "statistical": {"all": overall, "classes": classes, "shots": used * shots * inputs},
    }


def null_copies(original: Model, count: int = NULL_COPIES) -> list[Candidate]:
    """`count` identical copies of the original, evaluated like mutants (the null control)."""
    return [Candidate(f"null{r:03d}", "null", "", "", original, "scored") for r in range(count)]


def null_evidence(copies: list[Candidate], results: list[object], suites: list[Data]) -> dict[str, dict]:
    """Per suite, the evidence of every identical copy: the rate at which such copies are 'killed'
    is the criterion's false-kill rate."""
    out: dict[str, dict] = {s.name: {} for s in suites}
    for copy, result in zip(copies, results):
        if isinstance(result, TaskError):
            raise QmlTestError(f"the null control failed: {result.message}")
        for name, ev in result[0].items():  # type: ignore[index]
            out[name][copy.id] = {k: v for k, v in ev.items() if k != "status"}
    return out


def run(
    original: Model,
    suites: list[Data],
    opts: Options,
    reference: Data | None = None,
    cells: list[Cell] | None = None,
    out: Path | None = None,
    fresh: bool = False,
    progress: Callable[[int], None] | None = None,
    noise: object = None,
    command: list[str] | None = None,
    where: parallel.Plan | None = None,
) -> tuple[dict, dict]:
    """Generate, evaluate and report. Returns (report, timing); timing stays out of the report.

    `where` places the tasks (in-process by default, or Dask, one session for every task round);
    the report does not depend on it.
    """
    with parallel.session(where):
        return _run(original, suites, opts, reference, cells, out, fresh, progress, noise, command, where)


def _run(
    original: Model,
    suites: list[Data],
    opts: Options,
    reference: Data | None,
    cells: list[Cell] | None,
    out: Path | None,
    fresh: bool,
    progress: Callable[[int], None] | None,
    noise: object,
    command: list[str] | None,
    where: parallel.Plan | None,
) -> tuple[dict, dict]:
    opts = opts.resolved()
    tick = progress or (lambda k=1: None)
    if not suites:
        raise InputError("give at least one test suite to score (--test)")
    names = [s.name for s in suites]
    if len(set(names)) != len(names):
        suites = [replace(s, name=f"{s.name}#{i}") if names.count(s.name) > 1 else s for i, s in enumerate(suites)]
    if opts.strategy == "search" and reference is None:
        raise InputError("the search strategy generates against reference data: give --reference")
    evaluator = Evaluator(original, opts.repeats, opts.shots, opts.seed, noise)
    fingerprint = {
        "model_sha256": original.sha256,
        "seed": opts.seed,
        "shots": opts.shots,
        "repeats": opts.repeats,
        "null_copies": opts.null_copies,
        "sequential": None
        if not opts.sequential
        else {"budget": opts.max_repeats, "power": opts.power, "margin": opts.margin, "correction": opts.correction},
        "noise": None if noise is None else getattr(noise, "sha256", None),
        "data": {s.name: s.fingerprint for s in suites + ([reference] if reference is not None else [])},
    }
    folder = RunFolder(out, fresh, fingerprint, original)
    if opts.strategy != "search" and cells and [c.name for c in cells] != ["all"]:
        raise InputError("--scan and scopes apply to the search strategy (quanforge operators)")
    started = time.perf_counter()
    masks = {s.name: correct_mask(original, evaluator, s) for s in suites}
    shared = EvalShared(evaluator, tuple(suites), masks, opts)
    for s in suites:  # the majority criterion's reference, computed once here rather than per worker
        evaluator.original_win(s, np.flatnonzero(masks[s.name]))
    copies = null_copies(original, opts.null_copies)
    remote = where is not None and not where.local  # mutants travel as deltas only to workers
    null_results: dict[int, object] = {}
    cands: list[Candidate] = []
    pending: list[Candidate] = []
    generation: dict = {}
    gen_seconds = 0.0

    def generate(workers: int) -> Iterator[list]:
        """Runs in the client while the workers evaluate the null copies; each batch of candidates
        goes out as soon as it is made, so the workers need not wait for the last one."""
        nonlocal gen_seconds
        gen_started = time.perf_counter()
        stream: Iterator[Candidate]
        if opts.strategy == "search":
            search_cells = cells or [Cell("all", Scope())]
            made, found = generate_search(original, reference, search_cells, opts, evaluator, folder, tick, where)  # type: ignore[arg-type]
            generation.update(found)
            stream, total = iter(made), len(made)
        else:
            stream = iter_sites(original, opts, tick, generation)
            total = sites.site_count(
                original, sites.operators(opts.suite, list(opts.operators) or None, opts.seed), opts.strategy
            )
        made_count = 0
        gen_seconds += time.perf_counter() - gen_started
        batch: list = []
        while True:
            started_one = time.perf_counter()
            cand = next(stream, None)
            if cand is not None:
                cands.append(cand)
                made_count += 1
                rec = folder.records.get(cand.id, {})
                cand.evidence = dict(rec.get("suites", {}))
                if cand.status == "scored" and any(s.name not in cand.evidence for s in suites):
                    pending.append(cand)  # its touched gates come back with its evidence
                    batch.append(shipped(original, cand, remote))
                elif cand.model is not None:
                    stored = rec.get("touched")
                    cand.touched = list(stored) if isinstance(stored, list) else touched_gates(original, cand.model)
                    cand.model = None  # the report needs only its row (see `evaluated`)
            gen_seconds += time.perf_counter() - started_one
            if remote:
                time.sleep(0)  # hand the GIL to Dask's event loop (the local scheduler lives here)
            if batch and (
                cand is None
                or len(batch) >= parallel.guided_size(total - made_count + len(batch), workers, where, total)
            ):
                yield batch
                batch = []
            if cand is None:
                return

    def evaluated(index: int, result: object) -> None:
        cand = pending[index]
        if isinstance(result, TaskError):  # failed twice: reported as errored, the run goes on
            cand.evidence.update({s.name: {"status": f"incompetent: errored: {result.message}"} for s in suites})
            if cand.model is not None:
                cand.touched = touched_gates(original, cand.model)
        else:
            evidence, cand.touched = result  # type: ignore[misc]
            cand.evidence.update(evidence)
        folder.save_model(cand.id, cand.model)
        folder.append(
            {
                "id": cand.id,
                "site": cand.site,
                "operator": cand.operator,
                "suites": cand.evidence,
                "touched": cand.touched,
            }
        )
        # saved and scored: from here the report needs only its row, so its circuit is let go
        # (32,692 DRNN mutants held ~430 MB of IR in the client until the report was written)
        cand.model = None
        tick(1)

    def finished(index: int, result: object) -> None:  # null copies first, then the mutants
        if index < len(copies):
            null_results[index] = result
        else:
            evaluated(index - len(copies), result)

    copies_out = [shipped(original, c, remote) for c in copies]
    parallel.run_tasks(_evaluate_task, shared, copies_out, where, finished, later=generate)
    nulls = null_evidence(copies, [null_results[i] for i in range(len(copies))], suites)
    eval_seconds = time.perf_counter() - started - gen_seconds
    rows = [candidate_row(c) for c in cands]
    data = {
        "meta": {
            "format": FORMAT,
            "model": original.source,
            "model_sha256": original.sha256,
            "num_classes": original.num_classes,
            "classes": original.classes,
            "seed": opts.seed,
            "noise": None
            if noise is None
            else {"name": getattr(noise, "name", None), "sha256": getattr(noise, "sha256", None)},
            "versions": report.versions(),
            "command": list(command or []),
            "options": opts.to_dict(),
        },
        "circuit": {
            "num_qubits": original.ir.num_qubits,
            "gates": [[g.name, list(g.qubits)] for g in original.ir.gates],
            "qasm_path": "original/model.qasm",
        },
        "generation": generation,
        "suites_info": {
            s.name: {
                "inputs": int(len(s.y)),
                "labels": [int(v) for v in s.y],
                "correct": [int(v) for v in masks[s.name]],
            }
            for s in suites
        },
        "null": nulls,
        "mutants": rows,
    }
    result = build_report(data, opts.criterion, opts.correction, opts.scoring)
    if out is not None:
        report.write_text_atomic(out / "report.json", report.to_json(result))
    n_eval = sum(c.status == "scored" for c in cands)
    timing = {
        "generation_seconds": gen_seconds,
        "generation_seconds_per_mutant": gen_seconds / max(len(cands), 1),
        "eval_seconds_per_mutant": eval_seconds / max(n_eval, 1),
    }
    return result, timing


def candidate_row(c: Candidate) -> dict:
    status = c.status
    if status == "scored":
        evs = list(c.evidence.values())
        if evs and all(e.get("status", "").startswith("incompetent") for e in evs):
            status = evs[0]["status"]
        elif evs and all(e.get("status") == "equivalent" for e in evs):
            status = "equivalent"
    return {
        "id": c.id,
        "operator": c.operator,
        "cell": c.cell,
        "site": c.site,
        "status": status,
        "percentage": c.percentage,
        "search": c.search,
        "touched": c.touched,
        "evidence": {
            k: v for k, v in sorted(c.evidence.items()) if v.get("status") == "ok" or v.get("status") == "equivalent"
        },
    }


# ---------------------------------------------------------------- the report (pure)


def build_report(data: dict, criterion: str, correction: str, scoring: str) -> dict:
    """Verdicts, scores and tables from stored rows; re-deciding needs no simulation."""
    meta = dict(data["meta"], criterion=criterion, correction=correction, scoring=scoring)
    alpha, effect = meta["options"]["settings"]["alpha"], meta["options"]["settings"]["effect"]
    classes, num_classes = meta["classes"], meta["num_classes"]
    scored = [
        m
        for m in data["mutants"]
        if m["status"] not in ("equivalent", "not-effective") and not m["status"].startswith("incompetent")
    ]
    suites_out, matrix_rows = {}, {m["id"]: [] for m in scored}
    verdicts_by_suite = {}
    for name, info in data["suites_info"].items():
        labels = np.asarray(info["labels"])
        ev = {m["id"]: m["evidence"][name] for m in scored if name in m["evidence"]}
        verdicts = criteria.decide(ev, labels, classes, criterion, correction, alpha, effect)
        for v in verdicts.values():  # 'killed' follows the scoring; the whole-suite verdict is kept beside it
            v["killed_overall"] = v["killed"]
            v["killed"] = bool(v["killed_classes"]) if scoring == "class" else v["killed_overall"]
            v["undecided"] = bool(v.get("undecided_classes" if scoring == "class" else "undecided_overall"))
        verdicts_by_suite[name] = verdicts
        null = criteria.decide(data["null"][name], labels, classes, criterion, correction, alpha, effect)
        for v in null.values():
            v["killed_overall"] = v["killed"]
        present = len(set(info["labels"]))
        null_control = null_summary(null, scoring, present, alpha)
        s = criteria.scores(verdicts, num_classes)
        k, n = criteria.counts(verdicts, num_classes)[scoring]
        per_op: dict[str, dict] = {}
        per_cell: dict[str, dict] = {}
        for m in scored:
            v = verdicts.get(m["id"])
            if v is None:
                continue
            for key, table in ((m["operator"], per_op), (m["cell"], per_cell)):
                row = table.setdefault(
                    key, {"total": 0, "killed": 0, "killed_overall": 0, "killed_classes": 0, "undecided": 0}
                )
                if v["undecided"]:
                    row["undecided"] += 1
                    continue
                row["total"] += 1
                row["killed"] += int(v["killed"])
                row["killed_overall"] += int(v["killed_overall"])
                row["killed_classes"] += len(v["killed_classes"])
            matrix_rows[m["id"]].append(int(v["killed"]))
        for table in (per_op, per_cell):
            for row in table.values():
                t = row["total"]
                row["class_score"] = row["killed_classes"] / (t * num_classes) if t else None
                row["plain_score"] = row["killed_overall"] / t if t else None
                row["mutation_score"] = row[f"{scoring}_score"]
                hits, trials = (row["killed_classes"], t * num_classes) if scoring == "class" else (row["killed"], t)
                row["interval"] = intervals.wilson(hits, trials)
        shots_used = sum(v.get("shots", 0) for v in verdicts.values())
        suites_out[name] = {
            "inputs": info["inputs"],
            "correctly_classified": int(sum(info["correct"])),
            "scored_mutants": len(verdicts),
            "killed": sum(v["killed"] for v in verdicts.values()),
            "undecided": sum(v["undecided"] for v in verdicts.values()),
            "class_score": s["class"],
            "plain_score": s["plain"],
            "mutation_score": s[scoring],
            "mutation_score_interval": intervals.wilson(k, n),
            "null_control_kill_rate": null_control["rate"],
            "null_control": null_control,
            "shots_used": shots_used or None,
            "per_operator": dict(sorted(per_op.items())),
            "per_cell": dict(sorted(per_cell.items())),
        }
    mutants = []
    for m in data["mutants"]:
        row = {
            k: m[k] for k in ("id", "operator", "cell", "site", "status", "percentage", "search", "touched", "evidence")
        }
        verdicts = {
            name: verdicts_by_suite[name][m["id"]] for name in verdicts_by_suite if m["id"] in verdicts_by_suite[name]
        }
        row["verdicts"] = verdicts
        if verdicts and row["status"] == "scored":
            if any(v["killed"] for v in verdicts.values()):
                row["status"] = "killed"
            elif any(v["undecided"] for v in verdicts.values()):
                row["status"] = "undecided"
            else:
                row["status"] = "survived"
        mutants.append(row)
    first = next(iter(suites_out.values()), None)
    per_operator_status: dict[str, dict] = {}
    for m in mutants:
        row = per_operator_status.setdefault(m["operator"], {})
        key = "incompetent" if m["status"].startswith("incompetent") else m["status"]
        row[key] = row.get(key, 0) + 1
    warnings = [
        f"{name}: identical copies were killed {100 * s['null_control']['rate']:.1f}% of the time "
        f"({s['null_control']['killed']} of {s['null_control']['copies']}), significantly above alpha = {alpha}: "
        f"the {criterion} scores measure shot noise"
        for name, s in suites_out.items()
        if s["null_control"]["exceeds_alpha"]
    ]
    return {
        "meta": meta,
        "circuit": data["circuit"],
        "generation": data["generation"],
        "suites": suites_out,
        "mutation_score": None if first is None else first["mutation_score"],
        "mutation_score_interval": None if first is None else first["mutation_score_interval"],
        "warnings": warnings,
        "operators": dict(sorted(per_operator_status.items())),
        "kill_matrix": {
            "suites": list(suites_out),
            "mutants": sorted(matrix_rows),
            "rows": [matrix_rows[k] for k in sorted(matrix_rows)],
        },
        "mutants": mutants,
        "stored": {"suites_info": data["suites_info"], "null": data["null"]},
    }


def null_summary(null: dict[str, dict], scoring: str, classes_present: int, alpha: float) -> dict:
    """The null control's false-kill count, rate, Clopper-Pearson interval, and whether it is
    significantly above alpha (one-sided exact binomial test at 1%)."""
    if not null:
        return {"copies": 0, "killed": 0, "rate": None, "interval": None, "exceeds_alpha": False}
    if scoring == "class":
        k, n = sum(len(v["killed_classes"]) for v in null.values()), len(null) * max(classes_present, 1)
    else:
        k, n = sum(bool(v["killed_overall"]) for v in null.values()), len(null)
    return {
        "copies": len(null),
        "killed": k,
        "trials": n,
        "rate": k / n,
        "interval": intervals.clopper_pearson(k, n),
        "exceeds_alpha": intervals.exceeds(k, n, alpha),
    }


def redecide(
    result: dict, criterion: str | None = None, correction: str | None = None, scoring: str | None = None
) -> dict:
    """The same run judged by another criterion / correction / scoring (from a report alone)."""
    meta = result["meta"]
    data = {
        "meta": {k: v for k, v in meta.items() if k not in ("criterion", "correction", "scoring")},
        "circuit": result["circuit"],
        "generation": result["generation"],
        "suites_info": result["stored"]["suites_info"],
        "null": result["stored"]["null"],
        "mutants": [
            dict(m, status="scored" if m["status"] in ("killed", "survived", "undecided") else m["status"])
            for m in result["mutants"]
        ],
    }
    for name, value, allowed in (
        ("criterion", criterion, criteria.CRITERIA),
        ("correction", correction, criteria.CORRECTIONS),
        ("scoring", scoring, criteria.SCORINGS),
    ):
        if value is not None and value not in allowed:
            raise InputError(f"--{name} must be one of {', '.join(allowed)}, got '{value}'")
    chosen = criterion or meta["criterion"]
    if correction is None:  # a new criterion brings its own default family control
        correction = meta["correction"] if chosen == meta["criterion"] else DEFAULT_CORRECTION[chosen]
    return build_report(data, chosen, correction, scoring or meta["scoring"])


def read_report(path: Path) -> dict:
    """A finished run's report.json (a run folder or the file); older formats refused by name."""
    file = path / "report.json" if path.is_dir() else path
    data = report.read_json(file)
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        raise InputError(f"{file}: not a qmltest mutation report")
    fmt = data["meta"].get("format")
    if fmt != FORMAT:
        raise InputError(f"{file}: format '{fmt}' is not {FORMAT}: re-run the mutation with this qmltest")
    return data


def null_kill_rate(
    probs: np.ndarray,
    y: np.ndarray,
    model: Model,
    repeats: int,
    shots: int,
    trials: int,
    seed: int,
    alpha: float = 0.05,
    effect: float = 0.5,
) -> float:
    """Fraction of `trials` in which an identical copy of the model is killed (must stay near alpha)."""
    kills = 0
    for t in range(trials):
        rng = np.random.default_rng(seed_of(seed, "null", t))
        base = stats.accuracy_distribution(probs, y, model.readout_matrix, model.num_classes, repeats, shots, rng)
        copy = stats.accuracy_distribution(probs, y, model.readout_matrix, model.num_classes, repeats, shots, rng)
        kills += stats.is_killed(base, copy, alpha, effect).killed
    return kills / trials
