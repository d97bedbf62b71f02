"""QCov criteria: Example 3.1 by hand, properties (monotone, in [0, 1], SCC 0 on the profiling data)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qmltest.coverage import measure
from qmltest.coverage.criteria import KSC, SCC, TSC, Bounds, Coverage
from qmltest.coverage.diversity import diversity, js_divergence
from qmltest.coverage.profile import Profile, bounds, build, mad_keep


def example_31_bounds() -> Bounds:
    """QCov Example 3.1: |00> in [0.2, 0.8]; the other ranges chosen to match the text's outcome."""
    return Bounds(np.array([0.2, 0.4, 0.0, 0.3]), np.array([0.8, 0.9, 0.5, 0.8]))


def test_example_3_1_exact_values() -> None:
    cov = Coverage([KSC(5), SCC(), TSC(1)], example_31_bounds())
    cov.add(np.array([0.2, 0.3, 0.15, 0.35]))
    values = cov.values()
    assert values["ksc"] == pytest.approx(0.15)  # 3 / (4 * 5)
    assert values["scc"] == pytest.approx(0.125)  # 1 / (4 * 2)
    assert values["tsc"] == pytest.approx(0.25)  # 1 / 4
    cells = np.argwhere(cov.state["ksc"]).tolist()
    assert cells == [[0, 0], [2, 1], [3, 0]]  # first cell |00>, second cell |10>, first cell |11>
    assert cov.state["scc"].tolist() == [[False, False], [True, False], [False, False], [False, False]]
    assert cov.state["tsc"].tolist() == [False, False, False, True]


def test_upper_bound_in_last_cell_and_degenerate_range() -> None:
    ksc = KSC(4)
    b = Bounds(np.array([0.0, 0.5]), np.array([1.0, 0.5]))
    assert ksc.cells(np.array([[1.0, 0.5], [0.0, 0.6]]), b).tolist() == [[3, 0], [0, -1]]


probs_strategy = st.integers(2, 5).flatmap(
    lambda n: st.lists(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n), min_size=2, max_size=30)
)


def _normalize(rows: list[list[float]]) -> np.ndarray:
    a = np.array(rows)
    return a / a.sum(axis=1, keepdims=True)


@settings(max_examples=60, deadline=None)
@given(probs_strategy, st.integers(1, 20), st.integers(1, 3))
def test_monotone_and_in_unit_interval(rows, k, top_k) -> None:
    p = _normalize(rows)
    half = len(p) // 2
    prof = build(p[:half] if half else p, "h")
    cov = Coverage(measure.criteria(k, top_k), Bounds(*bounds(prof)))
    previous = {"ksc": 0.0, "scc": 0.0, "tsc": 0.0}
    for row in p:
        gained = cov.add(row)
        now = cov.values()
        for name in now:
            assert 0.0 <= now[name] <= 1.0
            assert now[name] >= previous[name]
            assert gained[name] >= 0
        previous = now


@settings(max_examples=40, deadline=None)
@given(probs_strategy)
def test_profiling_data_has_scc_zero_under_minmax(rows) -> None:
    p = _normalize(rows)
    result = measure.cover([("train", p)], build(p, "h"), k=10)
    assert result["totals"]["scc"] == 0.0
    assert result["totals"]["ksc"] > 0.0


def test_incremental_equals_batch_and_would_gain() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(8), size=50)
    b = Bounds(*bounds(build(p[:20], "h")))
    one, batch = Coverage(measure.criteria(10, 2), b), Coverage(measure.criteria(10, 2), b)
    for row in p:
        predicted = one.would_gain(row)
        assert one.add(row) == predicted
    batch.add(p)
    assert one.values() == batch.values()
    assert all(np.array_equal(one.state[n], batch.state[n]) for n in one.state)


def test_bounds_sigma_and_mad() -> None:
    p = np.array([[0.1, 0.9], [0.2, 0.8], [0.3, 0.7], [0.9, 0.1]])
    prof = Profile(p, "h", {})
    lo, hi = bounds(prof, "minmax")
    assert lo.tolist() == [0.1, 0.1] and hi.tolist() == [0.9, 0.9]
    lo_s, hi_s = bounds(prof, "sigma")
    np.testing.assert_allclose(lo_s, np.clip(lo - p.std(axis=0), 0, 1))
    np.testing.assert_allclose(hi_s, np.clip(hi + p.std(axis=0), 0, 1))
    keep = mad_keep(p, 0.99)
    assert keep[:, 0].tolist() == [True, True, True, False]  # 0.9 is an outlier of column 0
    lo_m, hi_m = bounds(prof, "mad", 0.99)
    assert lo_m[0] == 0.1 and hi_m[0] == 0.3


