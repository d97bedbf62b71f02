"""Tables I and II of the efficient-QML mutation paper on the shipped models.

For each model: the QML operators (directed) and the classic operators (directed add-gate, remove,
replace; exhaustive add-gate counted), test suite = the correctly classified ones among 20 test
samples, killing by majority of 1000 shots. Writes runs/bench/qml-mutation.csv and .md and prints
the directed-vs-exhaustive reduction and time per mutant beside the paper's (generation 0.25-1.1 ms,
evaluation 0.12-0.25 s per mutant).
Usage: python benchmarks/qml_mutation.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.model import artifact
from qmltest.mutation import pipeline
from qmltest.mutation.operators import registry, sites
from qmltest.util import writers as report

MODELS = [
    ("zfm-ra-iris", "iris"),
    ("zzfm-su2-iris", "iris"),
    ("zfm-ra-wine", "wine"),
    ("zzfm-su2-wine", "wine"),
    ("zfm-ra-breast_cancer", "breast_cancer"),
    ("zzfm-su2-breast_cancer", "breast_cancer"),
    ("qcnn-mnist_0vr", "mnist_0vr"),  # the paper's AE (amplitude embedding) + QCNN, digit 0 vs the rest
]


def test_data(model, dataset: str) -> Data:
    x, y = datasets.select(dataset, "test", model.classes)
    x, y = x[:: max(1, len(x) // 20)][:20], y[:: max(1, len(y) // 20)][:20]  # 20 samples, classes interleaved
    return Data.of(f"{dataset}:test[20]", model, x, y)


def main(out: Path) -> None:
    rows = []
    for folder, dataset in MODELS:
        model = artifact.load(Path("data/models") / folder)
        data = test_data(model, dataset)
        for suite in ("qml", "classic"):
            res, timing = pipeline.run(model, [data], pipeline.Options(suite=suite, shots=1000, seed=0))
            row = {"model": folder, "suite": suite, "MS %": round(100 * (res["mutation_score"] or 0), 2)}
            for name, op in res["suites"][data.name]["per_operator"].items():
                row[name] = f"{op['killed']}/{op['total']}"
            row["gen ms/mutant"] = round(1e3 * timing["generation_seconds_per_mutant"], 3)
            row["eval s/mutant"] = round(timing["eval_seconds_per_mutant"], 4)
            if suite == "classic":
                row["add-gate exhaustive"] = sites.count(
                    model, registry.operators("classic", ["add-gate"]), "exhaustive"
                )["add-gate"]
            else:
                row["directed total"] = len(res["mutants"])
            rows.append(row)
            print(row, flush=True)
    for r in rows:
        if r["suite"] == "qml":
            classic = next(c for c in rows if c["model"] == r["model"] and c["suite"] == "classic")
            r["reduction vs exhaustive add-gate"] = round(
                classic["add-gate exhaustive"] / max(r["directed total"], 1), 1
            )
    out.mkdir(parents=True, exist_ok=True)
    keys = sorted(
        {k for r in rows for k in r},
        key=lambda k: (
            next(i for i, r in enumerate(rows) if k in r) * 100 + list(next(r for r in rows if k in r)).index(k)
        ),
    )
    table = [{k: r.get(k, "") for k in keys} for r in rows]
    report.write_text_atomic(out / "qml-mutation.csv", report.to_csv(table))
    md = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    md += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in table]
    report.write_text_atomic(out / "qml-mutation.md", "\n".join(md) + "\n")
    print(f"wrote {out / 'qml-mutation.csv'} and {out / 'qml-mutation.md'}")
    print("paper: generation 0.25-1.1 ms per mutant, evaluation 0.12-0.25 s per mutant; directed 9.5x fewer")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("runs/bench"))
