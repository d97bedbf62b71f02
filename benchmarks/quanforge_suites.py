"""QuanForge Table 3 direction: mutation scores of HConf, Ori, Small, Skewed and LConf suites.

On a shipped model (default MNIST 0/1 QCL): effective mutants from all nine operators (reference:
100 training inputs per class), suites of 100 correctly classified inputs per class drawn from the
whole MNIST sample, 20 repeats x 1000 shots. Usage: python benchmarks/quanforge_suites.py [MODEL]
"""

from __future__ import annotations

import sys
import time

from qmltest import suites
from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.model import artifact
from qmltest.mutation.pipeline import Options, run


def main(path: str) -> None:
    model = artifact.load(path)
    x, y = datasets.select("mnist", "train", model.classes, 100, 0)
    ref = Data.of("reference", model, x, y, keep_raw=False)
    xs, ys = datasets.select("mnist", "all", model.classes)
    data = []
    for kind in ("hconf", "skewed", "small", "ori", "lconf"):
        idx = suites.build(model, xs, ys, kind, 100, 0)
        conf = suites.confidence(model, xs[idx], ys[idx]).mean()
        print(f"{kind:>7}: {len(idx)} inputs, mean confidence {conf:.4f}")
        data.append(Data.of(kind, model, xs[idx], ys[idx], keep_raw=False))
    start = time.perf_counter()
    res, _ = run(model, data, Options(repeats=20, shots=1000, seed=1), ref)
    effective = sum(v["effective"] for v in res["generation"]["cells"]["all"].values())
    print(f"{effective} effective mutants in {time.perf_counter() - start:.0f} s")
    print(f"{'suite':>7} {'score':>7} {'null-control kill rate':>24}")
    for name, s in res["suites"].items():
        print(f"{name:>7} {s['mutation_score']:7.4f} {s['null_control_kill_rate']:24.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/models/qcl-mnist01")
