"""`make reproduce`: verdict rules, and the quick run (slow) writing every table and the index."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import repro_common  # noqa: E402
import repro_qcov  # noqa: E402
import repro_qml  # noqa: E402
import repro_quanforge  # noqa: E402
import reproduce  # noqa: E402

VERDICTS = {"reproduced", "same direction", "differs", "ours only", "inconclusive"}


def test_verdict_rules() -> None:
    assert repro_common.verdict(True, True) == "reproduced"
    assert repro_common.verdict(True, False) == "same direction"
    assert repro_common.verdict(False, True) == "differs"  # close numbers do not rescue a failed claim
    assert repro_common.verdict(None, False) == "ours only"


def test_tested_verdicts_need_significance_and_a_claim_against_is_differs() -> None:
    assert repro_common.tested([(True, 0.001), (True, 0.002)], True) == "reproduced"
    assert repro_common.tested([(True, 0.001)], False) == "same direction"
    assert repro_common.tested([(True, 0.001), (True, 0.4)], True) == "inconclusive"  # one ordering unclear
    assert repro_common.tested([(False, 0.26)], True) == "inconclusive"  # Adv below Ori, not significantly
    assert repro_common.tested([(True, 0.001), (False, 0.001)], True) == "differs"
    assert repro_common.tested([(True, 0.03), (True, 0.03)], True) == "inconclusive"  # Holm: 0.06 and 0.06


def test_paired_test_counts_discordant_units() -> None:
    """McNemar on (mutant, class) units: 12 units killed by a only, 1 by b only -> a higher, p < 0.01."""
    kills = [([0], [])] * 12 + [([], [1])] + [([1], [1])] * 7  # (a's killed classes, b's) per mutant
    mutants = [
        {"id": f"m{i}", "operator": "PF", "verdicts": {"a": {"killed_classes": a}, "b": {"killed_classes": b}}}
        for i, (a, b) in enumerate(kills)
    ]
    res = {"meta": {"classes": [0, 1]}, "mutants": mutants}
    higher, p = repro_common.paired_test(res, "a", "b")
    assert higher and abs(p - 2 * 14 / 2**13) < 1e-12  # exact binomial: 2 P(X <= 1) = 2 (1 + 13) / 2^13
    assert repro_common.paired_test(res, "a", "a") == (False, 1.0)


def test_rate_tests_against_scipy_and_statsmodels_worked_numbers() -> None:
    """Fisher's exact test on 30/40 against 10/40 non-trivial mutants (p = 1.3e-5 two-sided, by
    scipy's own table), and Cochran-Mantel-Haenszel over strata: the direction from the pooled odds
    ratio, one stratum left falls back to Fisher, empty strata are ignored."""
    from scipy.stats import fisher_exact

    higher, p = repro_common.rates_test((30, 40), (10, 40))
    assert higher and p == fisher_exact([[30, 10], [10, 30]]).pvalue and p < 1e-4
    assert repro_common.rates_test((10, 40), (30, 40))[0] is False
    assert repro_common.rates_test((3, 5), (0, 0)) == (False, 1.0)
    same = repro_common.stratified_rates_test([((30, 40), (10, 40)), ((0, 0), (5, 9))])
    assert same == (higher, p)  # the empty stratum is dropped
    higher, p = repro_common.stratified_rates_test([((30, 40), (10, 40)), ((20, 30), (12, 30))])
    assert higher and p < 1e-4
    lower, p2 = repro_common.stratified_rates_test([((10, 40), (11, 40)), ((12, 30), (12, 30))])
    assert lower is False and p2 > 0.5  # no difference: far from significant
    assert repro_common.stratified_rates_test([]) == (False, 1.0)


def test_bootstrap_tests_separate_a_real_difference_from_none() -> None:
    """Coverage-like statistics (the share of 50 bins an input set reaches): a suite drawing from 40
    bins against one drawing from 10 is above at the bootstrap's smallest p; two suites from the same
    bins are not significantly apart; paired resamples share their inputs."""
    import numpy as np

    rng = np.random.default_rng(0)
    data = {"wide": rng.integers(0, 40, 100), "narrow": rng.integers(0, 10, 100), "same": rng.integers(0, 40, 100)}

    def reach(key: str, idx: np.ndarray) -> np.ndarray:
        return np.array([len(set(data[key][idx].tolist())) / 50])

    sizes = {k: len(v) for k, v in data.items()}
    [(higher, p)] = repro_common.bootstrap_test(reach, sizes, "wide", "narrow")
    assert higher and p == 1 / repro_common.BOOTSTRAP
    [(_, p_same)] = repro_common.bootstrap_test(reach, sizes, "wide", "same")
    assert p_same > 0.05
    boot = repro_common.paired_bootstrap(reach, ["wide", "narrow"], 100)
    assert boot["wide"].shape == (repro_common.BOOTSTRAP, 1) and np.all(boot["wide"] > boot["narrow"])
    assert repro_common.bootstrap_p(0.0, np.array([-1.0, 1.0, 2.0, 3.0])) == (False, 0.5)
    # a permutation test of means: shifted sets apart at its smallest p, exchangeable ones not
    x = np.concatenate([rng.normal(1.0, 1.0, 60), rng.normal(0.0, 1.0, 60), rng.normal(0.0, 1.0, 60)])

    def mean_gap(ia: np.ndarray, ib: np.ndarray, v: np.ndarray = x[:120]) -> np.ndarray:
        return np.array([v[ia].mean() - v[ib].mean()])

    [(higher, p)] = repro_common.permutation_test(mean_gap, 60, 60)
    assert higher and p == 1 / (1 + repro_common.BOOTSTRAP)
    [(_, p_same)] = repro_common.permutation_test(lambda ia, ib: mean_gap(ia, ib, x[60:]), 60, 60)
    assert p_same > 0.05


def test_paper_values_are_the_published_ones() -> None:
    """Spot checks against the papers' text (QCov Table 3, QuanForge Tables 3, 6, 8 and 9, QML Tables I-II)."""
    assert repro_qcov.QCOV_TABLE3["qcl"]["100"] == (59.79, 54.10, 4.10)
    assert repro_qcov.QCOV_TABLE3["hqnn"]["1"] == (29.22, 30.91, 0.20)
    assert repro_quanforge.QUANFORGE_TABLE3["qcl"]["lconf"] == 0.8369
    assert repro_quanforge.QUANFORGE_TABLE8[("tau_rse", 0.03)] == (97, 0.5795, 0.3636, 0.7841)
    assert repro_quanforge.QUANFORGE_TABLE8[("tau_trivial", 0.95)][0] == 23
    assert repro_quanforge.QUANFORGE_TABLE3["qcl"]["adv"] == 0.8469
    assert repro_quanforge.QUANFORGE_TABLE6[("Add", "swap")] == (92.08, 37.92)
    assert repro_quanforge.QUANFORGE_TABLE6[("Delete", "pauli")] is None  # N/A for QCL in the paper
    replace_row = (0.5534, 0.1292, 0.5323, 0.5104, 0.6681, 0.8428, 0.8292, 0.9514)
    assert repro_quanforge.QUANFORGE_TABLE9["Replace"] == replace_row
    assert repro_qml.QML_TABLE1["zfm-ra-iris"] == (71.59, (240, 240, 960, 36, 36, 36, 36))
    assert repro_qml.QML_TABLE2["zzfm-su2-breast_cancer"][0] == 26.45
    assert repro_qml.QML_TABLE1["qcnn-mnist_0vr"] == (93.13, (1260, 48, 5880, 8628, 324, 504, 72))


