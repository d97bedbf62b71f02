"""Engine speed: microseconds per (circuit, input) for exact and 1000-shot evaluation on 200 inputs.

Side by side in one run: qmltest's batched engine (numpy statevector; Aer batched as the reference)
against the naive path (bind + transpile + one Aer run of 1000 shots per input circuit).
Then per (mutant, input) on QCL and DRNN for each path, and a scaling table, 4 to 20 qubits: a
hardware-efficient angle-encoded circuit (ry(x) per qubit, 3 layers of ry/rz weights and a cx
ladder), exact probabilities of 64 inputs read on one qubit: time per input of the numpy engine,
of Aer with batched parameter binds and of auto, and the numpy engine's peak memory (tracemalloc).
Usage: python benchmarks/engine.py [MODEL ...] [--scaling-only]   (default: the shipped 8-qubit MNIST models)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from qiskit import transpile
from qiskit_aer import AerSimulator

from qmltest.data import datasets
from qmltest.model import artifact
from qmltest.model import ir as irmod
from qmltest.simulate import engine, program

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
    job = program.of_model(model)
    rng = np.random.default_rng(0)
    t_exact = timed(lambda: engine.probabilities(job, encoded, "numpy"))
    t_shots = timed(lambda: engine.sample_counts(engine.probabilities(job, encoded, "numpy"), SHOTS, rng))
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


def hardware_efficient(n: int, layers: int = 3) -> program.Circuit:
    from qiskit import QuantumCircuit
    from qiskit.circuit import Parameter

    rng = np.random.default_rng(n)
    x = [Parameter(f"x{i}") for i in range(n)]
    qc = QuantumCircuit(n)
    for q in range(n):
        qc.ry(x[q], q)
    for _ in range(layers):
        for q in range(n):
            qc.ry(float(rng.uniform(0, np.pi)), q)
            qc.rz(float(rng.uniform(0, np.pi)), q)
        for q in range(n - 1):
            qc.cx(q, q + 1)
    return program.Circuit(qc, (0,), tuple(x))


def scaling(sizes: tuple[int, ...] = (4, 8, 12, 14, 16, 18, 20), batch: int = 64) -> None:
    import tracemalloc

    from qmltest.errors import InputError
    from qmltest.simulate import arraykernel
    from qmltest.simulate.backends import REGISTRY

    try:
        arraykernel.namespace()
        gpu = True
    except InputError:
        gpu = False  # no CuPy or no CUDA device: the column says so
    print(f"scaling: exact probabilities of {batch} inputs, 3 weight layers; us per input")
    print(
        f"{'qubits':>6} {'read':>5} {'numpy':>10} {'Aer binds':>10} {'Aer/numpy':>9} {'auto':>10} {'auto/best':>9}"
        f" {'numpy peak MB':>14} {'gpu (CuPy)':>11}"
    )
    for n in sizes:
        for read in ("one", "all"):  # Aer's cost grows with the readout (2^m values per input)
            job = hardware_efficient(n)
            if read == "all":
                job = job.with_measured(tuple(range(n)))
            enc = np.random.default_rng(0).uniform(0, np.pi, (batch, n))
            engine.probabilities(job, enc[:2], "numpy")
            engine.probabilities(job, enc[:2], "aer")
            repeat = 1 if n > 16 else 3
            t_np = timed(lambda job=job, enc=enc: engine.probabilities(job, enc, "numpy"), repeat=repeat)
            t_aer = timed(lambda job=job, enc=enc: engine.probabilities(job, enc, "aer"), repeat=repeat)
            t_auto = (
                t_np if REGISTRY.for_job("auto", job).capabilities.prefix_reuse else t_aer
            )  # auto runs one of the two
            tracemalloc.start()
            engine.probabilities(job, enc, "numpy")
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            per = 1e6 / batch
            t_gpu = "-"
            if gpu:
                engine.probabilities(job, enc[:2], "gpu")
                t_gpu = f"{timed(lambda job=job, enc=enc: engine.probabilities(job, enc, 'gpu'), repeat=3) * per:11.1f}"
            print(
                f"{n:>6} {read:>5} {t_np * per:10.1f} {t_aer * per:10.1f} {t_aer / t_np:8.2f}x {t_auto * per:10.1f} "
                f"{t_auto / min(t_np, t_aer):8.2f}x {peak / 2**20:14.1f} {t_gpu:>11}"
            )


def per_mutant() -> None:
    """Per (mutant, input) on QCL and DRNN for each path: numpy resumed (fused suffix, prefix
    reuse), numpy from the start, Aer batched binds (`benchmarks/mutate.py`); auto is numpy here."""
    sys.path.insert(0, str(Path(__file__).parent))
    from mutate import prefix_reuse

    print("per (mutant, input), every directed QML mutant, MNIST test inputs:")
    for name in ("qcl-mnist01", "drnn-mnist01"):
        prefix_reuse(name)


if __name__ == "__main__":
    from qmltest.util import gctune

    gctune.settle()  # as the CLI does before any work: large arrays stay on the heap (see gctune.HEAP_BYTES)
    args = [a for a in sys.argv[1:] if a != "--scaling-only"]
    if "--scaling-only" not in sys.argv:
        for target in args or [p for p in DEFAULT if Path(p).exists()]:
            bench(target)
        per_mutant()
    scaling()
