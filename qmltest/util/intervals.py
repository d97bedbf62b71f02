"""Uncertainty of the figures a user reads: binomial intervals and two-proportion tests.

Every score qmltest prints is a proportion of independent-ish trials (mutants killed, classes
killed, identical copies killed, tests failed), so it carries a binomial interval:
Wilson's score interval (Wilson 1927) for scores, the exact Clopper-Pearson interval where a bound
must hold for certain (the null control against alpha).
"""

from __future__ import annotations

import math

from qmltest.util import dist

CONFIDENCE = 0.95


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> list[float] | None:
    """Wilson score interval [low, high] for k successes in n trials (None when n is 0)."""
    if n <= 0:
        return None
    z = float(dist.norm_ppf(0.5 + confidence / 2))
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))]  # rounding never excludes p


def clopper_pearson(k: int, n: int, confidence: float = CONFIDENCE) -> list[float] | None:
    """Exact (conservative) binomial interval for k successes in n trials."""
    if n <= 0:
        return None
    tail = (1 - confidence) / 2
    lo = 0.0 if k == 0 else float(dist.beta_ppf(tail, k, n - k + 1))
    hi = 1.0 if k == n else float(dist.beta_ppf(1 - tail, k + 1, n - k))
    return [lo, hi]


def exceeds(k: int, n: int, rate: float, level: float = 0.01) -> bool:
    """True when k of n is significantly above `rate` (one-sided exact binomial test at `level`):
    the null control's false-kill count against alpha."""
    if n <= 0:
        return False
    return bool(dist.binom_sf(k - 1, n, rate) < level)


def two_proportions(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided p-value that k1/n1 and k2/n2 come from one rate (Fisher's exact test)."""
    if n1 <= 0 or n2 <= 0:
        return math.nan
    from scipy.stats import fisher_exact

    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


def fmt(value: float | None, interval: tuple[float, float] | list[float] | None, percent: bool = False) -> str:
    """'0.87 [0.82, 0.91]' (or '87.0% [82.0, 91.0]'); '-' when there is no value."""
    if value is None:
        return "-"
    if percent:
        core = f"{100 * value:.1f}%"
        return core if interval is None else f"{core} [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"
    core = f"{value:.2f}"
    return core if interval is None else f"{core} [{interval[0]:.2f}, {interval[1]:.2f}]"


def fmt_g(value: float | None, interval: tuple[float, float] | list[float] | None) -> str:
    """'0.1134 [0.1027, 0.1257]': four significant digits, for figures of any scale (an MSE)."""
    if value is None:
        return "-"
    return f"{value:.4g}" if interval is None else f"{value:.4g} [{interval[0]:.4g}, {interval[1]:.4g}]"
