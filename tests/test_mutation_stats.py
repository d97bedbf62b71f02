"""Statistical killing: Hoeffding bound, GLM = pooled t-test, false-kill rate of identical copies,
RSE and non-triviality by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import random_model
from scipy import stats as sps

from qmltest.mutation.evidence import stats, votes
from qmltest.mutation.pipeline import null_kill_rate
from qmltest.simulate.runner import model_probabilities


def test_hoeffding_bound_matches_paper() -> None:
    # s >= ln(2q / (1 - delta)) / (2 eps^2) = ln(80) / 0.005 = 876.4 for q = 2 (QuanForge Sec. 4.1)
    assert stats.hoeffding_shots(0.05, 0.95, 2) == 877
    assert stats.hoeffding_shots(0.05, 0.95, 3) == math.ceil(math.log(120) / 0.005)
    assert stats.hoeffding_shots(0.05, 0.95, 3) <= 1000  # the paper's s = 1000 covers both tasks


def test_glm_pvalue_equals_pooled_t_test() -> None:
    rng = np.random.default_rng(0)
    for _ in range(5):
        a, b = rng.normal(0.9, 0.02, 20), rng.normal(0.89, 0.03, 20)
        expected = sps.ttest_ind(a, b, equal_var=True).pvalue
        assert stats.glm_pvalue(a, b) == pytest.approx(expected, rel=1e-9)
        assert stats.glm_pvalue(a, b) == pytest.approx(stats.glm_pvalue_statsmodels(a, b), rel=1e-9)


def test_cohens_d_and_kill_rule() -> None:
    a, b = np.array([0.9, 0.92, 0.88, 0.9]), np.array([0.8, 0.82, 0.78, 0.8])
    sd = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    assert stats.cohens_d(a, b) == pytest.approx(0.1 / sd)
    assert stats.is_killed(a, b).killed
    assert not stats.is_killed(a, a.copy()).killed
    assert not stats.is_killed(a, b, beta=1e9).killed  # the effect size gate also applies


def test_rse_and_nontrivial_by_hand() -> None:
    acc = [0.9, 0.8, 0.85, 0.95]
    expected = np.std(acc, ddof=1) / (np.mean(acc) * 2)
    assert stats.rse(acc) == pytest.approx(expected)
    assert stats.rse([0.9]) == math.inf
    assert stats.is_nontrivial(np.array([0.8, 0.7]), 0.75)
    assert not stats.is_nontrivial(np.array([0.7, 0.7]), 0.75)


def test_accuracy_distribution_is_seeded_and_centered() -> None:
    probs = np.array([[0.7, 0.3], [0.45, 0.55], [0.9, 0.1]])
    y = np.array([0, 1, 0])
    a = stats.accuracy_distribution(probs, y, [0, 1], 2, 50, 1000, np.random.default_rng(1))
    b = stats.accuracy_distribution(probs, y, [0, 1], 2, 50, 1000, np.random.default_rng(1))
    assert np.array_equal(a, b) and a.shape == (50,)
    # input 2 (0.45/0.55) is right with probability P(Binomial(1000, 0.55) > 500) ~ 0.999
    assert a.mean() == pytest.approx(1.0, abs=0.01)
    exact = stats.accuracy_distribution(probs, y, [0, 1], 2, 5, None, np.random.default_rng(1))
    assert exact.tolist() == [1.0] * 5


def test_majority_correct_by_hand() -> None:
    """Two classes: class 0 wins 3 shots when it gets >= 2 of them (0.6^3 + 3 0.6^2 0.4 = 0.648);
    with 2 shots a 1-1 tie goes to class 0 (1 - 0.5^2 = 0.75)."""
    cmat = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])  # parity of 2 measured qubits
    p = np.array([[0.5, 0.3, 0.1, 0.1], [0.5, 0.3, 0.1, 0.1]])
    q = stats.majority_correct(p, np.array([0, 1]), cmat, 3)
    assert q is not None and q == pytest.approx([0.648, 0.352], abs=1e-12)
    half = stats.majority_correct(np.array([[0.5, 0.5]]), np.array([0]), np.eye(2), 2)
    assert half is not None and half[0] == pytest.approx(0.75, abs=1e-12)
    # three classes, or states that carry no class: the shots are drawn instead
    assert stats.majority_correct(np.ones((1, 3)) / 3, np.array([0]), np.eye(3), 10) is None
    assert stats.majority_correct(np.array([[0.5, 0.5]]), np.array([0]), np.array([[1.0, 0.0], [0.0, 0.0]]), 3) is None


def test_exact_majority_matches_drawn_shots() -> None:
    """The exact tail probability equals the frequency of multinomial-majority draws (4 sigma)."""
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(4), size=6)
    cmat = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    y = np.array([0, 1, 0, 1, 0, 1])
    q = stats.majority_correct(p, y, cmat, 15)
    assert q is not None
    trials = 40_000
    counts = rng.multinomial(15, np.broadcast_to(p, (trials,) + p.shape))
    freq = (np.argmax(counts @ cmat, axis=2) == y).mean(axis=0)
    assert np.all(np.abs(freq - q) <= 4 * np.sqrt(q * (1 - q) / trials) + 1e-9)


def test_identical_mutant_killed_at_most_about_alpha() -> None:
    """1000 seeded trials of an unchanged copy: the false-kill rate stays near alpha (binomial 3 sigma)."""
    model = random_model("zfm_ra", [0, 1])
    x = np.random.default_rng(0).uniform(0, np.pi, (40, 4))
    probs = model_probabilities(model, x)
    y = model.predict(probs)
    y[::4] = 1 - y[::4]  # some errors so accuracies vary between repeats
    rate = null_kill_rate(probs, y, model, repeats=20, shots=100, trials=1000, seed=7, alpha=0.05)
    assert 0.01 < rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 1000)  # live, and not above alpha


def test_drawn_correct_matches_state_level_shots() -> None:
    """Class-bucket draws with decided inputs skipped give the state-level multinomial's accuracy
    distribution: per-input frequencies agree within 4 sigma (3 classes, states with no class)."""
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(6), size=5)
    p[0] = [0.9, 0.02, 0.02, 0.02, 0.02, 0.02]  # decided for class 0
    p[1] = [0.3, 0.3, 0.1, 0.1, 0.1, 0.1]  # a 0/1 tie in probability: never decided
    cmat = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 0, 0]], dtype=float)
    y = np.array([0, 1, 2, 0, 1])
    trials, shots = 20_000, 25
    counts = rng.multinomial(shots, np.broadcast_to(p, (trials,) + p.shape))
    freq = (np.argmax(counts @ cmat, axis=2) == y).mean(axis=0)
    per_input = np.array(
        [stats.drawn_correct(p[i : i + 1], y[i : i + 1], cmat, shots, trials, rng).mean() for i in range(len(y))]
    )
    assert np.all(np.abs(per_input - freq) <= 4 * np.sqrt(freq * (1 - freq) * 2 / trials) + 1e-3)


def test_decided_inputs_draw_nothing() -> None:
    """Inputs whose vote cannot go wrong (Chernoff bound below 2^-64) use no random numbers."""
    p = np.array([[0.9, 0.05, 0.05, 0.0], [0.04, 0.9, 0.06, 0.0]])
    cmat = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    acc = stats.drawn_correct(p, np.array([0, 0]), cmat, 1000, 20, rng)
    assert acc is not None and acc.tolist() == [0.5] * 20
    assert rng.bit_generator.state == before
    # two shots, equal class probabilities: class 0 wins unless both shots go to class 1 (3/4)
    tie = stats.drawn_correct(np.array([[0.5, 0.5, 0.0, 0.0]]), np.array([0]), cmat, 2, 40_000, rng)
    assert tie is not None and tie.mean() == pytest.approx(0.75, abs=4 * math.sqrt(0.75 * 0.25 / 40_000))


def _wide_class_readout(rng: np.random.Generator, none: bool) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities over 2^11 outcomes (past `votes.BUCKET_OUTCOMES`) and a parity readout; with
    `none`, a quarter of the outcomes carry no class (QCL-style unused states)."""
    from qmltest.model import readout

    states = np.arange(2**11)
    mapping = np.array([bin(s).count("1") % 2 for s in states])
    if none:
        mapping[states % 4 == 3] = -1
    probs = rng.dirichlet(np.full(2**11, 0.2), size=40)
    return probs, readout.class_matrix(mapping, 2)


