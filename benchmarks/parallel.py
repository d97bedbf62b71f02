"""Scale-out: wall time of one fixed mutate run at 1 and 2 workers, the per-task overhead, efficiency.

The run: the directed QML suite on the shipped MNIST 0/1 QCL model (285 mutants, 8 qubits), test
suite mnist:test PER_CLASS per class (QCov Table 3's suite sizes: 50 and 100), 1000 shots,
statistical evidence and majority verdicts, plus the null control. The baseline is the same
pipeline in one process (`--workers 1`, no Dask import), the way a user runs it today. Dask runs a
LocalCluster of single-threaded worker processes; its start-up is timed apart. Efficiency =
t1 / (k * tk) over the mutate call alone, where t1 is one worker on one core: a Dask worker runs
single-threaded BLAS, while the in-process run's BLAS (the fused suffix's matmuls) uses every core,
so its time is printed beside it but is not a one-core baseline. This machine's speed drifts by
+-10% over a minute, so t1 and tk are timed in alternation (TRIALS rounds of one run each, after a
warm-up) while the cluster idles, and efficiency is given from the best and the median of each.
Usage:
    python benchmarks/parallel.py [--per-class N] [--split S] [--trials T] [WORKERS ...]   (100, test, 5; 1 2)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.model import artifact
from qmltest.mutation import pipeline
from qmltest.util import gctune, parallel

MODEL = "data/models/qcl-mnist01"
TRIALS = 5


def _noop(shared: object, item: int) -> int:
    return item


def overhead_per_task(where: parallel.Plan, n: int = 400) -> float:
    """Seconds of Dask overhead per task: n empty tasks, one item each, on a running cluster."""
    with parallel.client(where) as c:
        c.submit(_noop, None, 0).result()  # warm
        start = time.perf_counter()
        futures = [c.submit(parallel._batch, _noop, None, [(i, i)], pure=False) for i in range(n)]
        c.gather(futures)
        return (time.perf_counter() - start) / n


def main(counts: list[int], per_class: int, split: str = "test") -> None:
    from threadpoolctl import threadpool_limits

    gctune.settle()  # as the CLI does at start-up, so the in-process baseline runs with the same collector
    model = artifact.load(MODEL)
    x, y = datasets.select(f"mnist:{split}", split, model.classes, per_class, 0)
    suite = Data.of(f"mnist:{split}[{per_class}]", model, x, y)
    print(f"QML suite on {MODEL}, {len(y)} inputs ({per_class} per class), 1000 shots, 20 repeats")
    opts = pipeline.Options(suite="qml", shots=1000, seed=0)
    base, _ = pipeline.run(model, [suite], opts)  # warm-up: imports and caches
    all_cores = best_of(lambda: pipeline.run(model, [suite], opts))
    print(f"workers 1, in-process with BLAS on all cores: {all_cores:.2f} s")

    def check(result: dict) -> None:
        assert result == base, "the report differs from the in-process run's"

    def run(where: parallel.Plan, out: Path | None = None) -> float:
        """One timed run, its report checked; in-process runs on one core (one worker's BLAS)."""
        with threadpool_limits(limits=1 if where.local else None):
            start = time.perf_counter()
            check(pipeline.run(model, [suite], opts, out=out, fresh=True, where=where)[0])
            return time.perf_counter() - start

    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in counts:
            if k == 1:
                continue
            where = parallel.plan(k)
            start = time.perf_counter()
            with parallel.session(where):  # a cluster already up, as with --cluster; its start-up timed apart
                startup = time.perf_counter() - start
                run(where)  # warm-up: the workers' first run
                local = parallel.plan(1)
                t1, tk, t1_folder, tk_folder = [], [], [], []
                for _ in range(TRIALS):
                    t1.append(run(local))
                    tk.append(run(where))
                    t1_folder.append(run(local, Path(tmp) / "one"))
                    tk_folder.append(run(where, Path(tmp) / "k"))
            print(
                f"workers {k}: {len(base['mutants'])} mutants, reports identical to the in-process run; "
                f"cluster start-up {startup:.2f} s; {TRIALS} alternating rounds:"
            )
            for label, a, b in (("no run folder", t1, tk), ("with a run folder (--out)", t1_folder, tk_folder)):
                best, median = min(a) / (k * min(b)), statistics.median(a) / (k * statistics.median(b))
                print(
                    f"  {label}: one core {fmt(a)} s, {k} workers {fmt(b)} s; efficiency t1 / (k tk) = "
                    f"{best:.2f} from the best runs, {median:.2f} from the medians"
                )
            print(
                f"  {all_cores / min(tk):.2f}x the in-process run whose BLAS uses every core; "
                f"{min(t1) / (k * (min(tk) + startup)):.2f} efficiency counting the local cluster's start-up"
            )
            summary.append(min(t1))
    if summary:
        per_task = overhead_per_task(parallel.plan(2))
        tasks = 2 + len(guided_sizes(len(base["mutants"]), 2))  # the null copies: one task per worker
        print(
            f"Dask overhead per task: {1e3 * per_task:.2f} ms; {tasks} tasks at 2 workers (null copies, then "
            f"guided batches of {guided_sizes(len(base['mutants']), 2)} mutants) -> overhead "
            f"{100 * tasks * per_task / summary[0]:.2f}% of the work"
        )


def best_of(fn: Callable[[], object]) -> float:
    """The best wall time of TRIALS calls."""
    times = []
    for _ in range(TRIALS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def fmt(times: list[float]) -> str:
    """Best and median, in seconds."""
    return f"{min(times):.2f} best / {statistics.median(times):.2f} median"


def guided_sizes(total: int, workers: int) -> list[int]:
    """The batch sizes `parallel.guided_size` gives a stream of `total` items."""
    sizes, left = [], total
    while left > 0:
        sizes.append(min(left, parallel.guided_size(left, workers, total=total)))
        left -= sizes[-1]
    return sizes


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Scale-out efficiency of one fixed mutate run.")
    parser.add_argument("workers", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--per-class", type=int, default=100, help="suite inputs per class (default 100)")
    parser.add_argument("--split", default="test", help="MNIST split the suite is drawn from (all: 500 per class)")
    parser.add_argument("--trials", type=int, default=TRIALS, help=f"alternating rounds (default {TRIALS})")
    args = parser.parse_args()
    TRIALS = args.trials
    main(args.workers, args.per_class, args.split)
