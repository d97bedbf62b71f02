"""Shots spent by the sequential design against the fixed 20 x 1000 schedule (issue: verdicts).

One run per operator suite on a shipped model (default QCL MNIST 0/1): the QuanForge suite
(Algorithm 1 mutants, statistical criterion) and the QML suite (directed sites, majority
criterion), scored on the Ori and LConf suites (100 correctly classified inputs per class). Each
run with --sequential also stores the fixed design's evidence (the first 20 repeats), so both
verdicts come from one run. Prints per suite: mutants, the share whose verdicts agree (the
sequential undecided counted as disagreeing), undecided, the shots each design spent on the
mutants (fixed: 20 x 1000 per input and mutant) and the saving.
Usage: python benchmarks/sequential.py [MODEL]
"""

from __future__ import annotations

import sys
import time

from qmltest import suites
from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.model import artifact
from qmltest.mutation import pipeline
from qmltest.util import intervals

REPEATS, SHOTS = 20, 1000


def main(path: str) -> None:
    model = artifact.load(path)
    x, y = datasets.select("mnist", "train", model.classes, 100, 0)
    ref = Data.of("reference", model, x, y, keep_raw=False)
    xs, ys = datasets.select("mnist", "all", model.classes)
    data = []
    for kind in ("ori", "lconf"):
        idx = suites.build(model, xs, ys, kind, 100, 0)
        data.append(Data.of(kind, model, xs[idx], ys[idx]))
    print(
        f"{'run':>22} {'suite':>6} {'mutants':>8} {'agree':>18} {'undecided':>9} "
        f"{'fixed shots':>13} {'sequential':>13} {'saved':>7}"
    )
    for suite in ("quanforge", "qml"):
        opts = pipeline.Options(suite=suite, repeats=REPEATS, shots=SHOTS, seed=1, sequential=True)
        start = time.perf_counter()
        seq, _ = pipeline.run(model, data, opts, ref if suite == "quanforge" else None)
        fixed = pipeline.fixed_design(seq)
        for name in seq["suites"]:
            pairs = [
                (a["verdicts"][name], b["verdicts"][name])
                for a, b in zip(seq["mutants"], fixed["mutants"])
                if name in a["verdicts"]
            ]
            agree = sum(a["killed"] == b["killed"] and not a["undecided"] for a, b in pairs)
            undecided = sum(a["undecided"] for a, _ in pairs)
            per_input = (
                REPEATS
                * SHOTS
                * (
                    seq["suites"][name]["correctly_classified"]
                    if opts.resolved().criterion == "majority"
                    else seq["suites"][name]["inputs"]
                )
            )
            fixed_shots = len(pairs) * per_input
            used = seq["suites"][name]["shots_used"]
            share = intervals.fmt(agree / len(pairs), intervals.wilson(agree, len(pairs)), True)
            print(
                f"{suite + ' (' + opts.resolved().criterion + ')':>22} {name:>6} {len(pairs):8d} {share:>18} "
                f"{undecided:9d} {fixed_shots:13.3e} {used:13.3e} {1 - used / fixed_shots:7.1%}",
                flush=True,
            )
        print(f"{'':>22} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/models/qcl-mnist01")
