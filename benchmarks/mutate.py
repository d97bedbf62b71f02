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

from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.model import artifact
from qmltest.model import ir as irmod
from qmltest.mutation.evidence import stats
from qmltest.mutation.operators import quanforge as ops
from qmltest.mutation.operators.scope import Scope
from qmltest.mutation.pipeline import Options, run
from qmltest.simulate import engine, program

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
    """Per (mutant, input), exact: every directed QML mutant (1) resumed from the original's cached
    state and finished with its fused dense suffix (the default), (2) resumed at the last layer
    boundary only (bit-identical to (3)), (3) simulated from the start (today's path before issue
    14), and on a subset (4) Aer statevector with one batched parameter bind per mutant."""
    from qmltest.mutation.evidence.evaluator import Evaluator
    from qmltest.mutation.operators import registry, sites

    model = artifact.load(f"data/models/{name}")
    x, y = datasets.select("mnist:test", "test", model.classes, 100, 0)
    data = Data.of("t", model, x, y)
    made, _ = sites.generate(model, registry.operators("qml", None), "directed")
    mutants = [
        g.model
        for g in made
        if g.model is not None and g.model.manifest["preprocessing"] == model.manifest["preprocessing"]
    ]
    for m in mutants:
        _ = program.of_model(m).ops  # compile outside the timing: every path shares it
    seconds, results = {}, {}
    for label, fuse in (("fused", True), ("prefix", False)):
        evaluator = Evaluator(model, REPEATS, SHOTS, 0)
        evaluator.sim.fuse = fuse
        evaluator.probs(mutants[0], data)  # builds the checkpoints (timed apart below)
        start = time.perf_counter()
        results[label] = [evaluator.probs(m, data) for m in mutants]
        seconds[label] = time.perf_counter() - start
    evaluator = Evaluator(model, REPEATS, SHOTS, 0)
    start = time.perf_counter()
    for i, p in enumerate(results["fused"]):
        evaluator.accuracies(p, data, str(i))
    t_sample = time.perf_counter() - start
    start = time.perf_counter()
    results["plain"] = [engine.probabilities(program.of_model(m), data.encoded) for m in mutants]
    seconds["plain"] = time.perf_counter() - start
    few = mutants[:: max(1, len(mutants) // 12)]
    start = time.perf_counter()
    aer = [engine.probabilities(program.of_model(m), data.encoded, backend="aer") for m in few]
    t_aer = (time.perf_counter() - start) / len(few)
    from qmltest.errors import InputError
    from qmltest.simulate import arraykernel, resume

    kernel = {}  # the array kernel, mutants x inputs in signature groups: numpy here, CuPy where present
    for name_ in ("numpy", "gpu"):
        try:
            if name_ == "gpu":
                arraykernel.namespace()
        except InputError:
            continue
        jobs = [program.of_model(m) for m in mutants]
        engine.probabilities_many(jobs[:4], data.encoded, name_)  # warm (CuPy compiles its kernels once)
        start = time.perf_counter()
        got = engine.probabilities_many(jobs, data.encoded, name_)
        kernel[name_] = (
            time.perf_counter() - start,
            max(float(np.max(np.abs(a - b))) for a, b in zip(got, results["plain"])),
            len({arraykernel.signature(j.ops) for j in jobs}),
        )
    start = time.perf_counter()
    check = resume.Checkpoints(program.of_model(model), data.encoded)
    t_build = time.perf_counter() - start
    per = 1e6 / (len(mutants) * len(data.y))
    plain = seconds["plain"] * per
    fused_err = max(float(np.max(np.abs(a - b))) for a, b in zip(results["fused"], results["plain"]))
    aer_err = max(float(np.max(np.abs(a - results["fused"][mutants.index(m)]))) for a, m in zip(aer, few))
    same = all(np.array_equal(a, b) for a, b in zip(results["prefix"], results["plain"]))
    print(f"  {name}: {len(mutants)} mutants x {len(data.y)} inputs, exact, us per (mutant, input):")
    print(
        f"    fused suffix {seconds['fused'] * per:7.1f}  (x{plain / (seconds['fused'] * per):.2f} vs from the start; "
        f"max |diff| {fused_err:.1e}; checkpoints {check.nbytes / 2**20:.0f} MB, stride {check.stride}, "
        f"built in {t_build:.2f} s once per data set)"
    )
    print(
        f"    + sampling   {t_sample * per:7.1f}  ({REPEATS} repeats x {SHOTS} shots, majority vote; "
        f"fused + sampling {(seconds['fused'] + t_sample) * per:.1f})"
    )
    t_prefix = seconds["prefix"] * per
    print(f"    prefix reuse {t_prefix:7.1f}  (x{plain / t_prefix:.2f}; bit-identical: {same})")
    print(f"    from start   {plain:7.1f}")
    for name_, (secs, err, groups) in kernel.items():
        print(
            f"    kernel {name_:<5} {secs * per:7.1f}  (array kernel, mutants x inputs in {groups} signature groups; "
            f"max |diff| {err:.1e})"
        )
    print(
        f"    Aer batched  {1e6 * t_aer / len(data.y):7.1f}  (one bind of {len(data.y)} inputs per mutant, "
        f"{len(few)} mutants; fused is x{1e6 * t_aer / len(data.y) / (seconds['fused'] * per):.0f} faster; "
        f"max |diff| {aer_err:.1e})"
    )


def main() -> None:
    model = artifact.load(MODEL)
    x, y = datasets.select("mnist", "train", model.classes, 100, 0)
    ref = Data.of("ref", model, x, y, keep_raw=False)
    mutant_ir, _ = ops.PF().mutate(model.ir, Scope(), 0.05, np.random.default_rng(0))
    mutant = model.with_ir(mutant_ir)
    start = time.perf_counter()
    probs = engine.probabilities(program.of_model(mutant), ref.encoded)
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


def generation(names: tuple[str, ...] = ("qcl-mnist01", "drnn-mnist01", "zzfm-su2-iris", "hqnn-mnist01")) -> None:
    """Directed QML-suite generation (sites, edit, canonical form, content id; no export), per mutant:
    median and best of 7 runs, with the collector settled as the CLI does (`qmltest.util.gctune`)."""
    import statistics

    from qmltest.mutation.operators import registry, sites
    from qmltest.util import gctune

    gctune.settle(collect=True)  # after main(): its garbage is freed, not frozen
    print("mutant generation, directed QML suite (median / best of 7 runs):")
    for name in names:
        model = artifact.load(f"data/models/{name}")
        ops_ = registry.operators("qml", None)
        times = []
        for _ in range(7):
            start = time.perf_counter()
            made, _ = sites.generate(model, ops_, "directed")
            times.append((time.perf_counter() - start) / len(made))
        print(
            f"  {name:16s} {len(made):6d} mutants  {1e3 * statistics.median(times):.3f} / "
            f"{1e3 * min(times):.3f} ms per mutant"
        )


if __name__ == "__main__":
    main()
    generation()
    print("resuming mutants (QML mutants share the original's gates up to their first change):")
    for name in ("qcl-mnist01", "drnn-mnist01"):
        prefix_reuse(name)
