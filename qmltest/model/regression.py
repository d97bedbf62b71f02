"""How a regressor's outputs score against real targets: MSE, MAE and R^2, each with a 95%
bootstrap interval over the inputs, and the kill test for a regressor's mutants.

The interval is scipy's BCa bootstrap (Efron 1987, "Better bootstrap confidence intervals"),
resampling (output, target) pairs, seeded: the inputs are the sample, so the interval says how
much the figure would move on another draw of test inputs of the same size (for shot-estimated
outputs it also carries the shot noise those outputs hold).

A mutant is killed by the Diebold-Mariano idea (Diebold and Mariano 1995, "Comparing predictive
accuracy", J. Bus. Econ. Stat. 13(3)): per input, the loss differential d_i = (y'_i - t_i)^2 -
(y_i - t_i)^2 between the mutant's and the original's squared errors; the suite detects the mutant
when the d_i are not centred on zero. The test is Wilcoxon's signed-rank test (Wilcoxon 1945,
scipy.stats.wilcoxon, two-sided, zero differences dropped), with the effect size Cohen's d_z =
|mean d| / sd(d) against QuanForge's beta (Eq. 2 keeps both conditions). Under shots the mutant's
and the original's outputs are drawn independently, so for an identical copy each d_i is symmetric
about zero and the test rejects at most at alpha (the null control); exactly, an identical copy
has every d_i = 0 and is never killed.
"""

from __future__ import annotations

import math

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 2000
METRICS = ("mse", "mae", "r2")


def _r2(out: np.ndarray, t: np.ndarray, axis: int = -1) -> np.ndarray:
    ss_res = np.sum((t - out) ** 2, axis=axis)
    ss_tot = np.sum((t - np.mean(t, axis=axis, keepdims=True)) ** 2, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - ss_res / ss_tot


STATISTICS = {
    "mse": lambda o, t, axis=-1: np.mean((o - t) ** 2, axis=axis),
    "mae": lambda o, t, axis=-1: np.mean(np.abs(o - t), axis=axis),
    "r2": _r2,
}


def metrics(outputs: np.ndarray, targets: np.ndarray, seed: int = 0) -> dict:
    """{mse, mae, r2} and their `_interval` entries (None for fewer than 3 inputs, or R^2 of
    constant targets: undefined). R^2 is sklearn's r2_score: 1 - SS_res / SS_tot."""
    o, t = np.asarray(outputs, dtype=float), np.asarray(targets, dtype=float)
    out: dict = {}
    for name, stat in STATISTICS.items():
        value = float(stat(o, t)) if len(t) else math.nan
        out[name] = value if math.isfinite(value) else None
        out[f"{name}_interval"] = _interval(stat, o, t, seed) if out[name] is not None else None
    return out


def _interval(stat, o: np.ndarray, t: np.ndarray, seed: int) -> list[float] | None:
    """BCa bootstrap interval of a paired statistic; None where it is degenerate."""
    if len(t) < 3:
        return None
    from scipy import stats

    with np.errstate(all="ignore"):
        res = stats.bootstrap(
            (o, t),
            stat,
            paired=True,
            vectorized=True,
            n_resamples=RESAMPLES,
            confidence_level=CONFIDENCE,
            method="BCa",
            rng=np.random.default_rng(seed),
        )
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return [lo, hi] if math.isfinite(lo) and math.isfinite(hi) else None


def loss_test(mutant: np.ndarray, original: np.ndarray, targets: np.ndarray) -> tuple[float, float]:
    """(p, d_z) of the squared-error differential (module docstring): p = 1, d = 0 when the two
    models' errors agree on every input; p = 0, d = inf when every input moves the same way by the
    same amount (no spread: separated with certainty, as `stats.glm_pvalue` reads two constants)."""
    d = (np.asarray(mutant) - targets) ** 2 - (np.asarray(original) - targets) ** 2
    d = d[np.abs(d) > 1e-12 * (1.0 + np.abs(targets))]  # agreement up to rounding is no difference
    if len(d) == 0:
        return 1.0, 0.0
    sd = float(d.std(ddof=1)) if len(d) > 1 else 0.0
    if sd == 0.0:
        return (0.0, math.inf) if len(d) > 1 else (1.0, math.inf)
    from scipy import stats

    p = float(stats.wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)
    return p, abs(float(d.mean())) / sd
