"""The real-fault study's statistics (benchmarks/realfaults_report.py) on hand-made inputs, and
(slow) the quick study end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import realfaults_report as rr  # noqa: E402
import repro_common  # noqa: E402


def test_gamma_counts_only_pairs_of_one_stratum() -> None:
    x = np.array([1.0, 2, 3, 1, 2, 3])
    same = np.array([1.0, 2, 3, 1, 2, 3])
    opposite_in_b = np.array([1.0, 2, 3, 3, 2, 1])
    strata = np.array(["a", "a", "a", "b", "b", "b"])
    assert rr.gamma(x, same, strata) == 1.0
    assert rr.gamma(x, opposite_in_b, strata) == 0.0  # 3 concordant pairs in a, 3 discordant in b
    assert rr.gamma(x, np.ones(6), strata) is None  # every pair tied in y


def test_a_perfect_ordering_is_significant_with_an_interval_above_zero() -> None:
    x = np.arange(16, dtype=float)
    t = rr.tested(rr.tau_b, x, x * 2, np.zeros(16), seed=0)
    assert t["value"] == 1.0 and t["p"] < 0.01 and t["interval"][0] > 0


def test_coupling_needs_every_killing_suite_to_detect_the_fault() -> None:
    study = {
        "rows": [{"suite": s} for s in ("s1", "s2", "s3")],
        "faults": ["f", "never"],
        "fault_verdicts": {
            "s1": {"f": True, "never": False},
            "s2": {"f": True, "never": False},
            "s3": {"f": False, "never": False},
        },
        "mutant_verdicts": {
            "qml": {
                "s1": {"m1": True, "m2": False, "m3": False},
                "s2": {"m1": False, "m2": True, "m3": False},
                "s3": {"m1": False, "m2": True, "m3": False},
            },
        },
    }
    out = rr.coupling(study)
    assert out["qml"]["f"] == 0.5  # m1 (killed by s1 only) is coupled; m2 (s3 misses f) is not; m3 is never killed
    assert out["qml"]["never"] is None


def test_apfd_rows_score_methods_against_random_orders() -> None:
    reveals = np.zeros((10, 3), int)
    reveals[0, :] = 1
    study = {"reveals": reveals.tolist(), "orders": {"best": list(range(10)), "worst": list(range(9, -1, -1))}}
    rows = {r["method"]: r for r in rr.apfd_rows(study, seed=0)}
    assert rows["best"]["apfd"] == pytest.approx(1 - 3 / 30 + 1 / 20)
    assert rows["worst"]["apfd"] == pytest.approx(1 - 30 / 30 + 1 / 20)
    assert rows["best"]["p_vs_random"] < 0.2 < rows["worst"]["p_vs_random"]
    assert rows["worst"]["apfd"] < rows["random"]["apfd"] < rows["best"]["apfd"]


@pytest.mark.slow
def test_the_quick_study_runs_and_its_tables_agree_with_its_verdicts(tmp_path) -> None:
    out = tmp_path / "rf"
    subprocess.run([sys.executable, "benchmarks/realfaults.py", "--quick", "--out", str(out)], cwd=ROOT, check=True)
    doc = json.loads((out / "study.json").read_text())
    assert doc["code_sha256"] == repro_common.code_digest(ROOT)
    for st in doc["studies"]:
        for row in st["rows"]:
            verdicts = st["fault_verdicts"][row["suite"]]
            assert row["faults_detected"] == sum(verdicts.values()) and row["faults"] == len(verdicts)
            assert sorted(row["detected"]) == sorted(k for k, v in verdicts.items() if v)
        for fam in st["coupling"].values():
            assert all(v is None or 0 <= v <= 1 for v in fam.values())
    readme = (out / "README.md").read_text()
    assert "## Claims" in readme and "Just et al." in readme and "APFD" in readme
    assert all((out / f"{st['model']}.png").stat().st_size > 1000 for st in doc["studies"])
