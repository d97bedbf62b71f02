"""Where tasks run: the plan (in-process, a local Dask cluster of single-threaded workers, or a
cluster by address), the Dask client and one session shared by every task round of a run, and
workers warmed and checked to run the client's versions (`parallel` runs the tasks)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from qmltest.errors import InputError
from qmltest.util import gctune

# On a small machine the client's scheduler thread and each worker's sampling profiler took CPU
# from the tasks (measured: ~1 s of scheduler CPU in a 6 s run on 2 cores); tasks are few and
# coarse, so work stealing and the profiler buy nothing here.
QUIET = {
    "distributed.scheduler.work-stealing": False,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.tick.interval": "500ms",
    "distributed.admin.system-monitor.disk": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.scheduler.active-memory-manager.start": False,
    "distributed.deploy.cluster-repr-interval": "10s",
}
WAIT_FOR_WORKERS = 30  # seconds an existing cluster may take to have its first worker
WARM_MODULES = ("qmltest.mutation.pipeline", "qmltest.fuzz.run", "qmltest.attacks", "qmltest.simulate.noisy")


@dataclass(frozen=True)
class Plan:
    """Where tasks run: in-process (workers=1, no cluster), a local Dask cluster, or an address."""

    workers: int = 1
    cluster: str | None = None
    batch: int | None = None  # items per task; None: about 4 tasks per worker

    @property
    def local(self) -> bool:
        return self.workers == 1 and not self.cluster


def plan(workers: int | None = 1, cluster: str | None = None, batch: int | None = None) -> Plan:
    """A validated plan (the CLI's --workers / --cluster)."""
    workers = 1 if workers is None else workers
    if workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    if workers > 4096:
        raise InputError(f"--workers {workers} is more than 4096")
    if cluster is not None and not cluster.strip():
        raise InputError("--cluster needs a scheduler address, e.g. tcp://scheduler:8786")
    if batch is not None and batch < 1:
        raise InputError(f"batch must be at least 1, got {batch}")
    return Plan(workers, cluster, batch)


def _warm() -> dict[str, str]:
    """Import the heavy modules (qiskit, Aer) on a worker before its first task, not inside it, and
    settle the garbage collector (`qmltest.util.gctune`): a worker holds ~220k tracked objects after
    these imports, and each full collection rescanned them (0.14 s here, measured as 10-20% of a
    2-worker QCL mutate run's worker CPU). Returns the worker's `_versions()`."""
    import importlib

    for name in WARM_MODULES:
        importlib.import_module(name)
    gctune.settle(collect=True)  # a worker of an existing cluster may have run other work before
    return _versions()


def _versions() -> dict[str, str]:
    """Versions of the libraries a task's numbers depend on (simulation, sampling, statistics)."""
    import numpy
    import qiskit
    import qiskit_aer
    import scipy

    import qmltest

    return {
        "qmltest": qmltest.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "qiskit": qiskit.__version__,
        "qiskit-aer": qiskit_aer.__version__,
    }


def _prepare_workers(c: Any, where: Plan) -> None:
    """Warm every worker and check that it runs the client's versions: a worker that cannot import
    qmltest, or that has other versions (results would then depend on which worker ran a task), is
    a set-up error reported in one line. Workers that join the cluster later are not checked."""
    name = f"--cluster {where.cluster}" if where.cluster else "the local Dask cluster"
    if where.cluster:
        try:
            c.wait_for_workers(1, timeout=WAIT_FOR_WORKERS)
        except TimeoutError:
            raise InputError(
                f"{name}: no worker joined within {WAIT_FOR_WORKERS} s; start some with "
                f"`dask worker {where.cluster} --nthreads 1`"
            ) from None
    try:
        found = c.run(_warm)
    except Exception as exc:
        raise InputError(
            f"{name}: a worker cannot run qmltest's tasks ({type(exc).__name__}: {exc}); "
            "install qmltest and its dependencies on every worker"
        ) from None
    mine = _versions()
    for worker, theirs in sorted(found.items()):
        diff = [f"{k} {theirs.get(k)} (here {v})" for k, v in mine.items() if theirs.get(k) != v]
        if diff:
            raise InputError(
                f"{name}: worker {worker} has {', '.join(diff)}; every worker needs the client's versions, "
                "or results would depend on which worker ran a task"
            )


_SESSIONS: dict[Plan, Any] = {}


@contextmanager
def session(where: Plan | None) -> Iterator[None]:
    """Keep one Dask client (and local cluster) for every `run_tasks` inside the block.

    A run makes several task rounds (search, evaluation, null control); without a session each
    would start its own cluster (seconds each).
    """
    if where is None or where.local or where in _SESSIONS:
        yield
        return
    with client(where) as c:
        _SESSIONS[where] = c
        try:
            yield
        finally:
            _SESSIONS.pop(where, None)


@contextmanager
def _reuse_or_start(where: Plan) -> Iterator[Any]:
    if where in _SESSIONS:
        yield _SESSIONS[where]
        return
    with client(where) as c:
        yield c


@contextmanager
def client(where: Plan) -> Iterator[Any]:
    """A Dask client: the given cluster, or a local one of single-threaded worker processes."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - dask[distributed] is a dependency
        raise InputError("--workers/--cluster need dask[distributed]: pip install 'dask[distributed]'") from None
    if where.cluster:
        try:
            c = Client(where.cluster, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise InputError(f"--cluster {where.cluster}: cannot connect ({exc})") from None
        try:
            _prepare_workers(c, where)
            gctune.settle(collect=True)  # as below
            yield c
        finally:
            c.close()
        return
    import dask.config

    # One BLAS thread per worker, and no MALLOC_TRIM_THRESHOLD_: Dask's default (65536) turns off
    # glibc's dynamic mmap threshold, so every numpy temporary over 128 KiB is mmap'ed and faulted
    # in again; measured here it made a worker's state-vector updates 4-10x slower than in-process.
    environ = {"OMP_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1, "MKL_NUM_THREADS": 1}
    _quiet_resource_tracker()
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": environ, **QUIET}):
            cluster = LocalCluster(
                n_workers=where.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # any free port: None still binds 8787 and warns when it is taken
                silence_logs=50,
            )
    except Exception as exc:
        raise InputError(f"cannot start a local Dask cluster of {where.workers} workers: {exc}") from None
    c = Client(cluster)
    try:
        _prepare_workers(c, where)  # part of the cluster's start-up: workers import qiskit once, in parallel
        # the client hosts the local scheduler's event loop: with Qiskit, Dask and the model frozen
        # (earlier runs' garbage collected first) its full collections, 0.2-0.3 s each, one or two
        # per run, scan only what the run allocates
        gctune.settle(collect=True)
        with _single_threaded_blas():
            yield c
    finally:
        c.close()
        cluster.close()


@contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """The client's own BLAS calls on one thread while local workers hold the cores: after each
    call OpenBLAS's helper threads busy-wait for work (about 0.1 s), and in a 2-worker QCL mutate
    run that spinning took 0.05-0.07 s of CPU from the workers (measured per thread)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


RESOURCE_TRACKER_QUIET = "ignore::UserWarning:multiprocessing.resource_tracker"


def _quiet_resource_tracker() -> None:
    """After a client is killed, its multiprocessing resource tracker cleans up the workers'
    semaphores and says so in a two-line UserWarning on the user's terminal, in the middle of the
    next command's output. The tracker process starts with this process's -W options, so it is told
    to stay quiet about that (it still cleans up)."""
    import sys

    if RESOURCE_TRACKER_QUIET not in sys.warnoptions:
        sys.warnoptions.append(RESOURCE_TRACKER_QUIET)
