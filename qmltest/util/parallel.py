"""The executor layer: run pure, picklable tasks in-process or on Dask, with the same results.

Runners call ``run_tasks(fn, shared, items, ...)``: `fn(shared, item)` must be a module-level
function whose result depends only on its arguments (every random choice seeded from the item's
content), so the worker count never changes a result. `shared` (models, data) goes to every worker
once (scattered, broadcast), not once per task; items are grouped into batches so that Dask's
per-task overhead (about 1 ms) stays small against the work. Results come back through `on_result`
as they finish (for append-only logs), and are returned in item order.

``workers=1`` and no cluster runs in this process with no Dask import at all. Otherwise a local
Dask cluster of `workers` single-threaded processes is started, or an existing cluster is used by
address. A worker that dies is retried by Dask (a batch that keeps losing its workers is finally
run in the client); an item whose task raises is retried once, then reported as ``TaskError`` (the
runner records it as errored) instead of ending the run.
"""

from __future__ import annotations

import itertools
import pickle
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from qmltest.errors import InputError
from qmltest.util import gctune

RETRIES = 1
# A streamed task takes 1/(GUIDED * workers) of the items left, but at least MIN_BATCH. Each task
# costs the client ~2-3 ms of scheduler and gather work, which on a small machine is taken from the
# workers' cores; measured on QCL's 285 mutants at 2 workers (interleaved runs): 3 and 4 (21 tasks)
# ran 2-5% slower than 2 and 8 (14 tasks), whose last tasks of 8 mutants (~40 ms) still balance.
GUIDED = 2
MIN_BATCH = 8
BATCHES_PER_WORKER = 8  # enough for the last batches to balance; Dask's ~4 ms per task stays < 1%
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
class TaskError:
    """An item whose task failed on every try: the runner reports it, the run goes on."""

    message: str


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


def _call(fn: Callable[[Any, Any], Any], shared: Any, item: Any) -> Any:
    try:
        return fn(shared, item)
    except Exception as exc:  # reported per item: one bad mutant does not end a run of thousands
        return TaskError(f"{type(exc).__name__}: {exc}")


