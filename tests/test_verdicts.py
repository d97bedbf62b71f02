"""Verdicts that mean what they say under shots: identical copies are killed at most alpha, real
faults are killed with growing power, sequential decisions agree with fixed-sample ones, and the
intervals cover (issue: verdicts you can trust)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import fisher_exact

from qmltest import suites
from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.model import artifact
from qmltest.mutation import pipeline
from qmltest.mutation.evidence import sequential, stats, votes
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.judge import killing as criteria
from qmltest.mutation.operators import quanforge as qf_ops
from qmltest.mutation.operators.scope import Scope
from qmltest.simulate.runner import model_probabilities
from qmltest.util import intervals

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
COPIES = 200


# ---------------------------------------------------------------- exact vote probabilities


def test_two_class_vote_probability_is_the_binomial_tail() -> None:
    p = np.array([[0.51, 0.49], [0.3, 0.7], [0.5, 0.5], [0.499, 0.501]])
    y = np.array([0, 1, 1, 0])
    for shots in (1, 2, 101, 1000):
        w, exact = votes.win_probability(p, y, shots)
        assert exact
        np.testing.assert_allclose(w, stats.majority_correct(p, y, np.eye(2), shots), atol=1e-12)


@pytest.mark.parametrize(
    ("q", "y", "shots"),
    [
        ([[0.3, 0.29, 0.28], [0.35, 0.34, 0.1]], [1, 0], 400),  # three classes, a 'nobody' bucket
        ([[0.3, 0.29], [0.4, 0.39]], [1, 0], 101),  # two classes and unused outcomes (QCL)
        ([[0.34, 0.33, 0.33]], [2], 60),  # ties go to the lower class
    ],
)
def test_vote_probability_matches_drawn_votes(q, y, shots) -> None:
    """Exact w equals the frequency of drawn multinomial majority votes within 4.5 sigma."""
    q, y = np.array(q), np.array(y)
    w, exact = votes.win_probability(q, y, shots)
    assert exact
    n = 100_000
    freq = votes.draw_correct(q, y, shots, n, np.random.default_rng(3)).mean(axis=0)
    assert np.all(np.abs(freq - w) <= 4.5 * np.sqrt(w * (1 - w) / n) + 1e-9)


def test_corrections_match_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(0)
    for _ in range(50):
        p = np.concatenate([rng.random(20), rng.random(5) * 1e-3])
        for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
            assert list(votes.rejected(p, 0.05, ours)) == list(multipletests(p, 0.05, method=theirs)[0])


# ---------------------------------------------------------------- the null control holds alpha


def _suite(model_name: str, spec: str, kind: str | None, per_class: int) -> tuple[artifact.Model, Data]:
    model = artifact.load(MODELS / model_name)
    x, labels = datasets.select(spec, "test", model.classes, None if kind else per_class, 0)
    if kind:
        idx = suites.build(model, x, labels, kind, per_class, 0)
        x, labels = x[idx], labels[idx]
    return model, Data.of(f"{spec}/{kind}", model, x, labels)


def _null_kills(model: artifact.Model, data: Data, opts: pipeline.Options) -> dict[tuple[str, str], tuple[int, int]]:
    """(kills, trials) of COPIES identical copies under every criterion and scoring."""
    evaluator = Evaluator(model, opts.repeats, opts.shots, opts.seed)
    mask = pipeline.correct_mask(model, evaluator, data)
    copies = pipeline.null_copies(model, COPIES)
    ev = {c.id: pipeline.evidence_for(c, data, mask, evaluator, opts) for c in copies}
    labels = data.y
    out = {}
    for criterion in criteria.CRITERIA:
        verdicts = criteria.decide(
            ev, labels, model.classes, criterion, criteria.REGISTRY[criterion].default_correction, 0.05, 0.5
        )
        for scoring in criteria.SCORINGS:
            summary = pipeline.null_summary(verdicts, scoring, len(set(labels.tolist())), 0.05)
            out[(criterion, scoring)] = (summary["killed"], summary["trials"])
    return out


CASES = [
    ("qcl-mnist01", "mnist:all", "ori", 100),
    ("qcl-mnist01", "mnist:all", "lconf", 100),
    ("zzfm-su2-wine", "wine", None, 100),
    ("qcnn-mnist_0vr", "mnist_0vr", None, 100),
]


@pytest.mark.parametrize(("model_name", "spec", "kind", "per_class"), CASES)
def test_identical_copies_are_killed_at_most_alpha(model_name, spec, kind, per_class) -> None:
    """For the statistical and majority criteria at their defaults, 200 identical copies scored
    like mutants (20 repeats x 1000 shots) are not killed significantly more often than alpha
    (one-sided exact binomial test at 1%, class and plain scoring)."""
    model, data = _suite(model_name, spec, kind, per_class)
    kills = _null_kills(model, data, pipeline.Options(suite="qml"))
    for (criterion, scoring), (k, n) in kills.items():
        if criterion == "majority-literal":
            continue
        assert n >= COPIES
        assert not intervals.exceeds(k, n, 0.05), (criterion, scoring, k, n)
    if kind == "lconf":  # the paper's literal rule does not hold alpha
        k, n = kills[("majority-literal", "plain")]
        assert intervals.exceeds(k, n, 0.05) and k / n > 0.5


def test_literal_majority_is_flagged_in_the_report() -> None:
    """A run whose null control is significantly above alpha carries one warning naming the rate."""
    model, data = _suite("qcl-mnist01", "mnist", "lconf", 50)
    opts = pipeline.Options(suite="qml", operators=("ALD",), criterion="majority-literal", null_copies=100)
    result, _ = pipeline.run(model, [data], opts)
    s = result["suites"][data.name]
    assert s["null_control"]["exceeds_alpha"] and s["null_control"]["copies"] == 100
    assert len(result["warnings"]) == 1 and "identical copies were killed" in result["warnings"][0]
    lo, hi = s["null_control"]["interval"]
    assert lo <= s["null_control"]["rate"] <= hi and lo > 0.05
    again = pipeline.redecide(result, criterion="majority")
    assert again["warnings"] == [] and again["suites"][data.name]["null_control"]["killed"] <= 12


# ---------------------------------------------------------------- power


def _kill_rate(model: artifact.Model, data: Data, mutants: list[artifact.Model], criterion: str) -> tuple[int, int]:
    opts = pipeline.Options(suite="qml", criterion=criterion).resolved()
    evaluator = Evaluator(model, opts.repeats, opts.shots, opts.seed)
    mask = pipeline.correct_mask(model, evaluator, data)
    ev = {}
    for j, m in enumerate(mutants):
        cand = pipeline.Mutant(f"m{j:03d}", "PF", "all", "", m, "scored")
        ev[cand.id] = pipeline.evidence_for(cand, data, mask, evaluator, opts)
    v = criteria.decide(ev, data.y, model.classes, criterion, opts.correction, 0.05, 0.5)
    return sum(x["killed"] for x in v.values()), len(v)


def test_power_grows_with_the_fault_and_a_damaging_deletion_is_always_killed() -> None:
    model, data = _suite("qcl-mnist01", "mnist", "ori", 50)
    scales = (0.02, 0.1, 0.3, 1.0)
    for criterion in ("majority", "statistical"):
        rates = []
        for scale in scales:
            op = qf_ops.get("PF", scale=scale)
            mutants = []
            for j in range(40):
                new_ir, _ = op.mutate(model.ir, Scope(), 0.1, np.random.default_rng([j, 7]))
                mutants.append(model.with_ir(new_ir))
            rates.append(_kill_rate(model, data, mutants, criterion))
        for (k1, n1), (k2, n2) in zip(rates, rates[1:]):  # never significantly fewer kills at a larger scale
            assert fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative="greater").pvalue > 0.01, rates
        (k0, n0), (k3, n3) = rates[0], rates[-1]
        assert fisher_exact([[k3, n3 - k3], [k0, n0 - k0]], alternative="greater").pvalue < 1e-3, rates
    # deleting the gate whose absence flips the most exact predictions: killed by every criterion
    base = model.predict(model_probabilities(model, data.raw))
    best, flips = None, -1
    rgd = qf_ops.get("RGD")
    for i in range(len(model.ir.gates)):
        mutant = model.with_ir(rgd.apply(model.ir, Scope(), [i], np.random.default_rng(0))[0])
        f = int(np.sum(mutant.predict(model_probabilities(mutant, data.raw)) != base))
        if f > flips:
            best, flips = mutant, f
    assert flips >= 0.2 * len(base)
    for criterion in criteria.CRITERIA:
        assert _kill_rate(model, data, [best] * 20, criterion) == (20, 20)


# ---------------------------------------------------------------- sequential decisions


def test_sequential_agrees_with_the_fixed_design_and_saves_shots() -> None:
    """On a QML run of qcl-mnist01, the sequential majority design agrees with the fixed 20 x 1000
    verdict on at least 95% of the mutants, decides the null copies at alpha, and spends fewer shots."""
    model, data = _suite("qcl-mnist01", "mnist", None, 40)
    opts = pipeline.Options(suite="qml", sequential=True, null_copies=100)
    result, _ = pipeline.run(model, [data], opts)
    fixed = pipeline.fixed_design(result)
    pairs = [(a["status"], b["status"]) for a, b in zip(result["mutants"], fixed["mutants"])]
    scored = [p for p in pairs if p[1] in ("killed", "survived")]
    assert len(scored) > 100
    agree = sum(a == b for a, b in scored)
    assert agree >= 0.95 * len(scored), scored
    s = result["suites"][data.name]
    assert not s["null_control"]["exceeds_alpha"]
    fixed_shots = len(scored) * opts.repeats * opts.shots * s["correctly_classified"]
    assert s["shots_used"] < fixed_shots


def test_sequential_statistical_decisions() -> None:
    looks = sequential.schedule(100)
    assert looks == [5, 10, 20, 40, 80, 100]
    rng = np.random.default_rng(1)
    same = [sequential.statistical(rng.normal(0.9, 0.02, 100), rng.normal(0.9, 0.02, 100), looks, 0.05, 0.2, 0.5)]
    same += [sequential.statistical(rng.normal(0.9, 0.02, 100), rng.normal(0.9, 0.02, 100), looks, 0.05, 0.2, 0.5)]
    far = sequential.statistical(rng.normal(0.9, 0.02, 100), rng.normal(0.8, 0.02, 100), looks, 0.05, 0.2, 0.5)
    assert far == {"status": "killed", "repeats": 5}
    assert all(s["status"] != "killed" for s in same)
    flat = sequential.statistical(np.full(100, 0.9), np.full(100, 0.9), looks, 0.05, 0.2, 0.5)
    assert flat == {"status": "survived", "repeats": 5}


def test_sequential_null_copies_are_killed_at_most_alpha() -> None:
    """Bonferroni spending over the looks: 1000 copies of a borderline vote, killed at most alpha."""
    w0 = np.array([0.55, 0.7, 0.9, 1.0])
    rng = np.random.default_rng(5)
    looks = sequential.schedule(100)
    kills = 0
    for _ in range(1000):
        right = rng.random((100, len(w0))) < w0
        kills += sequential.majority(right, w0, looks, 0.05, 0.2, 0.3, "holm")["status"] == "killed"
    assert not intervals.exceeds(kills, 1000, 0.05)


# ---------------------------------------------------------------- intervals


@pytest.mark.parametrize("p", [0.05, 0.3, 0.77, 0.95])
def test_interval_coverage_by_simulation(p) -> None:
    """A 95% Wilson interval on n = 205 mutants contains the true score in >= 93% of 500 runs;
    Clopper-Pearson on the 200-copy null control in >= 95%."""
    rng = np.random.default_rng(11)
    ks = rng.binomial(205, p, 500)
    cover = np.mean([lo <= p <= hi for lo, hi in (intervals.wilson(int(k), 205) for k in ks)])
    assert cover >= 0.93
    ks = rng.binomial(200, p, 500)
    cover = np.mean([lo <= p <= hi for lo, hi in (intervals.clopper_pearson(int(k), 200) for k in ks)])
    assert cover >= 0.95


def test_interval_values_and_format() -> None:
    lo, hi = intervals.wilson(87, 100)
    assert abs(lo - 0.7904) < 1e-3 and abs(hi - 0.9219) < 1e-3  # Wilson 1927, z = 1.96
    assert intervals.clopper_pearson(0, 200)[1] == pytest.approx(1 - 0.025 ** (1 / 200), rel=1e-9)
    assert intervals.wilson(10, 10)[1] == 1.0 and intervals.wilson(0, 10)[0] == 0.0
    assert intervals.fmt(0.87, [0.82, 0.91]) == "0.87 [0.82, 0.91]"
    assert intervals.fmt(None, None) == "-"
    assert intervals.exceeds(20, 200, 0.05) and not intervals.exceeds(14, 200, 0.05)


def test_readme_criterion_example_registers_and_judges_a_run() -> None:
    """The docs' (how-to/extend) 'Adding a kill criterion' block, run as written: it registers, re-judges a
    stored run, never kills more than Holm (Bonferroni is the weaker test) and holds the null control."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "docs" / "howto" / "extend.md").read_text()
    section = readme[readme.index("### Adding a kill criterion") :]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    exec(compile(code, "docs/howto/extend.md", "exec"), {})
    assert "majority-bonferroni" in criteria.REGISTRY
    try:
        model, data = _suite("qcl-mnist01", "mnist", None, 30)
        result, _ = pipeline.run(model, [data], pipeline.Options(suite="qml", operators=("APC",), null_copies=50))
        bonf = pipeline.redecide(result, criterion="majority-bonferroni")
        holm = result["suites"][data.name]
        s = bonf["suites"][data.name]
        assert bonf["meta"]["criterion"] == "majority-bonferroni" and s["scored_mutants"] == holm["scored_mutants"]
        assert 0 < s["killed"] <= holm["killed"]
        assert not s["null_control"]["exceeds_alpha"]
    finally:
        criteria.REGISTRY.pop("majority-bonferroni", None)
