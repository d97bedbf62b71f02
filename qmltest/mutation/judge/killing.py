"""Kill criteria: verdicts per (mutant, test suite) from the raw evidence a run stores.

Evaluation stores both kinds of evidence for every scored mutant and suite, so the criterion, the
multiple-comparison control and the scoring are choices at report time (`qmltest report` can
re-decide without simulating):

- ``statistical`` (QuanForge Eq. 2): killed when the GLM p-value < alpha and Cohen's d >= beta,
  per class (class-level score, Eq. 4) and on the whole suite (plain score). With ``holm`` or
  ``bh`` the p-values of one suite's family (every mutant, per class or overall) are adjusted
  first (statsmodels' multipletests: Holm step-down or Benjamini-Hochberg FDR).
- ``majority`` (efficient-QML paper Sec. IV-B, as a test; `votes`): on the inputs the original
  classifies correctly, the mutant's R majority votes of S shots are right k_i times; p_i =
  P(Binomial(R, w_i) <= k_i) with w_i the original's exact chance of a right vote; killed when Holm
  (default) or BH over the inputs rejects any p_i at alpha; a class is killed when one of its
  rejected inputs is. Identical copies are killed at most alpha.
- ``majority-literal`` (the paper's rule as written): killed when one majority vote of S shots
  mispredicts any correctly classified input. Near-boundary inputs flip by shot noise alone, so
  identical copies are often killed: the null control prints that rate beside the score.

With ``--sequential`` the evidence carries each criterion's sequential decision (`sequential`):
killed, survived or undecided (the shot budget ran out first); undecided mutants are counted apart
from the score.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from qmltest.util import plugins

CORRECTIONS = ("none", "holm", "bh")
SCORINGS = ("class", "plain")


class Criterion:
    """A kill criterion: verdicts for one suite's stored evidence. Adding one is one subclass with
    a `name`, decorated with `@register` (the CLI, the report schema and `redecide` read REGISTRY)."""

    name: ClassVar[str] = ""
    default_correction: ClassVar[str] = "none"  # the family control when --correction is not given
    sequential: ClassVar[bool] = False  # whether --sequential evidence carries its decision

    def decide(
        self, evidence: dict[str, dict], labels: np.ndarray, classes: list, correction: str, alpha: float, effect: float
    ) -> dict[str, dict]:
        """{mutant id: {killed, killed_classes, killed_by}}; ids in sorted order (`decide`)."""
        raise NotImplementedError


REGISTRY: dict[str, Criterion] = {}


def register(cls: type[Criterion]) -> type[Criterion]:
    REGISTRY[cls.name] = cls()
    return cls


def _by_inputs(evidence: dict[str, dict], labels: np.ndarray, classes: list, killed_by) -> dict[str, dict]:
    """Verdicts of a criterion that kills on inputs: a class is killed when one of its inputs is."""
    out = {}
    for mid in sorted(evidence):
        by = killed_by(evidence[mid])
        hit = sorted({int(labels[i]) for i in by})
        out[mid] = {"killed": bool(by), "killed_classes": [classes[c] for c in hit], "killed_by": by}
    return out


@register
class Statistical(Criterion):
    """QuanForge Eq. 2: GLM p < alpha and Cohen's d >= effect, overall and per class (Eq. 4)."""

    name = "statistical"
    sequential = True

    def decide(self, evidence, labels, classes, correction, alpha, effect):
        ids = sorted(evidence)
        overall = adjust([_p(evidence[m]["stat"]["all"]) for m in ids], correction)
        keys = [(m, c) for m in ids for c in sorted(evidence[m]["stat"]["classes"], key=int)]
        per_class = dict(zip(keys, adjust([_p(evidence[m]["stat"]["classes"][c]) for m, c in keys], correction)))
        out = {}
        for mid, p_all in zip(ids, overall):
            stat = evidence[mid]["stat"]
            hit = [
                c
                for c in sorted(stat["classes"], key=int)
                if _killed(per_class[(mid, c)], stat["classes"][c][1], alpha, effect)
            ]
            out[mid] = {
                "killed": _killed(p_all, stat["all"][1], alpha, effect),
                "killed_classes": [classes[int(c)] for c in hit],
                "killed_by": [],
            }
        return out


@register
class Majority(Criterion):
    """The vote test (`votes`): Holm (default) or BH over the correct inputs' p-values."""

    name = "majority"
    default_correction = "holm"
    sequential = True

    def decide(self, evidence, labels, classes, correction, alpha, effect):
        return _by_inputs(evidence, labels, classes, lambda ev: _votes(ev, alpha, correction))


@register
class MajorityLiteral(Criterion):
    """The paper's rule as written: one vote of S shots mispredicts a correct input."""

    name = "majority-literal"

    def decide(self, evidence, labels, classes, correction, alpha, effect):
        return _by_inputs(evidence, labels, classes, lambda ev: list(ev["killed_by"]))


