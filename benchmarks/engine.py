"""Engine speed: microseconds per (circuit, input) for exact and 1000-shot evaluation on 200 inputs.

Side by side in one run: qmltest's batched engine (numpy statevector; Aer batched as the reference)
against the naive path (bind + transpile + one Aer run of 1000 shots per input circuit).
Usage: python benchmarks/engine.py [MODEL ...]   (default: the shipped 8-qubit MNIST models)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from qiskit import transpile
from qiskit_aer import AerSimulator

from qmltest import artifact
from qmltest import ir as irmod
from qmltest.data import datasets
from qmltest.simulate import engine

N, SHOTS = 200, 1000
DEFAULT = ["data/models/qcl-mnist01", "data/models/drnn-mnist01"]


def timed(fn, repeat: int = 3) -> float:
    """Best wall time of `repeat` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def naive(model: artifact.Model, encoded: np.ndarray, level: int | None = None) -> None:
    """One circuit per input: bind (or prepare the state), transpile, run 1000 shots on Aer."""
    sim = AerSimulator()
    base = irmod.to_circuit(model.ir)
    for row in encoded:
        if model.amplitude:
            qc = base.copy_empty_like()
            qc.initialize(row, range(model.ir.num_qubits))
            qc.compose(base, inplace=True)
        else:
            qc = base.assign_parameters(dict(zip(model.ir.inputs, row)))
        sim.run(transpile(qc, sim, optimization_level=level), shots=SHOTS).result().get_counts()


def bench(path: str) -> None:
    model = artifact.load(path)
    x, _ = datasets.select(model.manifest["training"].get("dataset", "mnist"), "test", model.classes)
    x = x[:N]
    encoded = model.encode(x)
    job = model.job()
    rng = np.random.default_rng(0)
    t_exact = timed(lambda: engine.probabilities(job, encoded))
    t_shots = timed(lambda: engine.sample_counts(engine.probabilities(job, encoded), SHOTS, rng))
    t_aer = timed(lambda: engine.probabilities(job, encoded, "aer"), repeat=1)
    t_naive = timed(lambda: naive(model, encoded), repeat=1)
    t_naive0 = timed(lambda: naive(model, encoded, 0), repeat=1)
    per = 1e6 / len(x)
    print(f"{path} ({model.ir.num_qubits} qubits, {len(model.ir.gates)} gates, {len(x)} inputs)")
    print(f"  naive Aer, 1000 shots, one run per input : {t_naive * per:10.1f} us/input  (default transpile)")
    print(f"  same, transpile optimization_level=0     : {t_naive0 * per:10.1f} us/input  (baseline)")
    t_naive = t_naive0  # ratios against the faster of the two naive paths
    print(f"  qmltest Aer batched, exact               : {t_aer * per:10.1f} us/input  x{t_naive / t_aer:7.1f}")
    print(f"  qmltest numpy batched, exact             : {t_exact * per:10.1f} us/input  x{t_naive / t_exact:7.1f}")
    print(f"  qmltest numpy batched, 1000 shots        : {t_shots * per:10.1f} us/input  x{t_naive / t_shots:7.1f}")


if __name__ == "__main__":
    for target in sys.argv[1:] or [p for p in DEFAULT if Path(p).exists()]:
        bench(target)
