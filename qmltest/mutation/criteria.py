"""Kill criteria: verdicts per (mutant, test suite) from the raw evidence a run stores.

Evaluation stores both kinds of evidence for every scored mutant and suite, so the criterion, the
multiple-comparison control and the scoring are choices at report time (`qmltest report` can
re-decide without simulating):

- ``statistical`` (QuanForge Eq. 2): killed when the GLM p-value < alpha and Cohen's d >= beta,
  per class (class-level score, Eq. 4) and on the whole suite (plain score). With ``holm`` or
  ``bh`` the p-values of one suite's family (every mutant, per class or overall) are adjusted
  first (statsmodels' multipletests: Holm step-down or Benjamini-Hochberg FDR).
- ``majority`` (efficient-QML paper Sec. IV-B): on the inputs the original classifies correctly, a
  mutant is killed when the majority of its shots mispredicts any of them; a class is killed when
  one of its inputs is.
"""

from __future__ import annotations

import math

import numpy as np

CRITERIA = ("statistical", "majority")
CORRECTIONS = ("none", "holm", "bh")
SCORINGS = ("class", "plain")


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
    """Verdicts {mutant id: {killed, killed_classes, killed_by}} for one suite's evidence.

    `evidence[id]` holds ``stat`` ({"all": [p, d], "classes": {index: [p, d]}}) and ``killed_by``
    (indices into the suite of mispredicted, correctly classified inputs; `labels` are the suite's
    class indices). Ids are processed in sorted order so the
    family of an adjustment never depends on evaluation order.
    """
    ids = sorted(evidence)
    if criterion == "majority":
        out = {}
        for mid in ids:
            ev = evidence[mid]
            by = list(ev["killed_by"])
            hit = sorted({int(labels[i]) for i in by})
            out[mid] = {"killed": bool(by), "killed_classes": [classes[c] for c in hit], "killed_by": by}
        return out
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


def _p(pair: list) -> float:
    return math.nan if pair[0] is None else float(pair[0])


def scores(verdicts: dict[str, dict], num_classes: int) -> dict[str, float | None]:
    """Class-level score (Eq. 4: killed classes / (|M| C)) and plain killed / total over scored mutants."""
    n = len(verdicts)
    if n == 0:
        return {"class": None, "plain": None}
    return {
        "class": sum(len(v["killed_classes"]) for v in verdicts.values()) / (n * num_classes),
        "plain": sum(v.get("killed_overall", v["killed"]) for v in verdicts.values()) / n,
    }
