"""Mutation speed on the shipped 8-qubit MNIST 0/1 QCL model.

Prints (1) the time per effective mutant of Algorithm 1 (PF operator, 100 reference inputs per
class, 20 repeats x 1000 shots), and (2) the time per (mutant, input) evaluation of 20 repeated
1000-shot predictions: qmltest (one exact simulation, then multinomial draws) beside the naive path
(one Aer run of 1000 shots per input and repeat), measured in the same run on a subset, with the ratio.
"""

from __future__ import annotations

import time

import numpy as np
from qiskit import transpile
from qiskit_aer import AerSimulator

from qmltest import artifact
from qmltest import ir as irmod
from qmltest.data import datasets
from qmltest.evaluate import label_indices
from qmltest.mutation import operators as ops
from qmltest.mutation import stats
from qmltest.mutation.evaluate import Data
from qmltest.mutation.pipeline import Options, run
from qmltest.mutation.scope import Scope
from qmltest.simulate import engine

MODEL, REPEATS, SHOTS = "data/models/qcl-mnist01", 20, 1000
NAIVE_INPUTS, NAIVE_REPEATS = 10, 2


def naive_seconds_per_input_repeat(model: artifact.Model, states: np.ndarray) -> float:
    sim = AerSimulator()
    base = irmod.to_circuit(model.ir)
    start = time.perf_counter()
    for _ in range(NAIVE_REPEATS):
        for row in states[:NAIVE_INPUTS]:
            qc = base.copy_empty_like()
            qc.initialize(row, range(model.ir.num_qubits))
            qc.compose(base, inplace=True)
            sim.run(transpile(qc, sim), shots=SHOTS).result().get_counts()
    return (time.perf_counter() - start) / (NAIVE_REPEATS * NAIVE_INPUTS)


def prefix_reuse(name: str) -> None:
    """Per (mutant, input): every directed QML mutant resumed from the original's state at its last
    unchanged layer boundary, against simulating it from the start (both exact, bit-identical)."""
    from qmltest.mutation import sites
    from qmltest.mutation.evaluate import Evaluator

    model = artifact.load(f"data/models/{name}")
    x, y = datasets.select("mnist:test", "test", model.classes, 50, 0)
    data = Data("t", model.encode(x), label_indices(model, y), x)
    made, _ = sites.generate(model, sites.operators("qml", None), "directed")
    mutants = [
        g.model
        for g in made
        if g.model is not None and g.model.manifest["preprocessing"] == model.manifest["preprocessing"]
    ]
    for m in mutants:
        _ = m.job().ops  # compile outside the timing: both paths share it
    evaluator = Evaluator(model, REPEATS, SHOTS, 0)
    evaluator.probs(mutants[0], data)
    start = time.perf_counter()
    fast = [evaluator.probs(m, data) for m in mutants]
    t_fast = time.perf_counter() - start
    start = time.perf_counter()
    plain = [engine.probabilities(m.job(), data.encoded) for m in mutants]
    t_plain = time.perf_counter() - start
    same = all(np.array_equal(a, b) for a, b in zip(fast, plain))
    per = 1e6 / (len(mutants) * len(data.y))
    print(
        f"  {name}: {len(mutants)} mutants x {len(data.y)} inputs, exact: prefix reuse {t_fast * per:.1f} us vs "
        f"from the start {t_plain * per:.1f} us per (mutant, input), x{t_plain / t_fast:.2f}; bit-identical: {same}"
    )


def main() -> None:
    model = artifact.load(MODEL)
    x, y = datasets.select("mnist", "train", model.classes, 100, 0)
    ref = Data("ref", model.encode(x), label_indices(model, y))
    mutant_ir, _ = ops.PF().mutate(model.ir, Scope(), 0.05, np.random.default_rng(0))
    mutant = model.with_ir(mutant_ir)
    start = time.perf_counter()
    probs = engine.probabilities(mutant.job(), ref.encoded)
    acc = stats.accuracy_distribution(
        probs, ref.y, model.readout_matrix, model.num_classes, REPEATS, SHOTS, np.random.default_rng(0)
    )
    ours = (time.perf_counter() - start) / len(ref.y)
    naive = naive_seconds_per_input_repeat(mutant, ref.encoded) * REPEATS
    print(f"{MODEL}: {model.ir.num_qubits} qubits, {len(model.ir.gates)} gates, {len(ref.y)} reference inputs")
    print(f"  per (mutant, input), {REPEATS} repeats x {SHOTS} shots:")
    print(f"    naive (Aer run per input and repeat): {1e3 * naive:9.2f} ms")
    print(f"    qmltest (simulate once, sample)      : {1e3 * ours:9.3f} ms   x{naive / ours:.0f} faster")
    print(f"    mutant mean accuracy {acc.mean():.4f}")
    start = time.perf_counter()
    res, _ = run(model, [ref], Options(operators=("PF",), repeats=REPEATS, shots=SHOTS, seed=1), ref)
    seconds = time.perf_counter() - start
    summary = res["generation"]["cells"]["all"]["PF"]
    print(f"  Algorithm 1 with PF: {summary['generated']} mutants, {summary['effective']} effective in {seconds:.1f} s")
    print(
        f"    {1e3 * seconds / max(summary['generated'], 1):.1f} ms per mutant, "
        f"{seconds / max(summary['effective'], 1):.3f} s per effective mutant"
    )


if __name__ == "__main__":
    main()
    print("prefix reuse (QuanForge/QML mutants share the original's gates up to their first change):")
    for name in ("qcl-mnist01", "drnn-mnist01"):
        prefix_reuse(name)
