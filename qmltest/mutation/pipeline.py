"""One mutation pipeline: generation strategy x kill criterion x scoring -> one record per mutant.

- Strategies: ``search`` (QuanForge Algorithm 1, binary search over the gate percentage, for the
  nine QuanForge operators; its effective mutants are scored) and ``directed`` / ``exhaustive`` site
  enumeration (QML and classic operators; every competent, non-duplicate mutant is scored).
- Evidence: each scored mutant is evaluated once per test suite and both kinds of evidence are kept
  (GLM p-value and Cohen's d per class and overall; the correctly classified inputs it mispredicts
  under a majority of shots), so any strategy works with any criterion (`criteria`).
- Report ``qmltest.mutation/3`` (`build_report`, a pure function of the stored rows): meta (versions,
  seed, command line, options), generation tables, per suite / operator / cell scores, the kill
  matrix, the null control (identical copies judged by the same criterion) and every mutant.

The run folder (`RunFolder`) keeps `run.json` (settings that decide the evidence), the original
model, `results.jsonl` (one line per finished mutant or evidence, append-only, last line wins) and
`mutants/<id>/` artifacts; re-running the same command resumes without re-simulating.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from qmltest import parallel, report
from qmltest.artifact import Model
from qmltest.errors import InputError
from qmltest.mutation import precision, registry, runfolder, sampling, sites
from qmltest.mutation.evaluate import Data, Evaluator
from qmltest.mutation.evidence import (  # noqa: F401  (re-exported: the pipeline's public names)
    EvalShared,
    _evaluate_task,
    _finite,
    correct_mask,
    evidence_for,
    null_copies,
    null_evidence,
    sequential_evidence,
    shipped,
    touched_gates,
)
from qmltest.mutation.mutant import Mutant
from qmltest.mutation.options import (  # noqa: F401
    DEFAULTS,
    FORMAT,
    NULL_COPIES,
    OPERATOR_SUITES,
    STRATEGIES,
    Cell,
    Options,
)
from qmltest.mutation.runfolder import RunFolder  # noqa: F401
from qmltest.mutation.scope import Scope
from qmltest.mutation.scoring import (  # noqa: F401
    build_report,
    candidate_row,
    fixed_design,
    null_kill_rate,
    null_summary,
    read_report,
    redecide,
)
from qmltest.mutation.search import _operator, _search_on_workers, generate_search  # noqa: F401
from qmltest.parallel import TaskError
from qmltest.simulate.device import describe as describe_device


def iter_sites(
    original: Model, planned: sites.Plan, progress: Callable[..., None], generation: dict
) -> Iterator[Mutant]:
    """Every planned site of the QML / classic operators, one mutant at a time; duplicates skipped
    and counted in `generation` once the last one is made."""
    skipped: dict[str, dict[str, int]] = {}
    per_op: dict[str, dict] = {op.name: {"generated": 0, "skipped": {}} for op, _, _ in planned.sites}
    for m in sites.iter_generate(original, planned, skipped):
        per_op[m.operator]["generated"] += 1
        progress(1)
        yield m
    for name, counts in skipped.items():
        per_op[name]["skipped"] = counts
    generation["cells"] = {"all": per_op}


# ---------------------------------------------------------------- evaluation


def run(
    original: Model,
    suites: list[Data],
    opts: Options,
    reference: Data | None = None,
    cells: list[Cell] | None = None,
    out: Path | None = None,
    fresh: bool = False,
    progress: Callable[..., None] | None = None,
    noise: object = None,
    command: list[str] | None = None,
    where: parallel.Plan | None = None,
    backend: str | None = None,
) -> tuple[dict, dict]:
    """Generate, evaluate and report. Returns (report, timing); timing stays out of the report.

    `where` places the tasks (in-process by default, or Dask, one session for every task round);
    the report does not depend on it.
    """
    with parallel.session(where), runfolder.released():
        if opts.precision is None:
            return _run(original, suites, opts, reference, cells, out, fresh, progress, noise, command, where, backend)

        kept = _Kept(models=out is not None)  # what every round shares

        def one_round(sample: int, folder: Path, first: bool) -> tuple[dict, dict]:
            round_opts = replace(opts, sample=sample)
            args = (original, suites, round_opts, reference, cells, folder, fresh and first, progress, noise, command)
            with runfolder.released():  # the next round opens the same folder
                return _run(*args, where, backend, kept)

        return precision.until(original, opts, out, one_round)


def _run(
    original: Model,
    suites: list[Data],
    opts: Options,
    reference: Data | None,
    cells: list[Cell] | None,
    out: Path | None,
    fresh: bool,
    progress: Callable[..., None] | None,
    noise: object,
    command: list[str] | None,
    where: parallel.Plan | None,
    backend: str | None = None,
    kept: _Kept | None = None,
) -> tuple[dict, dict]:
    opts = opts.resolved()
    suites = _checked_suites(suites, opts, reference, cells)
    kept = kept or _Kept()
    if kept.evaluator is None:
        kept.evaluator = Evaluator(original, opts.repeats, opts.shots, opts.seed, noise, backend)
    evaluator = kept.evaluator
    folder = RunFolder(out, fresh, _fingerprint(original, suites, reference, opts, evaluator, noise), original)
    folder.models = kept.models
    started = time.perf_counter()
    masks = {s.name: correct_mask(original, evaluator, s) for s in suites}
    for s in suites:  # the majority criterion's reference, computed once here rather than per worker
        evaluator.original_win(s, np.flatnonzero(masks[s.name]))
    state = _Run(original, suites, opts, reference, cells, folder, evaluator, progress, where, kept)
    shared = EvalShared(evaluator, tuple(suites), masks, opts)
    copies_out = [shipped(original, c, state.remote) for c in state.copies]
    parallel.run_tasks(_evaluate_task, shared, copies_out, where, state.finished, later=state.generate)
    nulls = null_evidence(state.copies, [state.null_results[i] for i in range(len(state.copies))], suites)
    eval_seconds = time.perf_counter() - started - state.gen_seconds
    data = _report_data(original, opts, noise, command, evaluator.backend.name, suites, masks, state.generation, nulls)
    data["mutants"] = [candidate_row(c) for c in state.cands]
    result = build_report(data, opts.criterion, opts.correction, opts.scoring)
    if out is not None:
        report.write_text_atomic(out / "report.json", report.to_json(result))
    n_eval = sum(c.status == "scored" for c in state.cands)
    timing = {
        "generation_seconds": state.gen_seconds,
        "generation_seconds_per_mutant": state.gen_seconds / max(len(state.cands), 1),
        "eval_seconds_per_mutant": eval_seconds / max(n_eval, 1),
    }
    return result, timing


def _checked_suites(suites: list[Data], opts: Options, reference: Data | None, cells: list[Cell] | None) -> list[Data]:
    """The test suites, names made unique; options that cannot go together refused in one line."""
    if not suites:
        raise InputError("give at least one test suite to score (--test)")
    if opts.strategy == "search" and reference is None:
        raise InputError("the search strategy generates against reference data: give --reference")
    if opts.strategy != "search" and cells and [c.name for c in cells] != ["all"]:
        raise InputError("--scan and scopes apply to the search strategy (quanforge operators)")
    names = [s.name for s in suites]
    if len(set(names)) == len(names):
        return suites
    return [replace(s, name=f"{s.name}#{i}") if names.count(s.name) > 1 else s for i, s in enumerate(suites)]


def _fingerprint(
    original: Model, suites: list[Data], reference: Data | None, opts: Options, evaluator: Evaluator, noise: object
) -> dict:
    """What decides the evidence: a run folder with another fingerprint is not resumed."""
    return {
        "model_sha256": original.sha256,
        "seed": opts.seed,
        "shots": opts.shots,
        "repeats": opts.repeats,
        "null_copies": opts.null_copies,
        "backend": evaluator.backend.name,
        "sequential": None
        if not opts.sequential
        else {"budget": opts.max_repeats, "power": opts.power, "margin": opts.margin, "correction": opts.correction},
        "noise": None if noise is None else getattr(noise, "sha256", None),
        "data": {s.name: s.fingerprint for s in suites + ([reference] if reference is not None else [])},
    }


def _report_data(
    original: Model,
    opts: Options,
    noise: object,
    command: list[str] | None,
    backend: str,
    suites: list[Data],
    masks: dict,
    generation: dict,
    nulls: object,
) -> dict:
    """The stored facts `build_report` reads, less the mutant rows."""
    return {
        "meta": {
            "format": FORMAT,
            "model": original.source,
            "model_sha256": original.sha256,
            "num_classes": original.num_classes,
            "classes": original.classes,
            "seed": opts.seed,
            "noise": None
            if noise is None
            else {"name": getattr(noise, "name", None), "sha256": getattr(noise, "sha256", None)},
            "device": describe_device(original, noise),
            "measurement_bases": original.measurement_bases,
            "versions": report.versions(),
            "command": list(command or []),
            "backend": backend,
            "options": opts.to_dict(),
        },
        "circuit": {
            "num_qubits": original.ir.num_qubits,
            "gates": [[g.name, list(g.qubits)] for g in original.ir.gates],
            "qasm_path": "original/model.qasm",
        },
        "generation": generation,
        "suites_info": {
            s.name: {
                "inputs": int(len(s.y)),
                "labels": [int(v) for v in s.y],
                "correct": [int(v) for v in masks[s.name]],
            }
            for s in suites
        },
        "null": nulls,
    }


@dataclass
class _Kept:
    """What the rounds of a --precision run share: one evaluator (its Gram forms), the mutants
    made once, and whether mutant model folders are saved (not into a temporary folder)."""

    evaluator: Evaluator | None = None
    made: list[Mutant] | None = None
    generation: dict = field(default_factory=dict)
    models: bool = True


class _Run:
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
        kept: _Kept | None = None,
    ) -> None:
        self.original, self.suites, self.opts, self.reference, self.cells = original, suites, opts, reference, cells
        self.folder, self.evaluator, self.where = folder, evaluator, where
        self.kept = kept or _Kept()
        self.tick = progress or (lambda k=1, more=0: None)
        self.copies = null_copies(original, opts.null_copies)
        self.remote = where is not None and not where.local  # mutants travel as deltas only to workers
        self.null_results: dict[int, object] = {}
        self.cands: list[Mutant] = []
        self.pending: list[Mutant] = []
        self.generation: dict = {}
        self.gen_seconds = 0.0

    def _stream(self) -> tuple[Iterator[Mutant], int]:
        """The candidates of the run's strategy, and how many there will be (at most)."""
        opts = self.opts
        if opts.strategy == "search":
            cells = self.cells or [Cell("all", Scope())]
            made, found = generate_search(
                self.original,
                self.reference,
                cells,
                opts,
                self.evaluator,
                self.folder,
                self.tick,
                self.where,  # type: ignore[arg-type]
            )
            self.generation.update(found)
            return iter(made), len(made)
        ops = registry.operators(opts.suite, list(opts.operators) or None, opts.seed)
        planned = sites.plan(self.original, ops, opts.strategy)
        if opts.sample is not None:  # every mutant made and de-duplicated first, then a sample of them scored
            if self.kept.made is None:  # made once for every --precision round
                made = list(iter_sites(self.original, planned, lambda k=1, more=0: None, self.generation))
                self.kept.made, self.kept.generation = made, dict(self.generation)
            made, self.generation = self.kept.made, dict(self.kept.generation)
            picked, self.generation["sampling"] = sampling.sample_mutants(made, opts.sample, opts.seed)
            self._prepare_forms(made, picked)
            picked = [replace(c, evidence=dict(c.evidence)) for c in picked]  # a round's own copies
            self.tick(0, more=len(picked))
            self.tick(len(picked))  # every one made already
            return iter(picked), len(picked)
        self.tick(0, more=planned.total)  # one tick per site made; duplicates come off the total at the end
        return iter_sites(self.original, planned, self.tick, self.generation), planned.total

    def _prepare_forms(self, made: list[Mutant], picked: list[Mutant]) -> None:
        """In-process, the Gram forms of a sample's DFC mutants at once (batches would each pay
        for the shared states). With --precision, those of the largest sample the target width
        can need (`sampling.largest`), so forms built in the first round serve the later ones."""
        if self.remote:
            return  # workers hold their own evaluator and build forms per batch
        if self.opts.precision is not None:
            picked, _ = sampling.sample_mutants(made, sampling.largest(made, self.opts.precision), self.opts.seed)
        models = [c.model for c in picked if c.status == "scored" and c.model is not None]
        for s in self.suites:
            self.evaluator.prepare_data_changes(models, s)

    def _take(self, cand: Mutant) -> object | None:
        """Record a new candidate; the task to send when it still lacks evidence for a suite."""
        self.cands.append(cand)
        rec = self.folder.records.get(cand.id, {})
        cand.evidence = dict(rec.get("suites", {}))
        if cand.status == "scored" and any(s.name not in cand.evidence for s in self.suites):
            self.pending.append(cand)  # its touched gates come back with its evidence
            self.tick(0, more=1)  # its evaluation ticks once more
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
                task = self._take(cand)
                if task is not None:
                    batch.append(task)
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
                if self.opts.strategy != "search":
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
