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

import hashlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from qmltest.data.labelled import Data
from qmltest.errors import InputError
from qmltest.model.artifact import Model
from qmltest.mutation.evidence.collect import (  # noqa: F401  (re-exported: the pipeline's public names)
    EvalShared,
    _evaluate_task,
    correct_mask,
    evidence_for,
    null_copies,
    null_evidence,
    sequential_evidence,
    shipped,
    touched_gates,
)
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.judge.scoring import (  # noqa: F401
    build_report,
    candidate_row,
    fixed_design,
    null_kill_rate,
    null_summary,
    read_report,
    redecide,
)
from qmltest.mutation.operators.mutant import Mutant  # noqa: F401  (re-exported)
from qmltest.mutation.options import (  # noqa: F401
    DEFAULTS,
    FORMAT,
    NULL_COPIES,
    OPERATOR_SUITES,
    Cell,
    Options,
)
from qmltest.mutation.strategies import chooser as strategies
from qmltest.mutation.strategies import precision
from qmltest.mutation.strategies.by_site import iter_sites  # noqa: F401
from qmltest.mutation.strategies.runstate import Kept, RunState  # noqa: F401
from qmltest.mutation.strategies.search import _operator, _search_on_workers, generate_search  # noqa: F401
from qmltest.runs import folder as runfolder
from qmltest.runs.folder import RunFolder  # noqa: F401
from qmltest.runs.reuse import Reuse
from qmltest.simulate.fake_device import describe as describe_device
from qmltest.util import parallel
from qmltest.util import writers as report

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
    reuse: Reuse | None = None,
) -> tuple[dict, dict]:
    """Generate, evaluate and report. Returns (report, timing); timing stays out of the report.
    `reuse` names work to skip (`reuse`: cache, --iterate, --changed-since, --shard).

    `where` places the tasks (in-process by default, or Dask, one session for every task round);
    the report does not depend on it.
    """
    with parallel.session(where), runfolder.released():
        if (
            reuse is not None
            and reuse.shard is not None
            and (opts.precision is not None or not strategies.get(opts.resolved().strategy).enumerates)
        ):
            raise InputError(
                "--shard splits the site strategies' mutants; search and --precision choose theirs as they run"
            )
        if opts.precision is None:
            args = (original, suites, opts, reference, cells, out, fresh, progress, noise, command, where, backend)
            return _run(*args, None, reuse)

        kept = Kept(models=out is not None)  # what every round shares

        def one_round(sample: int, folder: Path, first: bool) -> tuple[dict, dict]:
            round_opts = replace(opts, sample=sample)
            args = (original, suites, round_opts, reference, cells, folder, fresh and first, progress, noise, command)
            with runfolder.released():  # the next round opens the same folder
                return _run(*args, where, backend, kept, reuse)

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
    kept: Kept | None = None,
    reuse: Reuse | None = None,
) -> tuple[dict, dict]:
    opts = opts.resolved()
    strategies.checked(opts)
    suites = _checked_suites(suites, opts, reference, cells)
    kept = kept or Kept()
    if kept.evaluator is None:
        inputs = max(len(s.y) for s in suites)  # what each mutant is sent with: auto weighs it
        kept.evaluator = Evaluator(original, opts.repeats, opts.shots, opts.seed, noise, backend, inputs)
    evaluator = kept.evaluator
    fingerprint = _fingerprint(original, suites, reference, opts, evaluator, noise)
    folder = RunFolder(out, fresh, fingerprint, original)
    folder.models = kept.models
    identity = _identity(fingerprint, opts, cells, reuse)
    done = folder.finished(identity)
    if done is not None:  # this very run finished before: its report, nothing generated or simulated
        return _replayed(*done, folder, identity, command)
    started = time.perf_counter()
    masks = {s.name: correct_mask(original, evaluator, s) for s in suites}
    for s in suites:  # the majority criterion's reference, computed once here rather than per worker
        if not original.is_regressor:
            evaluator.original_win(s, np.flatnonzero(masks[s.name]))
    state = RunState(
        original, suites, opts, reference, cells, folder, evaluator, progress, where, kept, reuse, fingerprint
    )
    shared = EvalShared(evaluator, tuple(suites), masks, opts)
    copies_out = [shipped(original, c, state.remote) for c in state.copies]
    parallel.run_tasks(_evaluate_task, shared, copies_out, where, state.finished, later=state.generate)
    nulls = null_evidence(state.copies, [state.null_results[i] for i in range(len(state.copies))], suites)
    eval_seconds = time.perf_counter() - started - state.gen_seconds
    data = _report_data(
        original, opts, noise, command, evaluator.backend.name, suites, masks, state.generation, nulls, evaluator
    )
    data["mutants"] = [candidate_row(c) for c in state.cands]
    result = build_report(data, opts.criterion, opts.correction, opts.scoring)
    if out is not None:
        runfolder.write_report(out, identity, result)
    n_eval = sum(c.status == "scored" for c in state.cands)
    timing = {
        "generation_seconds": state.gen_seconds,
        "generation_seconds_per_mutant": state.gen_seconds / max(len(state.cands), 1),
        "eval_seconds_per_mutant": eval_seconds / max(n_eval, 1),
        "cached": state.cached,
        "scored": n_eval,
        "identity": identity,
    }
    return result, timing


