"""Issue 62: the real-fault catalogue, its transforms, detection by the kill criterion, KEC and
test prioritisation (APFD)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from qiskit.quantum_info import Statevector, partial_trace

from qmltest import api
from qmltest.coverage import entanglement, priority
from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.faults import detect, kinds
from qmltest.model import artifact
from qmltest.mutation.options import Options
from qmltest.simulate.runner import model_probabilities

MODELS = ("zfm-ra-iris", "hqnn-mnist01", "drnn-mnist01", "qcl-mnist01")


@pytest.fixture(scope="module")
def shipped() -> dict:
    out = {}
    for name in MODELS:
        m = artifact.load(f"data/models/{name}")
        x, y = datasets.for_model(m.manifest["training"]["dataset"] + ":test", "test", m, 20, 0)
        out[name] = (m, x, y)
    return out


def test_the_catalogue_holds_twenty_sourced_kinds_each_with_its_transform() -> None:
    faults = kinds.catalogue()
    assert len(faults) >= 20 and len({f.id for f in faults}) == len(faults)
    assert all(f.source.startswith("https://") and len(f.wrong) > 40 for f in faults)
    assert {f.stage for f in faults} == set(kinds.STAGES)
    assert set(kinds.TRANSFORMS) == {f.id for f in faults}


def _parts(m: artifact.Model) -> tuple:
    gates = [(g.name, g.qubits, [p.value for p in g.params]) for g in m.ir.gates]
    return gates, m.ir.measured, m.manifest.get("preprocessing"), m.manifest["readout"]


@pytest.mark.parametrize("kind", [f.id for f in kinds.catalogue()])
def test_each_fault_changes_behaviour_somewhere_and_only_its_own_part(shipped, kind) -> None:
    """On some shipped model the faulty class scores differ on some input; the parts of the model
    outside the fault's stage are left as they were."""
    fault = kinds.get(kind)
    moved = 0.0
    applied = 0
    for m, x, _ in shipped.values():
        faulty = fault.on(m, kinds.Context(raw=x))
        if faulty is None:
            continue
        applied += 1
        gates, measured, prep, ro = _parts(m)
        f_gates, f_measured, f_prep, f_ro = _parts(faulty)
        if fault.stage == "inputs":
            assert (f_gates, f_measured, f_ro) == (gates, measured, ro) and f_prep != prep
        elif fault.stage == "circuit":
            assert (f_measured, f_prep, f_ro) == (measured, prep, ro) and f_gates != gates
        else:
            assert (f_gates, f_prep) == (gates, prep) and (f_measured, f_ro) != (measured, ro)
        scores = model_probabilities(faulty, x) @ faulty.readout_matrix - model_probabilities(m, x) @ m.readout_matrix
        moved = max(moved, float(np.abs(scores).max()))
    assert applied >= 1, f"{kind} applies to none of {MODELS}"
    assert moved > 1e-4


def test_string_order_binds_value_two_to_x_10() -> None:
    order = kinds.string_order(12)
    assert order[:4] == [0, 1, 10, 11] and order[4] == 2


def test_an_identical_copy_is_never_detected_and_a_swapped_readout_is(shipped) -> None:
    m, _, _ = shipped["zfm-ra-iris"]
    x, y = datasets.for_model("iris:test", "test", m, None, 0)
    suite = Data.of("iris:test", m, x, y)
    faulty = {"copy": m, "classes-reordered": kinds.get("classes-reordered").on(m)}
    out = detect.detected(m, faulty, [suite], Options(suite="qml", criterion="statistical", scoring="plain"))
    assert out["iris:test"]["copy"]["detected"] is False
    assert out["iris:test"]["classes-reordered"]["detected"] is True


def _reduced_purity(psi: np.ndarray, n: int) -> float:
    sv = Statevector(psi)
    return sum(
        float(
            np.real(
                np.trace(
                    partial_trace(sv, [q for q in range(n) if q != j]).data
                    @ partial_trace(sv, [q for q in range(n) if q != j]).data
                )
            )
        )
        for j in range(n)
    )


def test_meyer_wallach_matches_its_definition_and_known_states() -> None:
    ghz = np.zeros(8, complex)
    ghz[[0, 7]] = 1 / np.sqrt(2)
    w = np.zeros(8, complex)
    w[[1, 2, 4]] = 1 / np.sqrt(3)
    product = np.kron([1, 1], np.kron([1, 0], [1, 1j])).astype(complex) / 2
    q = entanglement.meyer_wallach(np.stack([ghz, w, product]), 3)
    assert np.allclose(q, [1.0, 8 / 9, 0.0], atol=1e-12)
    rng = np.random.default_rng(3)
    psi = rng.normal(size=(4, 16)) + 1j * rng.normal(size=(4, 16))
    psi /= np.linalg.norm(psi, axis=1, keepdims=True)
    expected = [2 * (1 - _reduced_purity(p, 4) / 4) for p in psi]
    assert np.allclose(entanglement.meyer_wallach(psi, 4), expected, atol=1e-12)