CRITERIA = tuple(REGISTRY)  # the built-in ones; the registry itself is what options and reports read


def get(name: str) -> Criterion:
    if name not in REGISTRY:
        from qmltest.errors import InputError

        raise InputError(f"--criterion must be one of {', '.join(REGISTRY)}, got '{name}'")
    return REGISTRY[name]


def adjust(pvalues: list[float], correction: str) -> list[float]:
    """Adjusted p-values (NaN stays NaN: an untestable comparison is never a kill)."""
    if correction == "none" or not pvalues:
        return list(pvalues)
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, dtype=float)
    ok = np.isfinite(p)
    out = np.full(len(p), math.nan)
    if ok.any():
        method = {"holm": "holm", "bh": "fdr_bh"}[correction]
        out[ok] = multipletests(p[ok], method=method)[1]
    return out.tolist()


def _killed(p: float | None, d: float | None, alpha: float, effect: float) -> bool:
    return p is not None and d is not None and math.isfinite(p) and p < alpha and d >= effect


def decide(
    evidence: dict[str, dict],
    labels: np.ndarray,
    classes: list,
    criterion: str,
    correction: str,
    alpha: float,
    effect: float,
) -> dict[str, dict]:
    """Verdicts {mutant id: {killed, killed_classes, killed_by}} for one suite's evidence, by the
    registered criterion (sequential decisions where the evidence carries them).

    `evidence[id]` holds ``stat`` ({"all": [p, d], "classes": {index: [p, d]}}), ``votes`` and
    ``killed_by`` (indices into the suite; `labels` are the suite's class indices). Ids are processed
    in sorted order so the family of an adjustment never depends on evaluation order.
    """
    rule = get(criterion)
    if rule.sequential and any("sequential" in ev for ev in evidence.values()):
        return {m: _sequential(evidence[m], labels, classes, criterion) for m in sorted(evidence)}
    return rule.decide(evidence, labels, classes, correction, alpha, effect)


def _votes(ev: dict, alpha: float, correction: str) -> list[int]:
    """Suite indices whose vote test rejects after the correction over the family of correct
    inputs (stored p-values are those below 1; the rest of the family has p = 1)."""
    from qmltest.mutation.evidence import votes

    v = ev["votes"]
    stored = sorted(v["p"].items(), key=lambda kv: int(kv[0]))
    p = np.ones(max(int(v["family"]), len(stored)))
    p[: len(stored)] = [float(x) for _, x in stored]
    hit = votes.rejected(p, alpha, correction)[: len(stored)]
    return [int(stored[j][0]) for j in np.flatnonzero(hit)]


def _sequential(ev: dict, labels: np.ndarray, classes: list, criterion: str) -> dict:
    """A verdict from a sequential decision: killed, survived or undecided."""
    seq = ev["sequential"]
    if criterion == "majority":
        m = seq["majority"]
        hit = sorted({int(labels[i]) for i in m["inputs"]})
        undecided = m["status"] == "undecided"
        return {
            "killed": m["status"] == "killed",
            "killed_classes": [classes[c] for c in hit],
            "killed_by": list(m["inputs"]),
            "undecided_overall": undecided,
            "undecided_classes": undecided,
            "shots": m["shots"],
        }
    st = seq["statistical"]
    per = st["classes"]
    hit = [c for c in sorted(per, key=int) if per[c]["status"] == "killed"]
    return {
        "killed": st["all"]["status"] == "killed",
        "killed_classes": [classes[int(c)] for c in hit],
        "killed_by": [],
        "undecided_overall": st["all"]["status"] == "undecided",
        "undecided_classes": not hit and any(v["status"] == "undecided" for v in per.values()),
        "shots": st["shots"],
    }


def _p(pair: list) -> float:
    return math.nan if pair[0] is None else float(pair[0])


def counts(verdicts: dict[str, dict], num_classes: int) -> dict[str, tuple[int, int]]:
    """(successes, trials) behind each score: class-level (Eq. 4: killed classes over |M| C) and
    plain (killed over |M|), over decided mutants (an undecided one is counted apart)."""
    cls = [v for v in verdicts.values() if not v.get("undecided_classes")]
    plain = [v for v in verdicts.values() if not v.get("undecided_overall")]
    return {
        "class": (sum(len(v["killed_classes"]) for v in cls), len(cls) * num_classes),
        "plain": (sum(bool(v.get("killed_overall", v["killed"])) for v in plain), len(plain)),
    }


def scores(verdicts: dict[str, dict], num_classes: int) -> dict[str, float | None]:
    """Class-level score (Eq. 4) and plain killed / total over decided, scored mutants."""
    return {k: (a / n if n else None) for k, (a, n) in counts(verdicts, num_classes).items()}


plugins.load("qmltest.criteria")  # other packages' kill criteria (their import registers them)
