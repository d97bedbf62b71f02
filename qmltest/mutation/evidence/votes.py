"""Majority votes under shots, as a test (efficient-QML paper Sec. IV-B, made to hold its level).

The paper kills a mutant when "the majority of its shots" mispredicts a correctly classified
input. One vote of S shots on an input near the decision boundary is a coin flip, so that literal
rule kills identical copies of a model most of the time (`majority-literal`). Here a vote is a
Bernoulli trial whose success probability w_i = P(majority of S shots names y_i) is *computed*
from the exact class probabilities (noise-free and density-matrix runs), so a mutant can be tested
against the original's w_i instead of against a single draw:

    k_i ~ Binomial(R, w_i^mut)        (R repeated votes of the mutant on input i)
    p_i = P(Binomial(R, w_i^orig) <= k_i)        (exact one-sided binomial test)

and the mutant is killed when Holm (family-wise) or Benjamini-Hochberg (FDR) rejects any p_i over
the suite's correctly classified inputs. The p-values are super-uniform under H0 (a copy), so the
null control is killed at most alpha: see `tests/test_verdicts.py`.
"""

from __future__ import annotations

import math

import numpy as np

from qmltest.model.readout import BUCKET_OUTCOMES, class_q, is_class_readout, normalized  # noqa: F401
from qmltest.util import dist

DECIDED = 2.0**-64
"""An input whose vote goes against its likeliest class with probability below this (a Chernoff
bound) is decided: w is 1 for that class and 0 for the others."""

MONTE_CARLO_VOTES = 1 << 16
"""Votes drawn to estimate w where no exact form is implemented (four or more classes that are all
in play on one input, or an expectation-value readout); such evidence is marked inexact."""


def undecided(q: np.ndarray, shots: int) -> np.ndarray:
    """Inputs whose vote is not decided: sum_j (1 - q_t - q_j + 2 sqrt(q_t q_j))^S >= DECIDED,
    where t is the likeliest class (Chernoff bound on P(class j ties or beats t))."""
    top = np.argmax(q, axis=1)
    qt = q[np.arange(len(q)), top][:, None]
    base = np.clip(1.0 - qt - q + 2.0 * np.sqrt(qt * q), 0.0, 1.0)
    base[np.arange(len(q)), top] = 0.0
    return (base**shots).sum(axis=1) >= DECIDED


def _significant(n: int, p: float, width: float = 14.0) -> tuple[int, int]:
    """Count range of Binomial(n, p) outside which the mass is negligible (< 1e-40)."""
    sd = math.sqrt(max(n * p * (1 - p), 0.0))
    return max(0, math.floor(n * p - width * sd - 2)), min(n, math.ceil(n * p + width * sd + 2))


def _win_exact(q: np.ndarray, y: int, shots: int) -> float | None:
    """P(class y wins a vote of `shots` shots), q the (K,) class probabilities (the rest of the mass
    votes for nobody); ties go to the lower class. None past three classes in play.

    Conditioning on N_y = t, the other classes' counts are multinomial over the remaining S - t
    shots, and y wins iff N_j <= t - 1 for j < y and N_j <= t for j > y.
    """
    others = [j for j in range(len(q)) if j != y and q[j] > 0]
    qy = float(q[y])
    lo, hi = _significant(shots, qy)
    t = np.arange(lo, hi + 1)
    pt = dist.binom_pmf(t, shots, qy)
    m = shots - t
    if not others:  # every other shot votes for nobody
        ok = np.ones(len(t), bool) if y == 0 else t >= 1
        return float(np.sum(pt[ok]))
    rest = 1.0 - qy
    if rest <= 0:
        return float(pt[t == shots].sum())
    limit = {j: t - 1 if j < y else t for j in others}
    if len(others) == 1:
        j = others[0]
        return float(np.sum(pt * dist.binom_cdf(limit[j], m, min(q[j] / rest, 1.0))))
    if len(others) == 2:
        j1, j2 = others
        r1 = min(q[j1] / rest, 1.0)
        r2 = min(q[j2] / max(rest - q[j1], 1e-300), 1.0) if rest - q[j1] > 0 else 0.0
        a_lo, _ = _significant(int(m.min()), r1)
        _, a_hi = _significant(int(m.max()), r1)
        a = np.arange(a_lo, a_hi + 1)[None, :]
        mm = m[:, None]
        valid = (a <= mm) & (a <= limit[j1][:, None])
        inner = dist.binom_pmf(a, mm, r1) * dist.binom_cdf(limit[j2][:, None], np.maximum(mm - a, 0), r2)
        return float(np.sum(pt * np.where(valid, inner, 0.0).sum(axis=1)))
    return None


def win_probability(
    q: np.ndarray, y: np.ndarray, shots: int, rng: np.random.Generator | None = None
) -> tuple[np.ndarray, bool]:
    """(w, exact): w_i = P(a majority vote of `shots` shots names class y_i), q (N, K) class
    probabilities of a class readout. Decided inputs need no work; undecided ones are computed
    exactly for up to three classes in play, else estimated from MONTE_CARLO_VOTES votes."""
    q = np.clip(np.asarray(q, dtype=float), 0.0, 1.0)
    y = np.asarray(y, dtype=int)
    top = np.argmax(q, axis=1)
    w = (top == y).astype(float)
    exact = True
    for i in np.flatnonzero(undecided(q, shots)):
        v = _win_exact(q[i], int(y[i]), shots)
        if v is None:
            exact = False
            gen = rng if rng is not None else np.random.default_rng(0)
            v = float(np.mean(draw_correct(q[i : i + 1], y[i : i + 1], shots, MONTE_CARLO_VOTES, gen)))
        w[i] = min(max(v, 0.0), 1.0)
    return w, exact