@pytest.mark.slow
def test_reproduce_quick_writes_every_table_and_the_index(tmp_path) -> None:
    out = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks/reproduce.py"), "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    index = (out / "README.md").read_text()
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md") if p.name != "README.md")
    assert len(written) == len(reproduce.TABLES)
    for md in written:
        stem = str(out / md[: -len(".md")])  # not with_suffix: "sec4.5-sampling-cost" has a dot
        assert Path(stem + ".png").stat().st_size > 1000
        rows = list(csv.DictReader(Path(stem + ".csv").open()))
        assert rows and all(r["verdict"] in VERDICTS for r in rows)
        assert f"`{md}`" in index
    assert "make reproduce-quick" in index and "reduced sizes" in index


@pytest.mark.slow
def test_committed_results_were_made_by_this_code() -> None:
    """Every committed table records the digest of the code it depends on; it must be the working
    tree's (rerun `make reproduce` after changing the library, the scripts or the models)."""
    import json

    tables = sorted((ROOT / "results").glob("*/*.json"))
    assert tables
    now = repro_common.code_digest(ROOT)
    stale = [p.name for p in tables if json.loads(p.read_text()).get("code_sha256") != now]
    assert not stale, f"results made by other code: {stale}"


def test_the_code_digest_sees_a_verdict_change_and_not_a_cli_change(tmp_path) -> None:
    (tmp_path / "qmltest" / "mutation" / "judge").mkdir(parents=True)
    (tmp_path / "cli").mkdir()
    verdict = tmp_path / "qmltest" / "mutation" / "judge" / "a.py"
    verdict.write_text("x = 1\n")
    (tmp_path / "cli" / "b.py").write_text("y = 1\n")
    before = repro_common.code_digest(tmp_path)
    (tmp_path / "cli" / "b.py").write_text("y = 2\n")
    assert repro_common.code_digest(tmp_path) == before  # the CLI renders; it decides no table
    verdict.write_text("x = 2\n")
    assert repro_common.code_digest(tmp_path) != before
