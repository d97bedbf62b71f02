"""Accuracy of the shipped MNIST 0/1 QCL model under each shipped noise config, beside noise-free,
with time per input (exact probabilities; noisy ones from Aer's density-matrix method).
Usage: python benchmarks/noise.py [MODEL] [INPUTS_PER_CLASS]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from qmltest import artifact
from qmltest.data import datasets
from qmltest.evaluate import evaluate
from qmltest.noise.config import load

CONFIGS = ["depolarizing-1pct", "thermal", "crosstalk", "hardware-like"]


def main(path: str, per_class: int) -> None:
    model = artifact.load(path)
    x, y = datasets.select("mnist", "test", model.classes, per_class, 0)
    print(f"{Path(path).name}: {len(x)} test inputs")
    print(f"{'noise':<20} {'accuracy':>9} {'us/input':>12}")
    for name in [None, *CONFIGS]:
        cfg = load(f"configs/noise/{name}.toml") if name else None
        start = time.perf_counter()
        result = evaluate(model, x, y, None, noise=cfg)
        per = (time.perf_counter() - start) / len(x)
        print(f"{name or 'noise-free':<20} {100 * result['accuracy']:8.2f}% {1e6 * per:12.1f}")


if __name__ == "__main__":
    main(
        sys.argv[1] if len(sys.argv) > 1 else "data/models/qcl-mnist01", int(sys.argv[2]) if len(sys.argv) > 2 else 100
    )