def _prepared(fn: Callable[[Any, Any], Any], shared: Any, batch: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    """The batch after `fn.prepare(shared, items)`, where `fn` has one: work done once for the whole
    batch (the gpu backend simulates a batch's mutants x inputs at once). A prepare that fails
    leaves the items as they were: each is then run, and fails or not, on its own."""
    prepare = getattr(fn, "prepare", None)
    if prepare is None or not batch:
        return batch
    try:
        items = prepare(shared, [item for _, item in batch])
    except Exception:
        return batch
    return [(index, item) for (index, _), item in zip(batch, items)]


def _batch(fn: Callable[[Any, Any], Any], shared: Any, batch: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    """Run one batch on a worker, prepared as one (see `_prepared`)."""
    return _run(fn, shared, _prepared(fn, shared, batch))


def _run(fn: Callable[[Any, Any], Any], shared: Any, batch: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    """Run the items of a prepared batch; an item that fails is tried once more before it is reported."""
    out = []
    for index, item in batch:
        result = _call(fn, shared, item)
        for _ in range(RETRIES):
            if not isinstance(result, TaskError):
                break
            result = _call(fn, shared, item)
        out.append((index, result))
    return out


def _packed(fn: Callable[[Any, Any], Any], shared: Any, payload: bytes) -> list[tuple[int, Any]]:
    """`_batch` on items that travel as one pickled blob (see `_pack`)."""
    return _batch(fn, shared, pickle.loads(payload))


def _pack(batch: list[tuple[int, Any]]) -> bytes:
    """A batch as bytes: the scheduler passes bytes through untouched, whereas Dask otherwise
    unpickles every task's arguments in the scheduler (the client's event loop, for a local
    cluster) to build its graph; measured on QCL's mutant deltas: 88 ms of a 1.3 s run."""
    try:
        return pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):  # lambdas, local classes
        import cloudpickle

        return cloudpickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)


def batch_size(total: int, workers: int, where: Plan | None = None) -> int:
    """Items per task: BATCHES_PER_WORKER tasks per worker (unless the plan fixes it)."""
    if where is not None and where.batch:
        return where.batch
    return max(1, -(-total // (BATCHES_PER_WORKER * max(1, workers))))


def guided_size(remaining: int, workers: int, where: Plan | None = None, total: int | None = None) -> int:
    """Items for the next task of a stream: a share of what remains, shrinking to a floor, so the
    last tasks are short and the workers finish together (guided self-scheduling).

    The floor is MIN_BATCH, or less where a stream of `total` items would give each worker fewer
    than BATCHES_PER_WORKER such tasks: on 16 workers, QCL's 285 mutants made ~2 tasks of 8 per
    worker, and the last round of them ran with most workers idle (efficiency 0.3, measured)."""
    if where is not None and where.batch:
        return where.batch
    workers = max(1, workers)
    floor = MIN_BATCH if total is None else max(1, min(MIN_BATCH, -(-total // (BATCHES_PER_WORKER * workers))))
    return max(floor, -(-remaining // (GUIDED * workers)))


def run_tasks(
    fn: Callable[[Any, Any], Any],
    shared: Any,
    items: Sequence[Any],
    where: Plan | None = None,
    on_result: Callable[[int, Any], None] | None = None,
    later: Callable[[int], Iterable[Sequence[Any]]] | None = None,
) -> list[Any]:
    """fn(shared, item) for every item; results in item order (TaskError for items that failed).

    `later(workers)`, if given, is called in the client once `items` are on their way (in-process:
    after they ran) and yields further items in batches (one task each), their indices continuing
    after `items`. Each batch is submitted as soon as it is yielded, so client-side work such as
    mutant generation overlaps the workers instead of leaving them idle.
    """
    where = where or Plan()
    results: list[Any] = []

    def done(index: int, result: Any) -> None:
        results[index] = result
        if on_result is not None:
            on_result(index, result)

    if not items and later is None:
        return results

    def indexed(chunk: Sequence[Any]) -> list[tuple[int, Any]]:
        offset = len(results)
        results.extend([None] * len(chunk))
        return [(offset + i, item) for i, item in enumerate(chunk)]

    if where.local:
        for chunk in itertools.chain([items], later(1) if later is not None else ()):  # lazily: generation interleaves
            for pair in _prepared(fn, shared, indexed(chunk)):
                done(*_run(fn, shared, [pair])[0])  # one at a time: each result is saved as it comes
        return results
    with _reuse_or_start(where) as dask_client:
        tasks = _OnDask(dask_client, fn, shared, where)
        first = indexed(items)
        # with a stream to follow, `items` need not balance: one task per worker
        size = (
            -(-len(first) // tasks.workers)
            if later is not None and not where.batch
            else batch_size(len(first), tasks.workers, where)
        )
        for i in range(0, len(first), size):
            tasks.submit(first[i : i + size])
        for chunk in later(tasks.workers) if later is not None else ():
            tasks.submit(indexed(chunk))
        for _, pairs in tasks.finished():
            for index, result in pairs:
                done(index, result)
    return results


def run_feedback(
    fn: Callable[[Any, Any], Any],
    shared: Any,
    start: Callable[[int], list[list[Any]]],
    where: Plan | None,
    on_result: Callable[[Any, Any], list[list[Any]]],
) -> None:
    """fn(shared, item) for every item of `start(workers)` and of what `on_result(item, result)`
    returns, until none is left: for runners whose next items depend on earlier results (QuanForge's
    search rounds). Both return batches of items, each batch one task: the runner knows which items
    belong together. In-process: one item at a time, first in, first out. On Dask: every batch goes
    out as soon as it is known, and results are handled as they finish, so on_result must not depend
    on their order. An item that fails twice gives a TaskError result."""
    where = where or Plan()
    if where.local:
        queue = deque(item for batch in start(1) for item in batch)
        while queue:
            item = queue.popleft()
            result = _batch(fn, shared, [(0, item)])[0][1]
            queue.extend(new for batch in on_result(item, result) for new in batch)
        return
    with _reuse_or_start(where) as dask_client:
        tasks = _OnDask(dask_client, fn, shared, where)

        def submit(batches: list[list[Any]]) -> None:
            for items in batches:
                tasks.submit(list(enumerate(items)))

        submit(start(tasks.workers))
        for batch, pairs in tasks.finished():
            for index, result in pairs:
                submit(on_result(batch[index][1], result))


class _OnDask:
    """The tasks of one `run_tasks` or `run_feedback` call on a Dask client: the shared state on every
    worker once, each batch one task (its items a pickled blob), results handed back as they finish."""

    def __init__(self, dask_client: Any, fn: Callable[[Any, Any], Any], shared: Any, where: Plan) -> None:
        from distributed import as_completed

        self.client, self.fn, self.shared = dask_client, fn, shared
        self.workers = max(1, len(dask_client.scheduler_info().get("workers", {})) or where.workers)
        # one object in a list: scattering a dict directly would scatter each of its values apart
        self.remote = dask_client.scatter([shared], broadcast=True, hash=False)[0]
        self.batches: dict[Any, list[tuple[int, Any]]] = {}
        # results are fetched by the event loop as tasks finish, not one round trip at a time in the
        # client: on 16 workers the client had fallen 0.16 s behind the last task (measured on QCL)
        self.pending = as_completed(with_results=True, raise_errors=False)

    def submit(self, batch: list[tuple[int, Any]]) -> None:
        future = self.client.submit(_packed, self.fn, self.remote, _pack(batch), pure=False, retries=RETRIES + 1)
        self.batches[future] = batch
        self.pending.add(future)

    def finished(self) -> Iterator[tuple[list[tuple[int, Any]], list[tuple[int, Any]]]]:
        """(batch, its (index, result) pairs) per task as it finishes, tasks submitted meanwhile
        included; a batch whose workers died under it more often than Dask retries runs here."""
        for future, outcome in self.pending:
            batch = self.batches.pop(future)
            if future.status != "finished" or not isinstance(outcome, list):
                outcome = _batch(self.fn, self.shared, batch)
            yield batch, outcome


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
