"""Attack success rates beside QCov Table 14 (MNIST): FGSM (epsilon 64/255), JSMA (theta 1, gamma
0.1), DLFuzz, QuanTest (lambda 1) and random noise on 50 correctly classified inputs per class.
Usage: python benchmarks/attacks.py [MODEL ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from qmltest import attacks, suites
from qmltest.data import datasets
from qmltest.evaluate import label_indices
from qmltest.model import artifact

PAPER = {
    "qcl-mnist01": {"fgsm": "100%", "dlfuzz": "86%", "jsma": "100%", "quantest": "100%"},
    "ccqc-mnist01": {"fgsm": "89%", "dlfuzz": "72%", "jsma": "100%", "quantest": "100%"},
    "qcnn-mnist01": {"fgsm": "100%", "dlfuzz": "85%", "jsma": "100%", "quantest": "100%"},
    "hcqc_so4-mnist01": {"fgsm": "100%", "dlfuzz": "84%", "jsma": "100%", "quantest": "100%"},
    "hqnn-mnist01": {"fgsm": "11.5%", "dlfuzz": "11.16%", "jsma": "53.18%", "quantest": "6.47%"},
}
DEFAULT = [f"data/models/{m}" for m in PAPER]


def main(paths: list[str]) -> None:
    print(f"{'model':<18}" + "".join(f"{m:>20}" for m in attacks.METHODS))
    for path in paths:
        model = artifact.load(path)
        x, y = datasets.select("mnist", "test", model.classes)
        idx = suites.build(model, x, y, "ori", 50, 0)
        x, yi = x[idx], label_indices(model, y[idx])
        cells = []
        for method in attacks.METHODS:
            start = time.perf_counter()
            adv = attacks.attack(model, x, yi, method, 64 / 255, 0.0, 255.0, np.random.default_rng(0))
            asr = attacks.success_rate(model, x, adv, yi)
            paper = PAPER.get(Path(path).name, {}).get(method, "-")
            cells.append(f"{100 * asr:6.1f}% ({paper:>6}) {time.perf_counter() - start:4.0f}s")
        print(f"{Path(path).name:<18}" + "".join(f"{c:>20}" for c in cells), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
