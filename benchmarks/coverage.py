"""Coverage speed: 10,000 inputs on an 8-qubit model with all 256 basis states read out.

Prints time per input for exact probabilities, 1e5-shot estimates, the incremental coverage update
(one input at a time, O(|S|)), and the baseline that recomputes coverage over the whole suite after
each added input, measured on a prefix in the same run; the ratio is per input.
"""

from __future__ import annotations

import time

import numpy as np

from qmltest.coverage import measure
from qmltest.coverage.criteria import Bounds, Coverage
from qmltest.coverage.profile import bounds, build
from qmltest.model import readout
from qmltest.simulate import engine, program
from qmltest.zoo import architectures as archs
from qmltest.zoo.train import _to_model

N, SHOTS, BASELINE_PREFIX = 10_000, 100_000, 300


def model_all_measured():
    built = archs.qcl(2)
    built.measured = list(range(built.num_qubits))
    rng = np.random.default_rng(0)
    bound = built.circuit().assign_parameters(dict(zip(built.weights, rng.uniform(-np.pi, np.pi, len(built.weights)))))
    mapping = readout.table("modulo", built.num_qubits, 2)
    built.readout = "modulo"
    return _to_model("qcl", built, bound, [], mapping, [0, 1], "synthetic")


def main() -> None:
    model = model_all_measured()
    rng = np.random.default_rng(1)
    states = np.abs(rng.normal(size=(N + 500, 256))) + 0j
    states /= np.linalg.norm(states, axis=1, keepdims=True)
    job = program.of_model(model)
    t0 = time.perf_counter()
    probs = engine.probabilities(job, states)
    t_exact = time.perf_counter() - t0
    train, suite = probs[:500], probs[500:]
    t0 = time.perf_counter()
    shot_probs = measure.estimate(suite, SHOTS, np.random.default_rng(2))
    t_shots = time.perf_counter() - t0
    b = Bounds(*bounds(build(train, model.sha256)))
    timings = {}
    for label, data in (("exact", suite), (f"{SHOTS} shots", shot_probs)):
        cov = Coverage(measure.criteria(100, 1), b)
        t0 = time.perf_counter()
        for row in data:
            cov.add(row)
        timings[label] = (time.perf_counter() - t0) / len(data)
        print(
            f"{label:>12}: KSC {100 * cov.values()['ksc']:.2f}%  SCC {100 * cov.values()['scc']:.2f}%  "
            f"TSC {100 * cov.values()['tsc']:.2f}%"
        )
    t0 = time.perf_counter()
    for i in range(1, BASELINE_PREFIX + 1):  # baseline: recompute over the suite so far
        cov = Coverage(measure.criteria(100, 1), b)
        cov.add(suite[:i])
    t_base = (time.perf_counter() - t0) / BASELINE_PREFIX
    t0 = time.perf_counter()
    cov = Coverage(measure.criteria(100, 1), b)
    for row in suite[:BASELINE_PREFIX]:
        cov.add(row)
    t_incr = (time.perf_counter() - t0) / BASELINE_PREFIX
    print(f"8 qubits, {len(model.ir.gates)} gates, |S| = 256, {N} inputs")
    print(f"  exact probabilities (engine)        : {1e6 * t_exact / (N + 500):9.1f} us/input")
    print(f"  1e5-shot estimate from exact        : {1e6 * t_shots / N:9.1f} us/input")
    for label, t in timings.items():
        print(f"  coverage update, {label:<18} : {1e6 * t:9.1f} us/input")
    print(
        f"  recompute-over-suite baseline (first {BASELINE_PREFIX}) : {1e6 * t_base:9.1f} us/input, "
        f"incremental {1e6 * t_incr:.1f} us/input, ratio x{t_base / t_incr:.1f}"
    )


if __name__ == "__main__":
    main()
