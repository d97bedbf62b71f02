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


def make_model(folder: Path, n: int, inputs: int = 100) -> tuple[Path, Path]:
    """The size-n model folder and its self-labelled test set of `inputs` inputs, under `folder`."""
    from qiskit.circuit.library import real_amplitudes, z_feature_map

    from qmltest.interop import from_circuit
    from qmltest.model import artifact
    from qmltest.simulate.runner import model_probabilities

    fm, ansatz = z_feature_map(n), real_amplitudes(n, reps=2)
    weights = np.random.default_rng(0).uniform(-1, 1, ansatz.num_parameters)
    path = folder / f"m{n}"
    vqc = from_circuit(fm.compose(ansatz), weights, list(fm.parameters), readout="modulo", classes=[0, 1])
    vqc.save(str(path))
    x = np.random.default_rng(1).uniform(0, np.pi, (inputs, n))
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


PEER_WORK = {8: (40, 100), 12: (40, 100), 16: (12, 50), 20: (4, 10), 24: (2, 2)}
"""Mutants and inputs per width in the peers' table: the same (mutant, input) pairs for every engine."""
ENGINES = ("qmltest", "qmltest-numpy", "aer", "qulacs-1", "qulacs-all", "lightning")


def peer_mutants(model_path: Path, count: int) -> list:
    """A stratified, seeded sample of the QML suite's competent mutants (the same in every process)."""
    from qmltest.model import artifact
    from qmltest.mutation.operators import registry, sites
    from qmltest.mutation.strategies import sampling

    model = artifact.load(model_path)
    made = list(sites.iter_generate(model, sites.plan(model, registry.operators("qml", None, 0), "directed"), {}))
    picked, _ = sampling.sample_mutants(made, count, 0)
    return [m.model for m in picked if m.status == "scored" and m.model is not None]


def one_engine(engine: str, model_path: Path, test: Path, mutants: int, inputs: int) -> dict:
    """us per (mutant, input) of one engine over the sampled mutants x inputs, the largest
    difference of its P(qubit 0) from qmltest's numpy path on the first mutant, and this process's
    peak RSS. qmltest runs as mutate does (the original compiled once, mutants resumed from its
    checkpoints); the peers as `peers.py` says."""
    import resource

    import peers

    from qmltest.data.labelled import Data
    from qmltest.model import artifact
    from qmltest.simulate import engine as sim_engine
    from qmltest.simulate import program
    from qmltest.simulate.compiled import compile as compile_model

    model = artifact.load(model_path)
    z = np.load(test)
    x, y = z["x"][:inputs], z["y"][:inputs]
    made = peer_mutants(model_path, mutants)
    if engine.startswith("qmltest"):
        sim = compile_model(model, None if engine == "qmltest" else "numpy", None, inputs)
        data = Data.of("peers", model, x, y)
        sim.original_probs(data)  # compiled once, before the clock (as a mutate run does first)
        run = lambda m: sim.probs(m, data)  # noqa: E731
        name = sim.backend.name
    else:
        fn = peers.PEERS[engine.split("-")[0]]
        prepared = [fn(program.of_model(m), m.encode(x)) for m in made]  # built before the clock
        name = engine
    start = time.perf_counter()
    got = [run(m) for m in made] if engine.startswith("qmltest") else [go() for go in prepared]
    seconds = time.perf_counter() - start
    first = made[0]
    ref = sim_engine.probabilities(program.of_model(first).with_measured((0,)), first.encode(x), "numpy")
    mine = got[0] @ sim.matrix(first) if engine.startswith("qmltest") else got[0]  # x % 2: P(qubit 0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    diff = float(np.abs(np.asarray(mine) - ref).max())
    return {
        "engine": name,
        "us": seconds / (len(made) * len(x)) * 1e6,
        "rss_mib": rss,
        "diff": diff,
        "pairs": len(made) * len(x),
    }


def peers_table(sizes: list[int], folder: Path) -> list[str]:
    """One row per width: each engine's us per (mutant, input) in its own process, and the ratios."""
    import os

    lines = [
        "| qubits | mutants x inputs | "
        + " | ".join(f"{e} us" for e in ENGINES)
        + " | auto / best | qulacs-all / qmltest | lightning / qmltest | peak RSS MiB "
        + "(qmltest, aer, qulacs, lightning) |",
        "|" + "---|" * (len(ENGINES) + 6),
    ]
    for n in sizes:
        mutants, inputs = PEER_WORK[n]
        model, test = make_model(folder, n, max(inputs, 10))
        got = {}
        for engine in ENGINES:
            env = dict(os.environ)
            if engine.startswith("qulacs"):
                env["OMP_NUM_THREADS"] = "1" if engine == "qulacs-1" else str(os.cpu_count() or 1)
            call = f"scale.one_engine({engine!r}, Path({str(model)!r}), Path({str(test)!r}), {mutants}, {inputs})"
            head = "import json, sys; sys.path.insert(0, 'benchmarks'); import scale; from pathlib import Path"
            code = f"{head}; print(json.dumps({call}))"
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
            if done.returncode != 0:
                got[engine] = {"us": float("nan"), "rss_mib": float("nan"), "diff": float("nan"), "engine": engine}
                print(f"{n} qubits, {engine}: failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                continue
            got[engine] = json.loads(done.stdout.strip().splitlines()[-1])
            if not got[engine]["diff"] < 1e-9:
                raise SystemExit(f"{engine} at {n} qubits differs from qmltest by {got[engine]['diff']:.2g}")
            print(f"{n} qubits, {engine}: {got[engine]['us']:.0f} us", file=sys.stderr)
        us = {e: got[e]["us"] for e in ENGINES}
        best = min(v for v in us.values() if v == v)
        cells = [f"{us[e]:.0f}" + (f" ({got[e]['engine']})" if e == "qmltest" else "") for e in ENGINES]
        rss = ", ".join(f"{got[e]['rss_mib']:.0f}" for e in ("qmltest", "aer", "qulacs-all", "lightning"))
        lines.append(
            f"| {n} | {mutants} x {inputs} | " + " | ".join(cells) + f" | {us['qmltest'] / best:.2f} | "
            f"{us['qulacs-all'] / us['qmltest']:.2f} | {us['lightning'] / us['qmltest']:.2f} | {rss} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8,12,16")
    parser.add_argument("--sample16", type=int, default=300, help="mutants sampled at 16 qubits (0: the whole suite)")
    parser.add_argument("--aer-mutants", type=int, default=60)
    parser.add_argument("--precision16", type=float, default=0.05, help="a --precision row at 16 qubits (0: none)")
    parser.add_argument(
        "--peers", default="", help="widths of the peers' table, e.g. 8,12,16,20 (alone: no suite runs)"
    )
    opts = parser.parse_args()
    if opts.peers:
        with tempfile.TemporaryDirectory(prefix="qmltest-peers-") as tmp:
            print("\n".join(peers_table([int(s) for s in opts.peers.split(",")], Path(tmp))))
        return
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
