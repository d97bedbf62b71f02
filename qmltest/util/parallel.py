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
from dataclasses import dataclass
from typing import Any

from qmltest.util.cluster import (  # noqa: F401  (re-exported: where tasks run)
    _SESSIONS,
    RESOURCE_TRACKER_QUIET,
    Plan,
    _quiet_resource_tracker,
    _reuse_or_start,
    client,
    plan,
    session,
)

RETRIES = 1
# A streamed task takes 1/(GUIDED * workers) of the items left, but at least MIN_BATCH. Each task
# costs the client ~2-3 ms of scheduler and gather work, which on a small machine is taken from the
# workers' cores; measured on QCL's 285 mutants at 2 workers (interleaved runs): 3 and 4 (21 tasks)
# ran 2-5% slower than 2 and 8 (14 tasks), whose last tasks of 8 mutants (~40 ms) still balance.
GUIDED = 2
MIN_BATCH = 8
BATCHES_PER_WORKER = 8  # enough for the last batches to balance; Dask's ~4 ms per task stays < 1%


@dataclass(frozen=True)
class TaskError:
    """An item whose task failed on every try: the runner reports it, the run goes on."""

    message: str


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