@pytest.mark.parametrize("none", [False, True])
def test_merged_class_buckets_give_the_full_readouts_accuracies(none: bool, iris_model) -> None:
    """`Evaluator.reduced` merges a wide class readout's outcomes per class: the accuracy
    distribution drawn from the buckets equals the one drawn from every outcome with the same seed
    (the exact two-class path) or within sampling error (the drawn path, a none bucket)."""
    from qmltest.model import artifact
    from qmltest.mutation.evidence.evaluator import Evaluator

    rng = np.random.default_rng(3)
    probs, cmat = _wide_class_readout(rng, none)
    y = rng.integers(0, 2, len(probs))
    ev = Evaluator(artifact.load(iris_model), 20, 1000, 0)
    merged, mmat = ev.reduced(probs, cmat)
    assert merged.shape == (len(probs), 3 if none else 2) and np.allclose(merged.sum(axis=1), 1.0)
    a = stats.accuracy_distribution(probs, y, cmat, 2, 400, 1000, np.random.default_rng(1))
    b = stats.accuracy_distribution(merged, y, mmat, 2, 400, 1000, np.random.default_rng(1))
    if not none:
        np.testing.assert_array_equal(a, b)
    else:  # two independent draws of 400 repeats: means agree within 5 standard errors
        se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        assert abs(a.mean() - b.mean()) <= 5 * se + 1e-12