def _identity(fingerprint: dict, opts: Options, cells: list[Cell] | None, reuse: Reuse | None) -> str:
    """Everything that decides a run's report but the command line: equal identities, equal reports."""
    doc = {
        "fingerprint": fingerprint,
        "options": opts.to_dict(),
        "cells": [[c.name, repr(c.scope)] for c in cells or []],
        "reuse": None
        if reuse is None
        else {
            "killed": sorted(reuse.killed),
            "changed": None if reuse.changed is None else sorted(reuse.changed),
            "shard": reuse.shard,
        },
        "versions": report.versions(),
        "format": FORMAT,
    }
    return hashlib.sha256(report.dumps(doc).encode()).hexdigest()


def _replayed(
    result: dict, text: str, folder: RunFolder, identity: str, command: list[str] | None
) -> tuple[dict, dict]:
    """A finished run's report again, under this command line (rewritten only where it differs);
    its text rides along in the timing (`report_text`), so --json writes it without encoding again."""
    if result["meta"].get("command") != list(command or []):
        result["meta"]["command"] = list(command or [])
        text = runfolder.write_report(folder.path, identity, result)  # type: ignore[arg-type]
    scored = sum(m.get("status") == "scored" for m in result.get("mutants", []))
    timing = {
        "generation_seconds": 0.0,
        "generation_seconds_per_mutant": 0.0,
        "eval_seconds_per_mutant": 0.0,
        "cached": scored,
        "scored": scored,
        "finished_before": True,
        "identity": identity,
        "report_text": text,
    }
    return result, timing


def _checked_suites(suites: list[Data], opts: Options, reference: Data | None, cells: list[Cell] | None) -> list[Data]:
    """The test suites, names made unique; options that cannot go together refused in one line."""
    if not suites:
        raise InputError("give at least one test suite to score (--test)")
    strategy = strategies.get(opts.strategy)
    if strategy.needs_reference and reference is None:
        raise InputError(f"the {strategy.name} strategy generates against reference data: give --reference")
    if not strategy.scoped and cells and [c.name for c in cells] != ["all"]:
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


def _suite_info(original: Model, suite: Data, mask: np.ndarray, evaluator: Evaluator) -> dict:
    """A suite as the report stores it: class indices, or a regressor's real targets and the
    original's exact mean squared error on them."""
    info = {
        "inputs": int(len(suite.y)),
        "labels": [] if original.is_regressor else [int(v) for v in suite.y],
        "correct": [int(v) for v in mask],
    }
    if original.is_regressor:
        out = (evaluator.original_probs(suite) @ evaluator.sim.matrix(original))[:, 0]
        info["targets"] = [float(v) for v in suite.y]
        info["original_mse"] = round(float(np.mean((out - suite.y) ** 2)), 9)
    return info


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
    evaluator: Evaluator,
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
            **({"task": "regression"} if original.is_regressor else {}),
        },
        "circuit": {
            "num_qubits": original.ir.num_qubits,
            "gates": [[g.name, list(g.qubits)] for g in original.ir.gates],
            "qasm_path": "original/model.qasm",
        },
        "generation": generation,
        "suites_info": {s.name: _suite_info(original, s, masks[s.name], evaluator) for s in suites},
        "null": nulls,
    }
