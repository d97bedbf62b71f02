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
from dataclasses import replace
from pathlib import Path

import numpy as np

from qmltest import parallel, report
from qmltest.artifact import Model
from qmltest.errors import InputError
from qmltest.mutation import runfolder, sites
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
from qmltest.mutation.options import (  # noqa: F401
    DEFAULTS,
    FORMAT,
    NULL_COPIES,
    OPERATOR_SUITES,
    STRATEGIES,
    Candidate,
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


def iter_sites(
    original: Model, opts: Options, progress: Callable[[int], None], generation: dict
) -> Iterator[Candidate]:
    """Every (directed) site of the QML / classic operators, one candidate at a time; duplicates
    skipped and counted in `generation` once the last one is made."""
    ops = sites.operators(opts.suite, list(opts.operators) or None, opts.seed)
    skipped: dict[str, dict[str, int]] = {}
    per_op: dict[str, dict] = {op.name: {"generated": 0, "skipped": {}} for op in ops}
    for g in sites.iter_generate(original, ops, opts.strategy, skipped):
        status = "scored" if g.status == "pending" else g.status
        per_op[g.site.operator]["generated"] += 1
        progress(1)
        yield Candidate(g.id, g.site.operator, "all", g.site.describe(), g.model, status)
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
    progress: Callable[[int], None] | None = None,
    noise: object = None,
    command: list[str] | None = None,
    where: parallel.Plan | None = None,
) -> tuple[dict, dict]:
    """Generate, evaluate and report. Returns (report, timing); timing stays out of the report.

    `where` places the tasks (in-process by default, or Dask, one session for every task round);
    the report does not depend on it.
    """
    with parallel.session(where), runfolder.released():
        return _run(original, suites, opts, reference, cells, out, fresh, progress, noise, command, where)


def _run(
    original: Model,
    suites: list[Data],
    opts: Options,
    reference: Data | None,
    cells: list[Cell] | None,
    out: Path | None,
    fresh: bool,
    progress: Callable[[int], None] | None,
    noise: object,
    command: list[str] | None,
    where: parallel.Plan | None,
) -> tuple[dict, dict]:
    opts = opts.resolved()
    tick = progress or (lambda k=1: None)
    if not suites:
        raise InputError("give at least one test suite to score (--test)")
    names = [s.name for s in suites]
    if len(set(names)) != len(names):
        suites = [replace(s, name=f"{s.name}#{i}") if names.count(s.name) > 1 else s for i, s in enumerate(suites)]
    if opts.strategy == "search" and reference is None:
        raise InputError("the search strategy generates against reference data: give --reference")
    evaluator = Evaluator(original, opts.repeats, opts.shots, opts.seed, noise)
    fingerprint = {
        "model_sha256": original.sha256,
        "seed": opts.seed,
        "shots": opts.shots,
        "repeats": opts.repeats,
        "null_copies": opts.null_copies,
        "backend": evaluator.backend,
        "sequential": None
        if not opts.sequential
        else {"budget": opts.max_repeats, "power": opts.power, "margin": opts.margin, "correction": opts.correction},
        "noise": None if noise is None else getattr(noise, "sha256", None),
        "data": {s.name: s.fingerprint for s in suites + ([reference] if reference is not None else [])},
    }
    folder = RunFolder(out, fresh, fingerprint, original)
    if opts.strategy != "search" and cells and [c.name for c in cells] != ["all"]:
        raise InputError("--scan and scopes apply to the search strategy (quanforge operators)")
    started = time.perf_counter()
    masks = {s.name: correct_mask(original, evaluator, s) for s in suites}
    shared = EvalShared(evaluator, tuple(suites), masks, opts)
    for s in suites:  # the majority criterion's reference, computed once here rather than per worker
        evaluator.original_win(s, np.flatnonzero(masks[s.name]))
    copies = null_copies(original, opts.null_copies)
    remote = where is not None and not where.local  # mutants travel as deltas only to workers
    null_results: dict[int, object] = {}
    cands: list[Candidate] = []
    pending: list[Candidate] = []
    generation: dict = {}
    gen_seconds = 0.0

    def generate(workers: int) -> Iterator[list]:
        """Runs in the client while the workers evaluate the null copies; each batch of candidates
        goes out as soon as it is made, so the workers need not wait for the last one."""
        nonlocal gen_seconds
        gen_started = time.perf_counter()
        stream: Iterator[Candidate]
        if opts.strategy == "search":
            search_cells = cells or [Cell("all", Scope())]
            made, found = generate_search(original, reference, search_cells, opts, evaluator, folder, tick, where)  # type: ignore[arg-type]
            generation.update(found)
            stream, total = iter(made), len(made)
        else:
            stream = iter_sites(original, opts, tick, generation)
            total = sites.site_count(
                original, sites.operators(opts.suite, list(opts.operators) or None, opts.seed), opts.strategy
            )
        made_count = 0
        gen_seconds += time.perf_counter() - gen_started
        batch: list = []
        while True:
            started_one = time.perf_counter()
            cand = next(stream, None)
            if cand is not None:
                cands.append(cand)
                made_count += 1
                rec = folder.records.get(cand.id, {})
                cand.evidence = dict(rec.get("suites", {}))
                if cand.status == "scored" and any(s.name not in cand.evidence for s in suites):
                    pending.append(cand)  # its touched gates come back with its evidence
                    batch.append(shipped(original, cand, remote))
                elif cand.model is not None:
                    stored = rec.get("touched")
                    cand.touched = list(stored) if isinstance(stored, list) else touched_gates(original, cand.model)
                    cand.model = None  # the report needs only its row (see `evaluated`)
            gen_seconds += time.perf_counter() - started_one
            if remote:
                time.sleep(0)  # hand the GIL to Dask's event loop (the local scheduler lives here)
            if batch and (
                cand is None
                or len(batch) >= parallel.guided_size(total - made_count + len(batch), workers, where, total)
            ):
                yield batch
                batch = []
            if cand is None:
                return

    def evaluated(index: int, result: object) -> None:
        cand = pending[index]
        if isinstance(result, TaskError):  # failed twice: reported as errored, the run goes on
            cand.evidence.update({s.name: {"status": f"incompetent: errored: {result.message}"} for s in suites})
            if cand.model is not None:
                cand.touched = touched_gates(original, cand.model)
        else:
            evidence, cand.touched = result  # type: ignore[misc]
            cand.evidence.update(evidence)
        folder.save_model(cand.id, cand.model)
        folder.append(
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
        tick(1)

    def finished(index: int, result: object) -> None:  # null copies first, then the mutants
        if index < len(copies):
            null_results[index] = result
        else:
            evaluated(index - len(copies), result)

    copies_out = [shipped(original, c, remote) for c in copies]
    parallel.run_tasks(_evaluate_task, shared, copies_out, where, finished, later=generate)
    nulls = null_evidence(copies, [null_results[i] for i in range(len(copies))], suites)
    eval_seconds = time.perf_counter() - started - gen_seconds
    rows = [candidate_row(c) for c in cands]
    data = {
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
            "versions": report.versions(),
            "command": list(command or []),
            "backend": evaluator.backend,
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
        "mutants": rows,
    }
    result = build_report(data, opts.criterion, opts.correction, opts.scoring)
    if out is not None:
        report.write_text_atomic(out / "report.json", report.to_json(result))
    n_eval = sum(c.status == "scored" for c in cands)
    timing = {
        "generation_seconds": gen_seconds,
        "generation_seconds_per_mutant": gen_seconds / max(len(cands), 1),
        "eval_seconds_per_mutant": eval_seconds / max(n_eval, 1),
    }
    return result, timing
