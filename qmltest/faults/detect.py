"""Whether a test suite detects a real fault: the faulty model judged against the original by the
very kill criterion that judges mutants (`mutation.evidence.collect.evidence_for` then
`mutation.judge.killing.decide`), with the same options, seeds and evaluator, so a fault's
"detected" and a mutant's "killed" are one test (QuanForge Eq. 2 under --criterion statistical)."""

from __future__ import annotations

import numpy as np

from qmltest.data.labelled import Data
from qmltest.errors import InputError
from qmltest.model.artifact import Model
from qmltest.mutation.evidence.collect import correct_mask, evidence_for
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.judge import killing
from qmltest.mutation.operators.mutant import Mutant, mutant_id
from qmltest.mutation.options import Options


def candidates(original: Model, faulty: dict[str, Model]) -> dict[str, Mutant]:
    """One scored-mutant record per faulty model, its id made by the mutants' own recipe."""
    return {
        kind: Mutant(mutant_id(original.sha256, "fault", kind, ""), "fault/" + kind, "", kind, model, "ok")
        for kind, model in faulty.items()
    }


def detected(
    original: Model, faulty: dict[str, Model], suites: list[Data], opts: Options
) -> dict[str, dict[str, dict]]:
    """{suite name: {fault kind: verdict}}; a verdict is `killing.decide`'s ({killed, ...}) read as
    detection. The adjustment family (--correction) is the suite's faults, as it is the mutants."""
    if original.is_regressor or original.is_kernel:
        raise InputError("the real-fault check runs on circuit classifiers")
    opts = opts.resolved()
    evaluator = Evaluator(original, opts.repeats, opts.shots, opts.seed, None, None, max(len(s.y) for s in suites))
    cands = candidates(original, faulty)
    classes = list(range(original.num_classes))
    out: dict[str, dict[str, dict]] = {}
    for suite in suites:
        mask = correct_mask(original, evaluator, suite)
        evaluator.original_win(suite, np.flatnonzero(mask))
        evidence = {c.id: evidence_for(c, suite, mask, evaluator, opts) for c in cands.values()}
        scored = {mid: ev for mid, ev in evidence.items() if "stat" in ev}
        s = opts.settings
        verdicts = killing.decide(scored, suite.y, classes, opts.criterion, opts.correction, s.alpha, s.effect)
        by_class = opts.scoring == "class"
        out[suite.name] = {}
        for kind, c in cands.items():
            v = verdicts.get(c.id, {"killed": False, "killed_classes": [], "killed_by": []})
            hit = bool(v["killed_classes"]) if by_class else bool(v["killed"])
            out[suite.name][kind] = {**v, "detected": hit, "status": evidence[c.id].get("status")}
    return out
