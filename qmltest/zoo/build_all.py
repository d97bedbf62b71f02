"""Train and save every shipped model (`make zoo`); each recipe is seeded, so reruns reproduce them."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from qmltest.model import artifact
from qmltest.zoo.train import train

# (folder, arch, dataset, classes, per-class training samples, L-BFGS-B iterations)
RECIPES: list[tuple[str, str, str, list[int], int, int]] = [
    ("qcl-mnist01", "qcl", "mnist", [0, 1], 400, 200),
    ("ccqc-mnist01", "ccqc", "mnist", [0, 1], 400, 200),
    ("qcnn-mnist01", "qcnn", "mnist", [0, 1], 400, 200),
    ("qcnn-mnist_0vr", "qcnn", "mnist_0vr", [0, 1], 400, 200),  # AE (amplitude) + QCNN, 0 vs rest (Tables I-II)
    ("hcqc_so4-mnist01", "hcqc_so4", "mnist", [0, 1], 400, 200),
    ("drnn-mnist01", "drnn", "mnist", [0, 1], 400, 200),
    ("hqnn-mnist01", "hqnn", "mnist", [0, 1], 400, 200),
    ("qcl-mnist012", "qcl", "mnist", [0, 1, 2], 400, 200),
    ("ccqc-mnist012", "ccqc", "mnist", [0, 1, 2], 400, 200),  # QCov's ternary models (its Table 1 digits)
    ("qcnn-mnist379", "qcnn", "mnist", [3, 7, 9], 400, 200),
    ("hqnn-mnist012", "hqnn", "mnist", [0, 1, 2], 400, 200),
    ("zfm-ra-iris", "zfm_ra", "iris", [0, 1, 2], 40, 200),
    ("zzfm-su2-iris", "zzfm_su2", "iris", [0, 1, 2], 40, 200),
    ("zfm-ra-wine", "zfm_ra", "wine", [0, 1, 2], 48, 200),
    ("zzfm-su2-wine", "zzfm_su2", "wine", [0, 1, 2], 48, 200),
    ("zfm-ra-breast_cancer", "zfm_ra", "breast_cancer", [0, 1], 170, 200),
    ("zzfm-su2-breast_cancer", "zzfm_su2", "breast_cancer", [0, 1], 170, 200),
]


def main(out: str, only: list[str]) -> None:
    for folder, arch, dataset, classes, per_class, maxiter in RECIPES:
        if only and folder not in only:
            continue
        start = time.perf_counter()
        restarts = 1 if dataset == "mnist" else 10  # tabular models train in seconds: multi-start them
        model = train(arch, dataset, classes, seed=7, train_per_class=per_class, maxiter=maxiter, restarts=restarts)
        artifact.save(model, Path(out) / folder)
        tr = model.manifest["training"]
        print(
            f"{folder}: train {tr['train_accuracy']:.4f} test {tr['test_accuracy']:.4f} "
            f"({time.perf_counter() - start:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/models", sys.argv[2:])
