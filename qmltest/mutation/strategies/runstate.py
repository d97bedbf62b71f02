"""A mutation run's moving state (`RunState`): the client makes candidates while the workers
evaluate, each result saved to the run folder (and the result cache) as it arrives; and what the
rounds of a --precision run share (`Kept`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from qmltest.data.labelled import Data
from qmltest.model.artifact import Model
from qmltest.mutation.evidence.collect import null_copies, shipped, touched_gates
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.operators.mutant import Mutant
from qmltest.mutation.options import Cell, Options
from qmltest.mutation.strategies import chooser
from qmltest.runs import reuse as reuse_mod
from qmltest.runs.folder import RunFolder
from qmltest.runs.reuse import Reuse
from qmltest.util import parallel
from qmltest.util.parallel import TaskError


@dataclass
class Kept:
    """What the rounds of a --precision run share: one evaluator (its Gram forms), the mutants
    made once, and whether mutant model folders are saved (not into a temporary folder)."""

    evaluator: Evaluator | None = None
    made: list[Mutant] | None = None
    generation: dict = field(default_factory=dict)
    models: bool = True


class RunState:
    """One run's moving state and the feedback driver's callbacks (`parallel.run_tasks`): the
    client makes candidates (`generate`) while the workers evaluate the null copies and the
    mutants already sent; each result is saved to the run folder as it arrives (`finished`)."""

    def __init__(
        self,
        original: Model,
        suites: list[Data],
        opts: Options,
        reference: Data | None,
        cells: list[Cell] | None,
        folder: RunFolder,
        evaluator: Evaluator,
        progress: Callable[..., None] | None,
        where: parallel.Plan | None,
        kept: Kept | None = None,
        reuse: Reuse | None = None,
        fingerprint: dict | None = None,
    ) -> None:
        self.original, self.suites, self.opts, self.reference, self.cells = original, suites, opts, reference, cells
        self.folder, self.evaluator, self.where = folder, evaluator, where
        self.kept = kept or Kept()
        self.reuse, self.fingerprint, self.cached = reuse or Reuse(), fingerprint or {}, 0
        self.tick = progress or (lambda k=1, more=0: None)
        self.copies = null_copies(original, opts.null_copies)
        self.remote = where is not None and not where.local  # mutants travel as deltas only to workers
        self.null_results: dict[int, object] = {}
        self.cands: list[Mutant] = []
        self.pending: list[Mutant] = []
        self.generation: dict = {}
        self.gen_seconds = 0.0
        self.strategy = chooser.get(opts.strategy)

    def _stream(self) -> tuple[Iterator[Mutant], int]:
        """The candidates of the run's strategy, and how many there will be (at most)."""
        return self.strategy.stream(self)

    def _cache_key(self, cand: Mutant) -> str:
        return reuse_mod.key(self.fingerprint, cand.id, [s.name for s in self.suites])

    def _wanted(self, position: int, cand: Mutant) -> bool:
        """Whether this run scores the candidate: its shard, not killed before (--iterate), at a
        changed site (--changed-since); those left out are counted in the report's generation."""
        reuse = self.reuse
        why = reuse.left_out(position, cand.id)
        if why is None and reuse.changed is not None and cand.model is not None:
            if not set(touched_gates(self.original, cand.model)) & reuse.changed:
                why = "unchanged_sites"
        if why is None:
            return True
        counts = self.generation.setdefault("left_out", {})
        counts[why] = counts.get(why, 0) + 1
        return False

    def _take(self, cand: Mutant) -> object | None:
        """Record a new candidate; the task to send when it still lacks evidence for a suite."""
        self.cands.append(cand)
        rec = self.folder.records.get(cand.id, {})
        if self.reuse.cache is not None and cand.status == "scored" and "suites" not in rec:
            hit = reuse_mod.get(self.reuse.cache, self._cache_key(cand))
            if hit is not None:
                self.cached += 1
                self.folder.append({"id": cand.id, "site": cand.site, "operator": cand.operator, **hit})
                rec = self.folder.records[cand.id]
        cand.evidence = dict(rec.get("suites", {}))
        if cand.status == "scored" and any(s.name not in cand.evidence for s in self.suites):
            self.pending.append(cand)  # its touched gates come back with its evidence
            if not self.strategy.enumerates:  # a search's total grows as it finds mutants
                self.tick(0, more=1)
            return shipped(self.original, cand, self.remote)
        if cand.model is not None:
            stored = rec.get("touched")
            cand.touched = list(stored) if isinstance(stored, list) else touched_gates(self.original, cand.model)
            cand.model = None  # the report needs only its row (see `evaluated`)
        return None

    def generate(self, workers: int) -> Iterator[list]:
        """Runs in the client while the workers evaluate the null copies; each batch of candidates
        goes out as soon as it is made, so the workers need not wait for the last one."""
        gen_started = time.perf_counter()
        stream, total = self._stream()
        made_count = 0
        self.gen_seconds += time.perf_counter() - gen_started
        batch: list = []
        while True:
            started_one = time.perf_counter()
            cand = next(stream, None)
            if cand is not None:
                made_count += 1
                task = self._take(cand) if self._wanted(made_count - 1, cand) else None
                if task is not None:
                    batch.append(task)
                elif self.strategy.enumerates:  # done at generation (cached, incompetent, left out): its tick
                    self.tick(1)
            self.gen_seconds += time.perf_counter() - started_one
            if self.remote:
                time.sleep(0)  # hand the GIL to Dask's event loop (the local scheduler lives here)
            if batch and (
                cand is None
                or len(batch) >= parallel.guided_size(total - made_count + len(batch), workers, self.where, total)
            ):
                yield batch
                batch = []
            if cand is None:
                if self.strategy.enumerates:
                    self.tick(0, more=made_count - total)  # skipped duplicates never tick
                return

    def evaluated(self, index: int, result: object) -> None:
        cand = self.pending[index]
        if isinstance(result, TaskError):  # failed twice: reported as errored, the run goes on
            cand.evidence.update({s.name: {"status": f"incompetent: errored: {result.message}"} for s in self.suites})
            if cand.model is not None:
                cand.touched = touched_gates(self.original, cand.model)
        else:
            evidence, cand.touched = result  # type: ignore[misc]
            cand.evidence.update(evidence)
            if self.reuse.cache is not None:
                reuse_mod.put(
                    self.reuse.cache, self._cache_key(cand), {"suites": cand.evidence, "touched": cand.touched}
                )
        self.folder.save_model(cand.id, cand.model)
        self.folder.append(
            {
                "id": cand.id,
                "site": cand.site,
                "operator": cand.operator,
                "suites": cand.evidence,
                "touched": cand.touched,
            }
        )
        # saved and scored: from here the report needs only its row, so its circuit is let go
        # (32,692 DRNN mutants held ~430 MB of IR in the client until the report was written)
        cand.model = None
        self.tick(1)

    def finished(self, index: int, result: object) -> None:  # null copies first, then the mutants
        if index < len(self.copies):
            self.null_results[index] = result
        else:
            self.evaluated(index - len(self.copies), result)