def draw_correct(q: np.ndarray, y: np.ndarray, shots: int, votes: int, rng: np.random.Generator) -> np.ndarray:
    """(votes, N) booleans: is each of `votes` drawn majority votes of input i right? Class counts
    of a state multinomial are multinomial over classes plus one 'nobody' bucket; decided inputs are
    not drawn."""
    q = np.clip(np.asarray(q, dtype=float), 0.0, 1.0)
    out = np.broadcast_to(np.argmax(q, axis=1) == y, (votes, len(q))).copy()
    idx = np.flatnonzero(undecided(q, shots))
    if len(idx):
        qu = q[idx]
        buckets = np.concatenate([qu, np.clip(1.0 - qu.sum(axis=1, keepdims=True), 0.0, 1.0)], axis=1)
        buckets /= buckets.sum(axis=1, keepdims=True)
        counts = rng.multinomial(shots, np.broadcast_to(buckets, (votes,) + buckets.shape))
        out[:, idx] = np.argmax(counts[..., : q.shape[1]], axis=2) == y[idx][None, :]
    return out


def draw_correct_counts(
    probs: np.ndarray, y: np.ndarray, predict, shots: int, votes: int, rng: np.random.Generator
) -> np.ndarray:
    """(votes, N) correctness of votes for any readout (expectation values included): shots drawn
    per state and `predict` applied to the counts. The general, slower path."""
    from qmltest.simulate import engine

    out = np.empty((votes, len(probs)), bool)
    for r in range(votes):
        out[r] = predict(engine.sample_counts(probs, shots, rng)) == y
    return out


def pvalues(k: np.ndarray, n: int | np.ndarray, w0: np.ndarray) -> np.ndarray:
    """Exact one-sided binomial p-values P(Binomial(n, w0_i) <= k_i): small when the mutant's votes
    are right less often than the original's would be."""
    return np.clip(dist.binom_cdf(np.asarray(k), n, np.clip(w0, 0.0, 1.0)), 0.0, 1.0)


def rejected(p: np.ndarray, alpha: float, correction: str) -> np.ndarray:
    """Boolean rejections of a family of p-values: Holm step-down (FWER), Benjamini-Hochberg (FDR)
    or none (each at alpha; the family's error then grows with its size)."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    out = np.zeros(m, bool)
    if m == 0:
        return out
    order = np.argsort(p, kind="stable")
    ps = p[order]
    if correction == "none":
        return p < alpha
    if correction == "holm":
        ok = ps <= alpha / (m - np.arange(m))
        stop = m if ok.all() else int(np.argmin(ok))
        out[order[:stop]] = True
        return out
    if correction == "bh":
        ok = np.flatnonzero(ps <= alpha * np.arange(1, m + 1) / m)
        if len(ok):
            out[order[: ok[-1] + 1]] = True
        return out
    raise ValueError(f"unknown correction {correction!r}")


def lower_bound(k: np.ndarray, n: int, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound on a success probability at confidence `level`."""
    k = np.asarray(k, dtype=float)
    return np.where(k > 0, dist.beta_ppf(1 - level, np.maximum(k, 1e-12), n - k + 1), 0.0)


INEXACT_VOTES = 4096
"""Votes drawn for the original's w on a readout with no count-majority form (expectation values)."""


def original_win(
    probs: np.ndarray, cmat: np.ndarray, y: np.ndarray, predict, shots: int | None, rng: np.random.Generator
) -> tuple[np.ndarray, bool]:
    """The reference w of a model's votes on inputs (rows of `probs`): exact for class readouts
    (up to three classes in play), exact predictions with shots=None, else estimated by drawing."""
    if shots is None:
        return (predict(probs) == y).astype(float), True
    if is_class_readout(cmat):
        return win_probability(class_q(probs, cmat), y, shots, rng)
    return draw_correct_counts(probs, y, predict, shots, INEXACT_VOTES, rng).mean(axis=0), False


def one_vote(
    probs: np.ndarray, cmat: np.ndarray, predict, shots: int, rng: np.random.Generator, merged=None
) -> np.ndarray:
    """One majority vote of `shots` shots per input (row of `probs`): the predicted classes.

    Shots are drawn per outcome. Past `BUCKET_OUTCOMES` outcomes, `merged` (the class buckets
    of a class readout and their matrix, `Evaluator.reduced`) is drawn from instead: the same
    distribution of class counts, and the per-outcome draw cost 80 ms per suite on a 16-qubit
    all-measured readout."""
    from qmltest.simulate import engine

    if merged is not None and probs.shape[1] > BUCKET_OUTCOMES:
        buckets, bmat = merged
        return np.argmax(engine.sample_counts(buckets, shots, rng) @ bmat, axis=1)  # ties: lower class
    return predict(engine.sample_counts(probs, shots, rng))


def model_votes(
    probs: np.ndarray, cmat: np.ndarray, y: np.ndarray, predict, shots: int | None, repeats: int, rng
) -> np.ndarray:
    """(repeats, N) correctness of a model's repeated majority votes on inputs (rows of `probs`):
    exactly distributed as `repeats` votes of `shots` shots each, drawn per class bucket."""
    if shots is None:
        return np.broadcast_to(predict(probs) == y, (repeats, len(y))).copy()
    if is_class_readout(cmat):
        return draw_correct(class_q(probs, cmat), y, shots, repeats, rng)
    return draw_correct_counts(probs, y, predict, shots, repeats, rng)