def test_profile_round_trip_and_parts() -> None:
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(4), size=10)
    prof = build(p, "abc", data="x")
    again = Profile.from_dict(prof.to_dict())
    assert np.array_equal(again.probabilities, p) and again.model_sha256 == "abc"
    extra = rng.dirichlet(np.ones(4) * 0.1, size=10)
    res = measure.cover([("org", p[:5]), ("adv", extra)], prof, k=10)
    first, second = res["parts"]
    assert second["cumulative"]["scc"] >= first["cumulative"]["scc"]
    assert len(res["per_input"]["ksc"]) == 15
    assert res["per_input"]["ksc"][4] == first["cumulative"]["ksc"]


def test_js_divergence_limits_and_haar_states_are_diverse() -> None:
    assert js_divergence(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(1.0)
    assert js_divergence(np.array([0.3, 0.7]), np.array([0.3, 0.7])) == pytest.approx(0.0)
    rng = np.random.default_rng(2)
    haar = rng.normal(size=(200, 16)) + 1j * rng.normal(size=(200, 16))
    haar /= np.linalg.norm(haar, axis=1, keepdims=True)
    same = np.tile(haar[:1], (200, 1))
    assert diversity(haar, bins=20)["js_divergence"] < 0.05
    assert diversity(same, bins=20)["js_divergence"] > 0.95


def test_readme_adding_a_coverage_criterion_block_runs(tmp_path) -> None:
    """The docs' (how-to/extend) 'Adding a coverage criterion' block, run as written: `cover` reports the new
    criterion (its value equal to a direct count), `--fail-under mrc=P` gates on it, `fuzz --guide
    mrc` is guided by it; removed afterwards."""
    import json
    import re
    from pathlib import Path

    from qmltest_cli.main import app
    from typer.testing import CliRunner

    from qmltest.coverage import criteria

    root = Path(__file__).resolve().parents[1]
    section = (root / "docs" / "howto" / "extend.md").read_text().split("### Adding a coverage criterion", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    model, runner = str(root / "data" / "models" / "qcl-mnist01"), CliRunner()
    prof = tmp_path / "p.json"
    assert runner.invoke(app, ["profile", model, "--per-class", "20", "--out", str(prof), "-q"]).exit_code == 0
    try:
        exec(compile(code, "docs/howto/extend.md", "exec"), {})
        assert criteria.names() == ("ksc", "scc", "tsc", "mrc")
        args = ["cover", model, "--profile", str(prof), "--per-class", "10", "--json", "-"]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        report = json.loads(res.output)
        assert 0.0 < report["totals"]["mrc"] <= 1.0 and report["items"]["mrc"] == len(report["per_state"])
        profile = Profile.from_dict(json.loads(prof.read_text()))
        lo, hi = bounds(profile)
        probs = np.random.default_rng(5).dirichlet(np.ones(profile.num_states), size=30)
        direct = np.any(np.abs(probs - (lo + hi) / 2) <= (hi - lo) / 4, axis=0).mean()
        assert 0 < direct < 1 and measure.cover([("s", probs)], profile)["totals"]["mrc"] == pytest.approx(direct)
        gated = runner.invoke(app, [*args[:-2], "--fail-under", "mrc=100", "-q"])
        assert gated.exit_code == (0 if report["totals"]["mrc"] == 1.0 else 1)
        fuzz = ["fuzz", model, "--profile", str(prof), "--guide", "mrc", "--per-class", "5", "--budget", "20"]
        fz = runner.invoke(app, [*fuzz, "--json", "-", "-q"])
        assert fz.exit_code == 0, fz.output
        assert "mrc" in json.loads(fz.output)["guides"]
    finally:
        criteria.REGISTRY.pop("mrc", None)
    bad = CliRunner().invoke(app, ["cover", model, "--profile", str(prof), "--fail-under", "mrc=10"])
    assert bad.exit_code == 2 and "--fail-under takes ksc=P, scc=P, tsc=P" in bad.output
