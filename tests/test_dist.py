"""qmltest.util.dist equals scipy.stats exactly (the same special functions, the same support rules),
edges and invalid parameters included, and keeps scipy.stats out of a mutation run's imports."""

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from qmltest.util import dist

K = np.array([-np.inf, -3, -1, -0.5, 0, 0.5, 1, 2, 2.5, 3, 7, 10, 10.5, 11, 400, np.inf, np.nan])
N = np.array([0, 1, 3, 10, 400, 1000, 2.5, -1])
P = np.array([0.0, 1e-12, 0.03, 0.5, 0.97, 1 - 1e-12, 1.0, -0.1, 1.1, np.nan])


def _grid(*axes: np.ndarray) -> list[np.ndarray]:
    return [a.reshape(-1) for a in np.meshgrid(*axes, indexing="ij")]


@pytest.mark.parametrize("name", ["cdf", "sf", "pmf"])
def test_binomial_functions_equal_scipy_stats_on_a_grid_with_edges(name: str) -> None:
    k, n, p = _grid(K, N, P)
    with np.errstate(all="ignore"):
        want = getattr(stats.binom, name)(k, n, p)
    got = getattr(dist, f"binom_{name}")(k, n, p)
    np.testing.assert_array_equal(got, want)
    assert float(getattr(dist, f"binom_{name}")(3, 10, 0.3)) == float(getattr(stats.binom, name)(3, 10, 0.3))


def test_beta_quantile_equals_scipy_stats() -> None:
    q, a, b = _grid(
        np.array([-0.1, 0, 1e-300, 0.025, 0.5, 0.975, 1, 1.1, np.nan]),
        np.array([1e-12, 0.5, 1, 7, 400, 0, -1]),
        np.array([1, 3.5, 401, 0]),
    )
    with np.errstate(all="ignore"):
        want = stats.beta.ppf(q, a, b)
    np.testing.assert_array_equal(dist.beta_ppf(q, a, b), want)


def test_student_t_and_normal_equal_scipy_stats() -> None:
    x, df = _grid(np.array([-np.inf, -40, -2.1, 0, 0.3, 2.1, 40, np.inf, np.nan]), np.array([0.5, 1, 38, 1e6, 0, -2]))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(dist.t_sf(x, df), stats.t.sf(x, df))
        q = np.array([-0.1, 0, 1e-10, 0.025, 0.5, 0.95, 0.975, 1, 1.5, np.nan])
        qq, dd = _grid(q, np.array([1, 2.5, 198, 0, -1]))
        np.testing.assert_array_equal(dist.t_ppf(qq, dd), stats.t.ppf(qq, dd))
        np.testing.assert_array_equal(dist.norm_ppf(q), stats.norm.ppf(q))
    assert dist.norm_ppf(0.975) == pytest.approx(1.959963984540054, abs=1e-15)


def test_a_mutation_run_does_not_import_scipy_stats() -> None:
    """The point of the module: 0.5 s of start-up. The mutation pipeline and interval code load without it."""
    code = (
        "import sys, qmltest.mutation.pipeline, qmltest.util.intervals, qmltest.mutation.evidence.sequential;"
        "print('scipy.stats' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_without_scipy_private_functions_it_falls_back_to_scipy_stats(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scipy without `_binom_*` / `_beta_ppf` in scipy.special gets scipy.stats itself: same values."""
    monkeypatch.setattr(dist, "_PRIVATE", False)
    k, n, p = _grid(np.array([-1, 0, 2, 9, 10]), np.array([0, 10]), np.array([0.0, 0.3, 1.0]))
    for name in ("cdf", "sf", "pmf"):
        np.testing.assert_array_equal(getattr(dist, f"binom_{name}")(k, n, p), getattr(stats.binom, name)(k, n, p))
    assert dist.beta_ppf(0.025, 3, 8) == stats.beta.ppf(0.025, 3, 8)
