"""`make reproduce`, efficient QML mutation testing: Tables I and II."""

from __future__ import annotations

from qml_mutation import test_data
from repro_common import MODELS, Size, Table, _bars, pct, rates_test, tested

from qmltest.model import artifact
from qmltest.mutation import pipeline
from qmltest.mutation.operators import registry, sites
from qmltest.util import parallel

# ------------------------------------------------------------------ efficient QML mutation


QML_TABLE1 = {  # MS %, totals per operator (APC, DFC, APGC, LS, ILS, ALA, ALD)
    "zfm-ra-iris": (71.59, (240, 240, 960, 36, 36, 36, 36)),
    "zzfm-su2-iris": (80.92, (320, 320, 2560, 48, 240, 48, 48)),
    "zfm-ra-wine": (83.09, (360, 360, 1440, 27, 27, 27, 27)),
    "zzfm-su2-wine": (91.86, (80, 80, 640, 6, 30, 6, 6)),
    "zfm-ra-breast_cancer": (75.08, (640, 640, 2560, 48, 48, 48, 48)),
    "zzfm-su2-breast_cancer": (86.79, (440, 440, 3520, 33, 165, 33, 33)),
    "qcnn-mnist_0vr": (93.13, (1260, 48, 5880, 8628, 324, 504, 72)),  # MNIST, AE + QCNN
}
QML_TABLE2 = {  # MS %, totals (add, delete, change)
    "zfm-ra-iris": (35.92, (13500, 300, 648)),
    "zzfm-su2-iris": (29.73, (29520, 656, 864)),
    "zfm-ra-wine": (38.04, (21465, 477, 1134)),
    "zzfm-su2-wine": (44.96, (7650, 170, 252)),
    "zfm-ra-breast_cancer": (4.31, (38160, 848, 2016)),
    "zzfm-su2-breast_cancer": (26.45, (42075, 935, 1386)),
    "qcnn-mnist_0vr": (100.0, (83160, 1848, 4032)),
}
QML_OPS = ("APC", "DFC", "APGC", "LS", "ILS", "ALA", "ALD")


def _killed_total(per_operator: dict) -> tuple[int, int]:
    """(killed, total) over a suite's operators (the mutation score's numerator and denominator)."""
    return sum(int(v["killed"]) for v in per_operator.values()), sum(int(v["total"]) for v in per_operator.values())


def qml_tables(size: Size) -> Table:
    """Efficient-QML mutation Tables I and II: killed/total per operator, scores and times."""
    t = Table(
        "qml-mutation",
        "tables-I-II",
        "Efficient QML mutation testing, Tables I and II: the seven QML operators (directed) beside the classic "
        "add/delete/change operators",
        "the directed QML operators score higher than the classic operators on every tabular model (Table I 56-92% "
        "vs Table II 4-57%); on MNIST AE + QCNN the classic operators score higher (100% vs 93%)",
        [
            "model",
            "table",
            "MS %",
            "MS paper %",
            "mutants",
            "mutants paper",
            "per operator (killed/total)",
            "paper totals",
            "gen ms/mutant",
            "eval s/mutant",
            "p",
            "verdict",
        ],
    )
    for folder, dataset in size.qml_models:
        model = artifact.load(MODELS / folder)
        data = test_data(model, dataset)  # the suite of benchmarks/qml_mutation.py
        got = {}
        for suite in ("qml", "classic"):
            ops = list(QML_OPS) if suite == "qml" else ["add-gate", "remove-gate", "replace-gate"]
            opts = pipeline.Options(suite=suite, operators=tuple(ops), shots=1000, seed=0)
            res, timing = pipeline.run(model, [data], opts, where=parallel.plan(size.workers))
            per = res["suites"][data.name]["per_operator"]
            got[suite] = (pct(res["mutation_score"] or 0), per, timing, len(res["mutants"]))
        for suite, table, paper in (("qml", "I", QML_TABLE1), ("classic", "II", QML_TABLE2)):
            ms, per, timing, n = got[suite]
            p_ms, p_totals = paper.get(folder, (None, ()))
            # the paper's own direction per model: QML above classic on the tabular models, classic (100%)
            # above QML (93%) on MNIST AE + QCNN
            paper_qml, paper_classic = QML_TABLE1.get(folder, (None,))[0], QML_TABLE2.get(folder, (None,))[0]
            counts = {s: _killed_total(got[s][1]) for s in got}  # different mutants: independent samples
            if paper_qml is not None and paper_classic is not None and paper_classic > paper_qml:
                test = rates_test(counts["classic"], counts["qml"])
            else:
                test = rates_test(counts["qml"], counts["classic"])
            t.rows.append(
                {
                    "model": folder,
                    "table": table,
                    "MS %": ms,
                    "MS paper %": p_ms,
                    "mutants": n,
                    "mutants paper": sum(p_totals) if p_totals else None,
                    "per operator (killed/total)": " ".join(f"{k}:{v['killed']}/{v['total']}" for k, v in per.items()),
                    "paper totals": " ".join(map(str, p_totals)),
                    "gen ms/mutant": round(1e3 * timing["generation_seconds_per_mutant"], 3),
                    "eval s/mutant": round(timing["eval_seconds_per_mutant"], 4),
                    "p": float(f"{test[1]:.3g}"),
                    "verdict": tested([test], p_ms is not None and abs(ms - p_ms) <= 15),
                }
            )
        t.rows[-1]["exhaustive add-gate"] = sites.count(
            model, registry.operators("classic", ["add-gate"]), "exhaustive"
        )["add-gate"]
    t.columns.append("exhaustive add-gate")
    t.notes.append(
        "Test suite: 20 test samples, classes interleaved; killing by the majority of 1000 shots on the inputs the "
        "original classifies correctly. Our classic add-gate is directed (non-redundant); the paper's Table II counts "
        "every insertion, closer to our exhaustive count (last column). The claim is tested per model on the two "
        "suites' "
        "killed and scored mutants (Fisher's exact test, p). Tolerance 15 points. AE + QCNN is the "
        "paper's amplitude embedding (16x16 MNIST on 8 qubits) with a QCNN, trained as `qcnn-mnist_0vr` on digit 0 "
        "against the rest (dataset mnist_0vr); FMNIST and KMNIST are not shipped offline."
    )
    t.plot = lambda tab, path: _bars(tab, path, "MS %", "MS paper %", lambda r: f"{r['model']}\nTable {r['table']}")
    t.keys, t.ours, t.theirs = ("model", "table"), "MS %", "MS paper %"
    return t
