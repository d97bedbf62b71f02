"""Statistical mutation killing (QuanForge Sec. 3.1, Eq. 1-3) and the Hoeffding shot bound (Sec. 4.1).

Repeated predictions are drawn from exact probabilities: one simulation per (model, input), then
n repeats x s shots of multinomial sampling, so n = 20 repeats cost about one simulation.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from qmltest.errors import InputError
from qmltest.model import readout
from qmltest.mutation.evidence import votes
from qmltest.util import dist


def finite(x: float | None) -> float | None:
    """A p-value or effect size as a report stores it: None for NaN, infinity or no value."""
    return None if x is None or x != x or x in (float("inf"), float("-inf")) else float(x)


def hoeffding_shots(epsilon: float, confidence: float, outputs: int) -> int:
    """Smallest s with 2 q exp(-2 s eps^2) <= 1 - delta: s >= ln(2q / (1 - delta)) / (2 eps^2)."""
    if not 1e-6 <= epsilon < 1:  # below 1e-6 the bound passes 10^12 shots (and 1e-300 squared is 0)
        raise InputError(f"--epsilon must be in [1e-06, 1), got {epsilon}")
    if not 0 < confidence < 1:
        raise InputError(f"--confidence must be in (0, 1), got {confidence}")
    if not 1 <= outputs <= 10**9:
        raise InputError(f"--outputs must be between 1 and 1e9, got {outputs}")
    return math.ceil(math.log(2 * outputs / (1 - confidence)) / (2 * epsilon**2))


def accuracy_distribution(
    probs: np.ndarray,
    y: np.ndarray,
    mapping: list[int],
    num_classes: int,
    repeats: int,
    shots: int | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """Accuracies of `repeats` repeated predictions (majority of `shots` shots per input).

    With shots=None every repeat is the exact prediction (a constant distribution).
    """
    if len(y) == 0:
        return np.full(repeats, np.nan)
    cmat = readout.class_matrix(mapping, num_classes)
    if shots is None:
        acc = float(np.mean(np.argmax(probs @ cmat, axis=1) == y))
        return np.full(repeats, acc)
    p = votes.normalized(probs)
    exact = majority_correct(p, y, cmat, shots)
    if exact is not None:  # each repeat's prediction is right with probability exact[i], independently
        return (rng.random((repeats, len(y))) < exact[None, :]).mean(axis=1)
    drawn = drawn_correct(p, y, cmat, shots, repeats, rng)
    if drawn is not None:
        return drawn
    counts = rng.multinomial(shots, np.broadcast_to(p, (repeats,) + p.shape))  # (repeats, N, S)
    pred = np.argmax(counts @ cmat, axis=2)
    return (pred == y[None, :]).mean(axis=1)


def drawn_correct(
    p: np.ndarray, y: np.ndarray, cmat: np.ndarray, shots: int, repeats: int, rng: np.random.Generator
) -> np.ndarray | None:
    """Accuracies of `repeats` majority votes when every state carries at most one class (states
    with none, e.g. QCL's unused outcomes, vote for nobody); None for other readouts.

    The votes are `votes.draw_correct`'s: shots drawn per class (and one "no class" bucket), and
    inputs whose vote a Chernoff bound decides are not drawn at all. On a trained model most inputs
    are decided, which makes sampling 4-5x cheaper than drawing every input's shots.
    """
    if not votes.is_class_readout(cmat):
        return None
    q = np.clip(p @ cmat, 0.0, 1.0)  # (N, K) class probabilities
    return votes.draw_correct(q, y, shots, repeats, rng).sum(axis=1) / len(y)


def majority_correct(p: np.ndarray, y: np.ndarray, cmat: np.ndarray, shots: int) -> np.ndarray | None:
    """Exact P(the majority of `shots` shots names class y_i), per input, for a two-class readout
    where every state carries one class (None otherwise: the caller draws the shots).

    Class 0's count is Binomial(shots, P0); ties go to the lower class (as `readout.predict`), so
    class 0 wins iff its count >= ceil(shots / 2). One tail probability replaces `repeats`
    multinomial draws of `shots` shots per input, with the same distribution of accuracies.
    """
    if cmat.shape[1] != 2 or not np.all((cmat == 0) | (cmat == 1)) or not np.all(cmat.sum(axis=1) == 1):
        return None
    p0 = np.clip(p @ cmat[:, 0], 0.0, 1.0)
    win0 = dist.binom_sf(-(-shots // 2) - 1, shots, p0)
    return np.where(y == 0, win0, 1.0 - win0)


def cohens_d(a: np.ndarray, b: np.ndarray) -> float:
    """|mean difference| / pooled standard deviation; inf when both are constant and differ."""
    na, nb = len(a), len(b)
    va = a.var(ddof=1) if na > 1 else 0.0
    vb = b.var(ddof=1) if nb > 1 else 0.0
    pooled = math.sqrt(((na - 1) * va + (nb - 1) * vb) / max(na + nb - 2, 1))
    diff = abs(float(a.mean() - b.mean()))
    if pooled == 0:
        return math.inf if diff > 0 else 0.0
    return diff / pooled


def glm_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """p-value of the model-vs-mutant coefficient in a Gaussian GLM with identity link (Eq. 2).

    The Wald test uses the t distribution (use_t) with the Pearson scale, so it is the pooled
    two-sample t-test; computed in closed form (a statsmodels fit per comparison cost ~2 ms, and a
    run makes several per mutant and suite). `glm_pvalue_statsmodels` is the fit, kept for tests.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    y = np.concatenate([a, b])
    if np.allclose(y, y[0]):
        return 1.0
    if a.var() == 0 and b.var() == 0:
        return 0.0  # two constant, different distributions: separated with certainty
    na, nb = len(a), len(b)
    df = na + nb - 2
    pooled = (((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()) / df
    t = (b.mean() - a.mean()) / math.sqrt(pooled * (1 / na + 1 / nb))
    return float(2 * dist.t_sf(abs(t), df))


def glm_pvalue_statsmodels(a: np.ndarray, b: np.ndarray) -> float:
    """The same p-value from a fitted statsmodels Gaussian GLM (reference for `glm_pvalue`).
    Imported here: `statsmodels.api` took 1.2 s of every mutation run's start-up."""
    import statsmodels.api as sm

    y = np.concatenate([a, b]).astype(float)
    x = sm.add_constant(np.concatenate([np.zeros(len(a)), np.ones(len(b))]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.GLM(y, x, family=sm.families.Gaussian()).fit(use_t=True)
    return float(fit.pvalues[1])


@dataclass(frozen=True)
class Verdict:
    killed: bool
    p_value: float
    effect_size: float


def is_killed(a_orig: np.ndarray, a_mut: np.ndarray, alpha: float = 0.05, beta: float = 0.5) -> Verdict:
    """Eq. 2: killed iff p < alpha and Cohen's d >= beta."""
    if np.isnan(a_orig).any() or np.isnan(a_mut).any():
        return Verdict(False, math.nan, math.nan)
    p = glm_pvalue(a_orig, a_mut)
    d = cohens_d(a_orig, a_mut)
    return Verdict(bool(p < alpha and d >= beta), p, d)


def rse(accuracies: list[float] | np.ndarray) -> float:
    """Eq. 1: std / (mean sqrt(n)) of a batch of mutant accuracies; inf for fewer than 2."""
    a = np.asarray(accuracies, dtype=float)
    if len(a) < 2:
        return math.inf
    mean = a.mean()
    if mean == 0:
        return math.inf
    return float(a.std(ddof=1) / (mean * math.sqrt(len(a))))


def is_nontrivial(a_mut: np.ndarray, tau_trivial: float = 0.75) -> bool:
    """Eq. 3: mean accuracy over the repeats at least tau_trivial."""
    return bool(np.mean(a_mut) >= tau_trivial)
