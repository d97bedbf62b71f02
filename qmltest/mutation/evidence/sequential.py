"""Group-sequential kill decisions: stop sampling a mutant once killed or survived is decided.

The evidence of one (mutant, suite) grows in repeats (R predictions of S shots each). At looks
n_1 < ... < n_L (doubling from `FIRST_LOOK` up to the shot budget) the criterion is applied with
Bonferroni alpha spending, alpha / L per look, so over all looks an identical copy is killed at most
alpha (the union bound). Futility ("survived") is decided at beta / L per look:

- statistical (QuanForge Eq. 2): killed when p < alpha/L and d >= effect; survived when the
  (1 - beta/L) upper confidence bound of |mean difference| is below effect x pooled sd (a mutant
  whose true effect is d = effect survives with probability about beta; the pooled sd is taken as
  known, so the bound is approximate at small n);
- majority (`votes`): killed when Holm (or BH) at alpha/L rejects an input; survived when on every
  input the (1 - beta/L) Clopper-Pearson lower bound of the mutant's correct-vote rate exceeds the
  original's w_i minus `margin` (a mutant worse than the original by `margin` on some input
  survives with probability at most beta).

Neither decided at the last look: **undecided**, counted apart from the score.
"""

from __future__ import annotations

import math

import numpy as np

from qmltest.mutation.evidence import stats, votes
from qmltest.util import dist

FIRST_LOOK = 5


def schedule(max_repeats: int, first: int = FIRST_LOOK) -> list[int]:
    """Look points: first, 2 first, 4 first, ... and the budget itself."""
    if max_repeats < 2:
        raise ValueError("a sequential design needs at least 2 repeats")
    out, n = [], min(first, max_repeats)
    while n < max_repeats:
        out.append(n)
        n *= 2
    return out + [max_repeats]


def statistical(base: np.ndarray, mut: np.ndarray, looks: list[int], alpha: float, beta: float, effect: float) -> dict:
    """Sequential Eq. 2 on two accuracy sequences (at least looks[-1] repeats each)."""
    spend_a, spend_b = alpha / len(looks), beta / len(looks)
    for n in looks:
        a, b = base[:n], mut[:n]
        if np.isnan(a).any() or np.isnan(b).any():
            return {"status": "survived", "repeats": n}  # no inputs of this class: untestable
        p, d = stats.glm_pvalue(a, b), stats.cohens_d(a, b)
        if p < spend_a and d >= effect:
            return {"status": "killed", "repeats": n}
        pooled = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2) if n > 1 else 0.0
        diff = abs(float(b.mean() - a.mean()))
        if pooled == 0:
            if diff == 0:
                return {"status": "survived", "repeats": n}  # deterministic evidence: equal
            continue
        upper = diff + float(dist.t_ppf(1 - spend_b, 2 * n - 2)) * pooled * math.sqrt(2 / n)
        if upper < effect * pooled:
            return {"status": "survived", "repeats": n}
    return {"status": "undecided", "repeats": looks[-1]}


def majority(
    correct: np.ndarray,
    w0: np.ndarray,
    looks: list[int],
    alpha: float,
    beta: float,
    margin: float,
    correction: str,
) -> dict:
    """Sequential vote test: `correct` (R_max, m) booleans of the mutant's votes on the family's m
    inputs, w0 the original's exact correct-vote probabilities. `inputs` lists the rejected
    positions (into the family) when killed."""
    spend_a, spend_b = alpha / len(looks), beta / len(looks)
    if correct.shape[1] == 0:
        return {"status": "survived", "repeats": looks[0], "inputs": []}
    for n in looks:
        k = correct[:n].sum(axis=0)
        hit = votes.rejected(votes.pvalues(k, n, w0), spend_a, correction)
        if hit.any():
            return {"status": "killed", "repeats": n, "inputs": [int(i) for i in np.flatnonzero(hit)]}
        if np.all(votes.lower_bound(k, n, 1 - spend_b) > w0 - margin):
            return {"status": "survived", "repeats": n, "inputs": []}
    return {"status": "undecided", "repeats": looks[-1], "inputs": []}
