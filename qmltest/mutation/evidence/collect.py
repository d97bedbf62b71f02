"""What is simulated per (mutant, suite): exact probabilities once, then every criterion's evidence
(statistical (p, d), vote p-values, one literal vote per input, sequential decisions); the null control;
the pure evaluation task that runs in-process or on a Dask worker."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

import numpy as np

from qmltest.data.labelled import Data
from qmltest.errors import QmlTestError
from qmltest.model import readout
from qmltest.model.artifact import Model
from qmltest.mutation.evidence import sequential, stats, values, votes
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.judge import killing as criteria
from qmltest.mutation.operators import delta as delta_mod
from qmltest.mutation.operators.mutant import Mutant
from qmltest.mutation.options import NULL_COPIES, Options
from qmltest.util.parallel import TaskError
from qmltest.util.seeds import seed_of


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


@dataclass(frozen=True)
class EvalShared:
    """What every evaluation task needs (scattered to workers once)."""

    evaluator: Evaluator
    suites: tuple[Data, ...]
    masks: dict[str, np.ndarray]
    opts: Options


def shipped(original: Model, cand: Mutant, remote: bool) -> Mutant:
    """The candidate as a task item; for remote workers its mutant as a delta from the original
    (see `delta`): in-process there is nothing to pickle, so the model goes as it is."""
    if cand.model is None or not remote:
        return replace(cand, evidence=dict(cand.evidence))
    if cand.model is original:  # a null copy: the worker takes the shared original
        return replace(cand, evidence=dict(cand.evidence), model=None)
    return replace(cand, evidence=dict(cand.evidence), model=None, delta=delta_mod.delta_of(original, cand.model))


def _materialized(original: Model, cand: Mutant) -> Mutant:
    """The candidate with its model: rebuilt from its delta, or the original for a null copy."""
    if cand.delta is not None:
        return replace(cand, model=delta_mod.apply(original, cand.delta), delta=None)
    if cand.model is None:  # a null copy
        return replace(cand, model=original)
    return cand


def _prepare_batch(shared: EvalShared, items: list[Mutant]) -> list[Mutant]:
    """A task's candidates with their models, and on the gpu backend their probabilities on each
    suite simulated as one mutants x inputs batch (`Evaluator.prefetch`) before the evidence."""
    out = [_materialized(shared.evaluator.original, c) for c in items]
    for s in shared.suites:  # DFC mutants that share a feature set share its Gram form (`linearity`)
        shared.evaluator.prepare_data_changes(
            [c.model for c in out if c.model is not None and s.name not in c.evidence], s
        )
    shared.evaluator.prefetch([([c.model for c in out if s.name not in c.evidence], s) for s in shared.suites])  # type: ignore[misc]
    return out


def _evaluate_task(shared: EvalShared, cand: Mutant) -> tuple[dict[str, dict], list[int]]:
    """Evidence of one candidate on the suites it has none for yet, and the original's gates it
    touches (found here rather than in the client, which on a small machine shares the cores)."""
    cand = _materialized(shared.evaluator.original, cand)
    assert cand.model is not None
    original = shared.evaluator.original
    touched = [] if cand.model is original else touched_gates(original, cand.model)
    evidence = {
        s.name: evidence_for(cand, s, shared.masks[s.name], shared.evaluator, shared.opts)
        for s in shared.suites
        if s.name not in cand.evidence
    }
    return evidence, touched


_evaluate_task.prepare = _prepare_batch  # type: ignore[attr-defined]  # run once per task (`parallel`)


def correct_mask(original: Model, evaluator: Evaluator, suite: Data) -> np.ndarray:
    """Inputs the original classifies correctly (exactly): the majority criterion's test suite
    (none for a regressor, which has no classes to be right about)."""
    if original.is_regressor:
        return np.zeros(len(suite.y), dtype=bool)
    probs = evaluator.original_probs(suite)
    return readout.predict(probs, evaluator.sim.matrix(original), original.num_classes) == suite.y


def evidence_for(cand: Mutant, suite: Data, correct: np.ndarray, evaluator: Evaluator, opts: Options) -> dict:
    """Every criterion's kill evidence of one mutant on one suite (or its incompetence): the
    statistical (p, d) pairs, the vote p-values of the majority criterion, one literal vote per
    input (majority-literal) and, with --sequential, each criterion's sequential decision."""
    assert cand.model is not None
    probs, matrix, status = evaluator.mutant_outcomes(cand.model, suite)
    if probs is None:
        return {"status": status}
    if evaluator.original.is_regressor:
        orig = (evaluator.original_probs(suite), evaluator.sim.matrix(evaluator.original))
        return values.evidence(probs, matrix, orig, suite, cand.id, opts.shots, opts.seed, status)
    classes = cand.model.num_classes

    def predict(p: np.ndarray) -> np.ndarray:  # the model's prediction, on outcomes or class buckets
        return readout.predict(p, matrix, classes)

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
        per_class[str(c)] = [stats.finite(v.p_value), stats.finite(v.effect_size)]
    idx = np.flatnonzero(correct)
    w0, exact = evaluator.original_win(suite, idx)
    rng = np.random.default_rng(seed_of(opts.seed, cand.id, suite.fingerprint, "votes"))
    merged, mmat = evaluator.reduced(probs, matrix) if opts.shots is not None else (probs, matrix)
    right = votes.model_votes(merged[idx], mmat, suite.y[idx], predict, opts.shots, reps, rng)
    k = right[:R].sum(axis=0)
    pv = votes.pvalues(k, R, w0)
    if opts.shots is None:
        pred = predict(probs[idx])
    else:
        rng = np.random.default_rng(seed_of(opts.seed, cand.id, suite.fingerprint, "majority"))
        bucketed = (merged[idx], mmat) if mmat is not matrix else None
        pred = votes.one_vote(probs[idx], matrix, predict, opts.shots, rng, bucketed)
    ev = {
        "status": "equivalent" if status == "equivalent" else "ok",
        "stat": {"all": [stats.finite(overall.p_value), stats.finite(overall.effect_size)], "classes": per_class},
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
    correction = opts.correction if opts.criterion == "majority" else criteria.REGISTRY["majority"].default_correction
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


def null_copies(original: Model, count: int = NULL_COPIES) -> list[Mutant]:
    """`count` identical copies of the original, evaluated like mutants (the null control)."""
    return [Mutant(f"null{r:03d}", "null", "", "", original, "scored") for r in range(count)]


def null_evidence(copies: list[Mutant], results: list[object], suites: list[Data]) -> dict[str, dict]:
    """Per suite, the evidence of every identical copy: the rate at which such copies are 'killed'
    is the criterion's false-kill rate."""
    out: dict[str, dict] = {s.name: {} for s in suites}
    for copy, result in zip(copies, results):
        if isinstance(result, TaskError):
            raise QmlTestError(f"the null control failed: {result.message}")
        for name, ev in result[0].items():  # type: ignore[index]
            out[name][copy.id] = {k: v for k, v in ev.items() if k != "status"}
    return out