def test_kec_counts_the_cells_of_the_suites_entanglement(tmp_path) -> None:
    prof = api.profile("zfm-ra-iris", per_class=20, entanglement=True)
    trained = np.asarray(prof.data["entanglement"])
    res = api.cover("zfm-ra-iris", ["iris:test"], profile=prof, k=10)
    m = artifact.load("data/models/zfm-ra-iris")
    x, _ = datasets.for_model("iris:test", "test", m, None, 0)
    q = entanglement.values(m, x)
    lo, hi = trained.min(), trained.max()
    inside = q[(q >= lo) & (q <= hi)]
    cells = np.minimum(np.floor((inside - lo) / (hi - lo) * 10), 9)
    assert res.data["totals"]["kec"] == pytest.approx(len(set(cells.tolist())) / 10)
    without = api.cover("zfm-ra-iris", ["iris:test"], profile=api.profile("zfm-ra-iris", per_class=20), k=10)
    assert "kec" not in without.data["totals"]
    assert without.data["totals"]["ksc"] == pytest.approx(res.data["totals"]["ksc"])


def test_apfd_of_hand_computed_orders() -> None:
    reveals = np.zeros((5, 10), bool)
    for t, fs in enumerate([[0, 4], [0, 1, 2, 3, 4, 5, 6], list(range(10)), [4], [7, 8, 9]]):
        reveals[t, fs] = True
    assert priority.apfd([2, 4, 1, 0, 3], reveals) == pytest.approx(1 - 10 / 50 + 1 / 10)
    assert priority.apfd([0, 1, 2, 3, 4], reveals) == pytest.approx(1 - 21 / 50 + 1 / 10)
    assert priority.apfd([0, 1], np.zeros((2, 3), bool)) is None


def test_greedy_orders() -> None:
    assert priority.by_kills([[2], [2, 0], [1], [1]], 3) == [
        1,
        2,
        0,
    ]  # 1 and 2 kill two each (the lower index first), 0 after a reset
    assert priority.by_gini(np.array([[1.0, 0.0], [0.5, 0.5], [0.8, 0.2]])) == [1, 2, 0]  # impurity 0, 0.5, 0.32


def test_suite_prioritize_cli_by_coverage_and_by_kills(tmp_path, monkeypatch) -> None:
    from qmltest_cli.main import app
    from typer.testing import CliRunner

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, list(args))

    assert run("profile", "zfm-ra-iris", "--out", "p.json", "--per-class", "20").exit_code == 0
    r = run("suite", "prioritize", "zfm-ra-iris", "--by", "coverage", "--profile", "p.json", "--out", "c.csv")
    assert r.exit_code == 0, r.output
    rows = (tmp_path / "c.csv").read_text().splitlines()
    assert rows[0] == "rank,index,label" and sorted(int(r.split(",")[1]) for r in rows[1:]) == list(range(30))
    bad = run("suite", "prioritize", "zfm-ra-iris", "--by", "kills", "--out", "k.csv")
    assert bad.exit_code == 2 and "--report" in bad.output and "Traceback" not in bad.output
    rows = [{"verdicts": {"iris:test": {"killed_by": by}}} for by in ([3, 4], [4])]
    (tmp_path / "r.json").write_text(json.dumps({"mutants": rows}))
    ok = run("suite", "prioritize", "zfm-ra-iris", "--by", "kills", "--report", "r.json", "--out", "k.csv")
    assert ok.exit_code == 0, ok.output
    first = [int(r.split(",")[1]) for r in (tmp_path / "k.csv").read_text().splitlines()[1:3]]
    assert first == [4, 3]  # 4 kills both; after the reset 3 adds one


def test_the_figures_the_docs_quote_are_the_catalogues_and_the_studys() -> None:
    """docs/concepts/realfaults.md quotes the number of kinds and of models; results/README.md and
    docs/reproduce.md quote the same full run's minutes."""
    import re
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "benchmarks"))
    import realfaults_models  # noqa: PLC0415

    page = (root / "docs" / "concepts" / "realfaults.md").read_text()
    assert f"holds {len(kinds.catalogue())} kinds" in page
    words = {6: "six", 2: "two"}
    assert f"on {words[len(realfaults_models.SHIPPED)]} shipped models" in page
    assert "on two imported ones" in page.replace("\n", " ") and len(realfaults_models.IMPORTED) == 2
    results = (root / "results" / "README.md").read_text()
    minutes = re.search(r"([\d.]+) min of tables", results)
    quoted = re.search(r"full run \(([\d.]+) min on 2 cores\)", (root / "docs" / "reproduce.md").read_text())
    assert minutes and quoted and minutes.group(1) == quoted.group(1)
