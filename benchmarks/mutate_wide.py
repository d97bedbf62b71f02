"""A 16-qubit QML-suite `qmltest mutate`, wall time with start-up, against an older commit (issue 29's
target: at least 10x faster than the numpy-only path of 5042fdb).

The model: Qiskit's z_feature_map(16) + real_amplitudes(16, reps=2), weights uniform in [-1, 1]
(seed 0), parity readout over all 16 qubits; 100 test inputs uniform in [0, pi] (seed 1). The command:
`qmltest mutate MODEL --suite qml --operators ALD,LS,ILS --test test.npz --backend B --json OUT -q`
(200 null copies, the default). The base runs its own code from a git worktree with `--backend
numpy`, the only path it had; this tree runs `--backend auto`. Runs alternate (base, new, new, ...)
so that drift on a shared machine falls on both. Prints each time, the medians, their ratio and a
one-sided Mann-Whitney p that the base takes more than TARGET x the new time; checks that both
reports give the same mutation score.
Usage: python benchmarks/mutate_wide.py [--base REF] [--base-runs 3] [--runs 7]
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
from worktree import cli_command, commit_path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 10.0
QUBITS = 16


def make_model(folder: Path) -> tuple[Path, Path]:
    """The benchmark's model folder and test set, written under `folder`."""
    from qiskit.circuit.library import real_amplitudes, z_feature_map

    from qmltest.interop import from_circuit

    fm, ansatz = z_feature_map(QUBITS), real_amplitudes(QUBITS, reps=2)
    weights = np.random.default_rng(0).uniform(-1, 1, ansatz.num_parameters)
    model = folder / "model"
    from_circuit(fm.compose(ansatz), weights, list(fm.parameters), readout="parity", classes=[0, 1]).save(str(model))
    rng = np.random.default_rng(1)
    test = folder / "test.npz"
    np.savez(test, x=rng.uniform(0, np.pi, (100, QUBITS)), y=rng.integers(0, 2, 100))
    return model, test


def base_path(ref: str, folder: Path) -> Path:
    """A PYTHONPATH that imports the library and CLI of commit `ref` (`worktree.commit_path`)."""
    return commit_path(ref, folder, "base")


def run(model: Path, test: Path, out: Path, backend: str, pythonpath: Path | None) -> float:
    """Wall seconds of one `qmltest mutate`, start-up included."""
    args = ["mutate", str(model), "--suite", "qml", "--operators", "ALD,LS,ILS", "--test", str(test)]
    args += ["--backend", backend, "--json", str(out), "-q"]
    code, env = cli_command(args, pythonpath)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, cwd=model.parent, check=True)  # not this tree's cwd
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="5042fdb", help="commit whose numpy-only path is the baseline")
    parser.add_argument("--base-runs", type=int, default=3)
    parser.add_argument("--runs", type=int, default=7)
    opts = parser.parse_args()
    from scipy.stats import mannwhitneyu

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model, test = make_model(folder)
        base = base_path(opts.base, folder)
        try:
            old: list[float] = []
            new: list[float] = []
            per_base = max(1, opts.runs // max(opts.base_runs, 1))
            while len(old) < opts.base_runs or len(new) < opts.runs:
                if len(old) < opts.base_runs:
                    old.append(run(model, test, folder / "old.json", "numpy", base))
                    print(f"base {opts.base} numpy: {old[-1]:.2f} s", flush=True)
                for _ in range(min(per_base, opts.runs - len(new))):
                    new.append(run(model, test, folder / "new.json", "auto", None))
                    print(f"this tree auto: {new[-1]:.2f} s", flush=True)
            scores = [json.loads((folder / f).read_text())["mutation_score"] for f in ("old.json", "new.json")]
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(folder / "base")], cwd=ROOT, check=False)
    mo, mn = float(np.median(old)), float(np.median(new))
    p = mannwhitneyu(old, [TARGET * t for t in new], alternative="greater").pvalue
    print(f"\nbase {opts.base} (numpy): median {mo:.2f} s over {len(old)} runs, range {min(old):.2f}-{max(old):.2f}")
    print(f"this tree (auto):  median {mn:.2f} s over {len(new)} runs, range {min(new):.2f}-{max(new):.2f}")
    print(
        f"speed-up of the medians: {mo / mn:.1f}x (target {TARGET:.0f}x); range {min(old) / max(new):.1f}-"
        f"{max(old) / min(new):.1f}x; one-sided Mann-Whitney p(base > {TARGET:.0f} x new) = {p:.3f}"
    )
    print(f"mutation scores: base {scores[0]}, this tree {scores[1]}" + ("" if scores[0] == scores[1] else "  DIFFER"))


if __name__ == "__main__":
    main()
