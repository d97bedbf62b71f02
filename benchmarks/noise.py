"""Noisy probabilities per input: the numpy density-matrix engine beside Aer's density matrix.

For each shipped noise config: ms per input of the numpy engine (Heisenberg back-propagation of the
readout projectors through the input-independent suffix, a batched density matrix for the data
prefix) on INPUTS test inputs, and of Aer's density-matrix method (one transpile, one run of the
whole batch with bound parameters / initial density matrices: the batched path a user would write)
on a subset of AER_INPUTS (its cost is linear in the inputs), their ratio, the largest difference
on the shared inputs, and the accuracy. The one-off costs (transpile, back-propagation) are inside
the numpy figure; one warm-up call of each comes first.
Usage: python benchmarks/noise.py [MODEL ...] [--inputs N] [--aer-inputs K]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from qmltest.data import datasets
from qmltest.evaluate import label_indices
from qmltest.model import artifact
from qmltest.noise.config import load
from qmltest.simulate import engine, noisy, program

CONFIGS = ["depolarizing-1pct", "thermal", "crosstalk", "hardware-like"]
DATASET = {"iris": "iris", "wine": "wine", "breast_cancer": "breast_cancer"}


def bench(path: str, inputs: int, aer_inputs: int) -> None:
    model = artifact.load(path)
    name = Path(path).name
    dataset = DATASET.get(name.split("-")[-1], "mnist")
    x, y = datasets.select(f"{dataset}:test", "test", model.classes, inputs // len(model.classes), 0)
    enc, labels = model.encode(x), label_indices(model, y)
    job = program.of_model(model)
    print(f"\n{name}: {job.num_qubits} qubits, {len(enc)} inputs (Aer: {min(aer_inputs, len(enc))})")
    print(f"{'noise':<18} {'numpy ms/in':>12} {'Aer ms/in':>10} {'ratio':>7} {'max diff':>9} {'accuracy':>9}  path")
    for cfg_name in CONFIGS:
        cfg = load(f"configs/noise/{cfg_name}.toml")
        engine.probabilities(job, enc[:1], "numpy", cfg)  # warm both (imports, Aer start-up)
        engine.probabilities(job, enc[:1], "aer", cfg)
        start = time.perf_counter()
        fast = engine.probabilities(job, enc, "numpy", cfg)
        t_fast = (time.perf_counter() - start) / len(enc)
        sub = enc[:aer_inputs]
        start = time.perf_counter()
        ref = engine.probabilities(job, sub, "aer", cfg)
        t_aer = (time.perf_counter() - start) / len(sub)
        acc = float(np.mean(model.predict(fast) == labels))
        path_used = "numpy density" if noisy.numpy_applies(job.circuit, cfg) else "Aer (prefix too long)"
        print(
            f"{cfg_name:<18} {1e3 * t_fast:12.2f} {1e3 * t_aer:10.1f} {t_aer / t_fast:6.1f}x "
            f"{np.max(np.abs(fast[: len(sub)] - ref)):9.1e} {100 * acc:8.2f}%  {path_used}"
        )


def main(argv: list[str]) -> None:
    inputs, aer_inputs, models = 200, 10, []
    it = iter(argv)
    for a in it:
        if a == "--inputs":
            inputs = int(next(it))
        elif a == "--aer-inputs":
            aer_inputs = int(next(it))
        else:
            models.append(a)
    for path in models or ["data/models/qcl-mnist01", "data/models/zzfm-su2-iris", "data/models/drnn-mnist01"]:
        bench(path, inputs, aer_inputs)


if __name__ == "__main__":
    main(sys.argv[1:])
