"""The QML suite at the sizes people train (issue 45): 8, 12 and 16 qubits, side by side with Aer.

Models: Qiskit's z_feature_map(n) + real_amplitudes(n, reps=2), weights uniform in [-1, 1] (seed 0),
x % 2 readout over every measured qubit (qiskit-machine-learning VQC's default interpret); 100 test inputs uniform
in [0, pi] (seed 1), labelled by the model itself (every input correctly classified, the suite a
user's trained model gives). Per size:
- qmltest: `qmltest mutate MODEL --suite qml --test test.npz --json OUT -q` in a fresh process
  (start-up included), the whole suite, or a stratified sample of `--sample` mutants where the
  size says so (16 qubits by default: the whole suite there takes about half an hour on 2 cores);
  us per (mutant, input) is the whole wall time (generation and start-up included) over the
  competent mutants run times 100 inputs (the 200 null copies reuse the original's probabilities).
  Peak RSS of that process.
- Aer with batched binds, the best way a user would run the same mutants with the peer: one
  AerSimulator run per mutant with all 100 inputs bound as a parameter array, exact probabilities
  (`engine.probabilities(..., "aer")`), timed on a stratified sample of `--aer-mutants` of the
  same mutants (seeded), us per (mutant, input).
Prints one markdown table (the README's). Usage: python benchmarks/scale.py [--sizes 8,12,16]
[--sample16 300] [--aer-mutants 60]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NULL_COPIES = 200


def make_model(folder: Path, n: int) -> tuple[Path, Path]:
    """The size-n model folder and its self-labelled test set, written under `folder`."""
    from qiskit.circuit.library import real_amplitudes, z_feature_map

    from qmltest.interop import from_circuit
    from qmltest.model import artifact
    from qmltest.simulate.runner import model_probabilities

    fm, ansatz = z_feature_map(n), real_amplitudes(n, reps=2)
    weights = np.random.default_rng(0).uniform(-1, 1, ansatz.num_parameters)
    path = folder / f"m{n}"
    vqc = from_circuit(fm.compose(ansatz), weights, list(fm.parameters), readout="modulo", classes=[0, 1])
    vqc.save(str(path))
    x = np.random.default_rng(1).uniform(0, np.pi, (100, n))
    model = artifact.load(path)
    y = model.predict(model_probabilities(model, x))
    test = folder / f"test{n}.npz"
    np.savez(test, x=x, y=y)
    return path, test


def run_qmltest(model: Path, test: Path, out: Path, sample: int | None, precision: float | None = None) -> dict:
    """Wall seconds, peak RSS (MiB) and the report of one `qmltest mutate` process."""
    args = ["mutate", str(model), "--suite", "qml", "--test", str(test), "--json", str(out), "-q"]
    args += ["--sample", str(sample)] if sample else []
    args += ["--precision", str(precision)] if precision else []
    code = (
        "import resource, sys; from qmltest_cli.main import run; sys.argv = ['qmltest'] + "
        f"{args!r}\ntry:\n    run()\nexcept SystemExit as e:\n    code = e.code\nelse:\n    code = 0\n"
        "print('RSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(code)"
    )
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=out.parent)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"qmltest mutate failed: {done.stderr.strip().splitlines()[-2:]}")
    rss = next(int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("RSS"))
    return {"wall": wall, "rss_mib": rss / 1024, "report": json.loads(out.read_text())}


def aer_us(model_path: Path, test: Path, count: int) -> float:
    """Aer with batched binds: us per (mutant, input) over a stratified sample of `count` of the
    suite's competent mutants (the population qmltest scores)."""
    from qmltest.model import artifact
    from qmltest.mutation.operators import registry, sites
    from qmltest.mutation.strategies import sampling
    from qmltest.simulate import engine, program

    model = artifact.load(model_path)
    x = np.load(test)["x"]
    made = list(sites.iter_generate(model, sites.plan(model, registry.operators("qml", None, 0), "directed"), {}))
    picked, _ = sampling.sample_mutants(made, count, 0)
    mutants = [m.model for m in picked if m.status == "scored" and m.model is not None]
    start = time.perf_counter()
    for m in mutants:
        engine.probabilities(program.of_model(m), m.encode(x), "aer")
    return (time.perf_counter() - start) / (len(mutants) * len(x)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8,12,16")
    parser.add_argument("--sample16", type=int, default=300, help="mutants sampled at 16 qubits (0: the whole suite)")
    parser.add_argument("--aer-mutants", type=int, default=60)
    parser.add_argument("--precision16", type=float, default=0.05, help="a --precision row at 16 qubits (0: none)")
    opts = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="qmltest-scale-") as tmp:
        folder = Path(tmp)
        for n in (int(s) for s in opts.sizes.split(",")):
            model, test = make_model(folder, n)
            sample = (opts.sample16 or None) if n >= 16 else None
            got = run_qmltest(model, test, folder / f"out{n}.json", sample)
            rep = got["report"]
            simulated = sum(1 for m in rep["mutants"] if not m["status"].startswith("incompetent"))
            population = rep.get("sampling", {}).get("population", len(rep["mutants"]))
            us = got["wall"] / (simulated * 100) * 1e6  # null copies reuse the original's probabilities
            aer = aer_us(model, test, opts.aer_mutants)
            rows.append((n, population, len(rep["mutants"]), got["wall"], us, aer, got["rss_mib"], rep))
            print(f"{n} qubits done: {got['wall']:.1f} s", file=sys.stderr)
            if n >= 16 and opts.precision16:
                got = run_qmltest(model, test, folder / f"p{n}.json", None, opts.precision16)
                rep = got["report"]
                simulated = sum(1 for m in rep["mutants"] if not m["status"].startswith("incompetent"))
                us = got["wall"] / (simulated * 100) * 1e6
                rows.append((n, population, len(rep["mutants"]), got["wall"], us, aer, got["rss_mib"], rep))
    head = ["qubits", "suite mutants", "run (mutants)", "wall s", "qmltest us/(mutant, input)"]
    print("| " + " | ".join(head + ["Aer batched binds us", "peak RSS MiB", "score"]) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for n, population, ran, wall, us, aer, rss, rep in rows:
        score = rep.get("sampling", {}).get("estimate", rep["mutation_score"])
        interval = rep.get("sampling", {}).get("interval", rep["mutation_score_interval"])
        what = "whole suite" if "sampling" not in rep else f"sample of {rep['sampling']['sampled']}"
        if "target_width" in rep.get("sampling", {}):
            what = f"--precision {rep['sampling']['target_width']}: {what}"
        print(
            f"| {n} | {population} | {ran} ({what}) | {wall:.1f} | {us:.0f} | {aer:.0f} | {rss:.0f} | "
            f"{score:.3f} [{interval[0]:.3f}, {interval[1]:.3f}] |"
        )


if __name__ == "__main__":
    main()
