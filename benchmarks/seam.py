"""Before/after the simulator seam (issue 44): the same reports, byte for byte, and the same speed.

Runs a fixed set of CLI commands on the shipped models, once with this tree's code and once with a
base commit's (a detached git worktree on PYTHONPATH), alternating base and new `--runs` times, in
one process tree on one machine. Prints, per command, whether every report file is byte-identical
(the JSON holds no timings) and the median wall seconds of each side with their ratio; a one-sided
Mann-Whitney test says whether the new side is slower. The base is the commit before the seam
(eb41399) unless `--base` names another.

    python benchmarks/seam.py [--base REF] [--runs N]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from worktree import cli_command, commit_path, remove

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "data" / "models"
NOISE = ROOT / "configs" / "noise"

COMMANDS: dict[str, list[str]] = {
    "evaluate iris (auto)": [
        "evaluate",
        f"{MODELS}/zfm-ra-iris",
        "--shots",
        "1000",
        "--seed",
        "1",
        "--json",
        "out.json",
    ],
    "evaluate iris (aer)": ["evaluate", f"{MODELS}/zfm-ra-iris", "--backend", "aer", "--json", "out.json"],
    "evaluate qcl noisy": [
        "evaluate",
        f"{MODELS}/qcl-mnist01",
        "--noise",
        f"{NOISE}/depolarizing-1pct.toml",
        "--json",
        "out.json",
    ],
    "mutate qcl qml": ["mutate", f"{MODELS}/qcl-mnist01", "--suite", "qml", "--json", "out.json", "-q"],
    "mutate iris quanforge": ["mutate", f"{MODELS}/zfm-ra-iris", "--json", "out.json", "-q"],
    "mutate qcnn classic": ["mutate", f"{MODELS}/qcnn-mnist01", "--suite", "classic", "--json", "out.json", "-q"],
    "profile qcnn": ["profile", f"{MODELS}/qcnn-mnist01", "--out", "out.json", "-q"],
    "cover qcnn": ["cover", f"{MODELS}/qcnn-mnist01", "--profile", "{profile}", "--json", "out.json", "-q"],
    "diff iris": [
        "diff",
        f"{MODELS}/zfm-ra-iris",
        f"{MODELS}/zzfm-su2-iris",
        "--data",
        "iris",
        "--json",
        "out.json",
        "-q",
    ],
    "fuzz qcnn": [
        "fuzz",
        f"{MODELS}/qcnn-mnist01",
        "--profile",
        "{profile}",
        "--budget",
        "300",
        "--json",
        "out.json",
        "-q",
    ],
}


def run(args: list[str], cwd: Path, pythonpath: Path | None) -> tuple[float, str]:
    """(wall seconds, sha256 of out.json) of one command run in `cwd` with one side's code."""
    cwd.mkdir(parents=True, exist_ok=True)
    code, env = cli_command(args, pythonpath)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    out = cwd / "out.json"
    return wall, hashlib.sha256(out.read_bytes()).hexdigest() if out.exists() else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="eb41399", help="commit before the seam")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--new", default="", help="commit for the new side (default: this working tree)")
    parser.add_argument("--only", default="", help="comma-separated command labels (default: all)")
    opts = parser.parse_args()
    from scipy.stats import mannwhitneyu

    chosen = [c for c in COMMANDS if not opts.only or c in opts.only.split(",")]
    folder = Path(tempfile.mkdtemp(prefix="qmltest-seam-"))
    try:
        base = commit_path(opts.base, folder)
        new = commit_path(opts.new, folder, "new") if opts.new else None
        profile = folder / "profile.json"
        run(["profile", f"{MODELS}/qcnn-mnist01", "--out", str(profile), "-q"], folder, None)
        print(f"base {opts.base} against this tree, {opts.runs} alternating runs each; wall seconds, start-up included")
        print(f"{'command':24} {'same bytes':>10} {'base s':>8} {'new s':>8} {'new/base':>8} {'p(new slower)':>13}")
        all_same = True
        for label in chosen:
            times: dict[str, list[float]] = {"base": [], "new": []}
            digests: dict[str, set[str]] = {"base": set(), "new": set()}
            for i in range(opts.runs):
                for side, path in (("base", base), ("new", new)):
                    args = [a.replace("{profile}", str(profile)) for a in COMMANDS[label]]
                    wall, sha = run(args, folder / side / label.replace(" ", "_") / str(i), path)
                    times[side].append(wall)
                    digests[side].add(sha)
            same = len(digests["base"]) == 1 and digests["base"] == digests["new"]
            all_same &= same
            b, n = statistics.median(times["base"]), statistics.median(times["new"])
            p = (
                mannwhitneyu(times["new"], times["base"], alternative="greater").pvalue
                if opts.runs > 1
                else float("nan")
            )
            print(f"{label:24} {'yes' if same else 'NO':>10} {b:8.2f} {n:8.2f} {n / b:8.2f} {p:13.3f}")
        print("every report byte-identical" if all_same else "SOME REPORTS DIFFER")
    finally:
        remove(folder, "base", "new")
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
