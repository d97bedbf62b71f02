"""A finished mutate run, run again, against the run itself (issue 57: under 5% of its wall time).

The same command three ways, each a fresh process, in turn for ROUNDS rounds: the whole run from an
empty folder (`--force`), the same command again over the finished folder (its report replayed:
nothing generated or simulated), and a resume after a kill halfway (the folder cut back to half its
records, no report). Reports are compared byte for byte (less the command line). Peak RSS from
the kernel's accounting of each child. Writes results/bench/rerun.txt.

    python benchmarks/rerun.py [--model data/models/qcnn-mnist01] [--per-class 25,400] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QMLTEST = str(Path(sys.executable).parent / "qmltest")


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one child process (its own rusage, from wait4)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {err.read().decode().strip()}")
    return wall, usage.ru_maxrss / 1024


def report(path: Path) -> dict:
    doc = json.loads(path.read_text())
    doc["meta"].pop("command")
    return doc


def cut_half(folder: Path) -> None:
    """The folder as a kill halfway leaves it: half the records, no report, no finished mark."""
    for name in ("report.json", "finished.json"):
        (folder / name).unlink(missing_ok=True)
    log = folder / "results.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[: len(lines) // 2]))


def measure(a: argparse.Namespace, per_class: int) -> list[str]:
    """The three timings for one suite size, as table lines."""
    base = [QMLTEST, "mutate", a.model, "--family", a.family, "--test", a.data, "--per-class", str(per_class)]
    base += ["--seed", "1", "-q"]
    rows: dict[str, list[tuple[float, float]]] = {"whole run": [], "finished run again": [], "resume after a kill": []}
    with tempfile.TemporaryDirectory(prefix="qmltest-rerun-") as tmp:
        run, half = Path(tmp) / "run", Path(tmp) / "half"
        for r in range(a.rounds):
            rows["whole run"].append(timed([*base, "--out", str(run), "--force", "--json", f"{tmp}/whole.json"]))
            rows["finished run again"].append(timed([*base, "--out", str(run), "--json", f"{tmp}/again.json"]))
            shutil.rmtree(half, ignore_errors=True)
            shutil.copytree(run, half)
            cut_half(half)
            rows["resume after a kill"].append(timed([*base, "--out", str(half), "--json", f"{tmp}/resumed.json"]))
            whole = report(Path(tmp) / "whole.json")
            for other in ("again", "resumed"):
                assert report(Path(tmp) / f"{other}.json") == whole, f"round {r}: {other} report differs"
        mutants, inputs = len(whole["mutants"]), sum(s["inputs"] for s in whole["suites"].values())
    med = {k: statistics.median(w for w, _ in v) for k, v in rows.items()}
    lines = [f"## {mutants} mutants x {inputs} inputs ({a.data}, {per_class} per class)"]
    for k, v in rows.items():
        walls = [w for w, _ in v]
        span = f"{med[k]:.2f} ({min(walls):.2f}-{max(walls):.2f})"
        share = f"{100 * med[k] / med['whole run']:.1f}%"
        lines.append(f"{k:24s} {span:>24s} {max(m for _, m in v):14.0f} {share:>18s}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(ROOT / "data/models/qcnn-mnist01"))
    ap.add_argument("--data", default="mnist:train")
    ap.add_argument("--per-class", default="25,400", help="Suite sizes, comma-separated.")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--family", default="qml", help="Operator family (qml, classic, quanforge).")
    ap.add_argument("--out", default=str(ROOT / "results/bench/rerun.txt"))
    a = ap.parse_args()
    lines = [
        f"# {Path(a.model).name}, {a.family} operators; {os.cpu_count()} cores; {a.rounds} rounds in turn, each"
        " command a fresh process; medians; every round's reports equal byte for byte (less the command line)",
        f"{'':24s} {'wall s (min-max)':>24s} {'peak RSS MiB':>14s} {'of the whole run':>18s}",
    ]
    for per_class in (int(v) for v in a.per_class.split(",")):
        lines += measure(a, per_class)
    text = "\n".join(lines) + "\n"
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