def test_one_vote_by_bucket_follows_the_exact_win_probability() -> None:
    """A single majority vote drawn per class bucket (wide readouts) wins as often as the exact
    binomial probability says: 2,000 votes on an input with P(class 0) = 0.51 and a none bucket."""
    from scipy.stats import binom

    from qmltest.mutation.evidence import votes

    q = np.array([[0.408, 0.392, 0.2]])  # class 0, class 1, no class
    merged = (np.repeat(q, 2000, axis=0), np.vstack([np.eye(2), np.zeros((1, 2))]))
    wide = np.zeros((2000, votes.BUCKET_OUTCOMES + 1))
    pred = votes.one_vote(wide, np.zeros((wide.shape[1], 2)), None, 101, np.random.default_rng(0), merged)
    # P(class 0 wins) = sum over n0 of P(N0 = n0) P(N1 <= n0 | N0), ties to class 0 (the lower)
    p0 = sum(binom.pmf(n0, 101, 0.408) * binom.cdf(n0, 101 - n0, 0.392 / 0.592) for n0 in range(102))
    k = int(np.sum(pred == 0))
    lo, hi = binom.ppf(0.0005, 2000, p0), binom.isf(0.0005, 2000, p0)
    assert lo <= k <= hi, (k, 2000 * p0)


def test_blockwise_max_abs_diff_is_the_one_pass_number_exactly() -> None:
    from qmltest.mutation.evidence.evaluator import max_abs_diff

    rng = np.random.default_rng(7)
    for shape in ((100, 65536), (3, 5), (1, 1), (0, 4), (17, 4096)):
        a, b = rng.random(shape), rng.random(shape)
        expect = float(np.max(np.abs(a - b))) if a.size else 0.0
        assert max_abs_diff(a, b) == expect


def test_large_arrays_stay_on_the_heap_under_glibc() -> None:
    import platform

    from qmltest.util import gctune

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("mallopt is glibc's")
    assert gctune.keep_arrays_on_heap() is True


def test_wide_class_probabilities_equal_the_renormalized_sum() -> None:
    """Past BUCKET_OUTCOMES outcomes class_q sums before it divides: equal to rounding, and still
    clipped where a density path left a rounding negative."""
    rng = np.random.default_rng(0)
    m = 11
    probs = rng.random((6, 2**m))
    probs /= probs.sum(axis=1, keepdims=True)
    cmat = np.zeros((2**m, 3))
    cmat[np.arange(2**m), np.arange(2**m) % 3] = 1.0
    assert probs.shape[1] > votes.BUCKET_OUTCOMES
    np.testing.assert_allclose(votes.class_q(probs, cmat), votes.normalized(probs) @ cmat, rtol=0, atol=1e-15)
    probs[2, 5] = -1e-17
    q = votes.class_q(probs, cmat)
    np.testing.assert_allclose(q, votes.normalized(probs) @ cmat, rtol=0, atol=1e-15)
    assert (q >= 0).all()
    np.testing.assert_allclose(q.sum(axis=1), 1.0, rtol=0, atol=1e-14)
