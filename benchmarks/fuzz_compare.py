"""QCov Sec. 4.4 comparison: TSR of KSC-, SCC-, TSC-guided fuzzing beside random testing.

For each shipped MNIST 0/1 model (or those given): profile on 100 training inputs per class over
all qubits, 50 correctly classified test seeds per class, budget 2000 per guide, three seeds;
prints the mean TSR per guide and the time per fuzz iteration.
Usage: python benchmarks/fuzz_compare.py [MODEL ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from qmltest.coverage.criteria import Bounds
from qmltest.coverage.profile import bounds, build
from qmltest.data import datasets
from qmltest.evaluate import label_indices
from qmltest.fuzz.loop import guides
from qmltest.fuzz.run import campaign
from qmltest.model import artifact
from qmltest.simulate.runner import model_probabilities

SEEDS, BUDGET = (1, 2, 3), 2000
DEFAULT = ["data/models/qcl-mnist01", "data/models/qcnn-mnist01", "data/models/drnn-mnist01"]


def main(paths: list[str]) -> None:
    print(f"{'model':<18}" + "".join(f"{g:>16}" for g in guides()) + f"{'ms/iter':>10}")
    for path in paths:
        model = artifact.load(path)
        xt, _ = datasets.select("mnist", "train", model.classes, 100, 0)
        prof = build(model_probabilities(model, xt, register="all"), model.sha256)
        b = Bounds(*bounds(prof))
        x, y = datasets.select("mnist", "test", model.classes, 50, 0)
        yi = label_indices(model, y)
        keep = model.predict(model_probabilities(model, x)) == yi
        tsr = {g: [] for g in guides()}
        per_iter = []
        for seed in SEEDS:
            res = campaign(model, x[keep], yi[keep], (28, 28), b, list(guides()), BUDGET, seed, None)
            for g in guides():
                tsr[g].append(res["guides"][g]["tsr"])
                per_iter.append(res["timing"][g]["seconds_per_iteration"])
        cells = "".join(f"{100 * np.mean(tsr[g]):>9.2f}% ±{100 * np.std(tsr[g]):4.1f}" for g in guides())
        print(f"{Path(path).name:<18}{cells}{1e3 * np.mean(per_iter):>10.2f}")


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
