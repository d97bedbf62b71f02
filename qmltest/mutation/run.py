"""A QuanForge mutation run: generate effective mutants per operator (and scan cell), score suites.

The run folder holds `results.jsonl` (one finished mutant per line, appended as it completes),
`mutants/<id>/model.qasm + model.json` (every generated mutant, diffable against the original) and
the reports. Re-running with the same arguments regenerates the same mutant ids and takes their
results from `results.jsonl` instead of simulating them again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from qmltest import artifact, report
from qmltest.artifact import Model
from qmltest.mutation import stats
from qmltest.mutation.evaluate import Data, Evaluator, seed_of
from qmltest.mutation.generate import Generator, Mutant, Settings, Step
from qmltest.mutation.operators import Operator
from qmltest.mutation.scope import Scope

FORMAT = "qmltest.mutation/1"
NULL_COPIES = 50


class RunFolder:
    """Append-only results log plus mutant artifacts; tolerant of a half-written last line."""

    def __init__(self, path: Path | None, fresh: bool = False) -> None:
        self.path = path
        self.records: dict[str, dict] = {}
        if path is None:
            return
        path.mkdir(parents=True, exist_ok=True)
        log = path / "results.jsonl"
        if fresh and log.exists():
            log.unlink()
        if log.exists():
            for line in log.read_text().splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # an interrupted write: that mutant is simply redone
                self.records[rec["id"]] = rec

    def save(self, mutant: Mutant) -> None:
        if self.path is None:
            return
        folder = self.path / "mutants" / mutant.id
        if mutant.status == "ok" or mutant.status == "equivalent":
            artifact.save(mutant.model, folder)
        with open(self.path / "results.jsonl", "a") as fh:
            fh.write(json.dumps(mutant.record(), sort_keys=True, default=float) + "\n")
            fh.flush()
        self.records[mutant.id] = mutant.record()


@dataclass(frozen=True)
class Cell:
    name: str
    scope: Scope


def score_suites(
    mutants: list[Mutant], suites: list[Data], evaluator: Evaluator, settings: Settings, folder: RunFolder
) -> dict[str, dict]:
    """Class-level mutation score (Eq. 4) of every suite, with a null control's kill rate."""
    original = evaluator.original
    out = {}
    for suite in suites:
        classes = [c for c in range(original.num_classes) if np.any(suite.y == c)]
        killed_total = 0
        for m in mutants:
            if suite.name not in m.kills:
                probs, _ = evaluator.mutant_probs(m.model, suite)
                kills = []
                for c in classes:
                    acc = evaluator.accuracies(probs, suite, f"{m.id}/class{c}", suite.y == c)
                    orig = evaluator.original_accuracies(suite, suite.y == c, f"vs/{m.id}/class{c}")
                    if stats.is_killed(orig, acc, settings.alpha, settings.effect).killed:
                        kills.append(original.classes[c])
                m.kills[suite.name] = kills
                folder.save(m)
            killed_total += len(m.kills[suite.name])
        null_kills = 0
        base = evaluator.original_probs(suite)
        for r in range(NULL_COPIES):
            for c in classes:
                acc = evaluator.accuracies(base, suite, f"null{r}/class{c}", suite.y == c)
                orig = evaluator.original_accuracies(suite, suite.y == c, f"vs/null{r}/class{c}")
                null_kills += stats.is_killed(orig, acc, settings.alpha, settings.effect).killed
        denom = len(mutants) * original.num_classes
        out[suite.name] = {
            "inputs": int(len(suite.y)),
            "mutation_score": killed_total / denom if denom else None,
            "effective_mutants": len(mutants),
            "null_control_kill_rate": null_kills / (NULL_COPIES * max(len(classes), 1)),
        }
    return out


def summarize(effective: list[Mutant], generated: list[Mutant], log: list[Step]) -> dict:
    scored = [m for m in generated if m.status == "ok"]
    n = len(scored)
    return {
        "generated": len(generated),
        "equivalent": sum(m.status == "equivalent" for m in generated),
        "incompetent": sum(m.status.startswith("incompetent") for m in generated),
        "killable": sum(m.killable for m in scored),
        "nontrivial": sum(m.nontrivial for m in scored),
        "effective": len(effective),
        "KR": sum(m.killable for m in scored) / n if n else None,
        "NR": sum(m.nontrivial for m in scored) / n if n else None,
        "mean_effective_accuracy": float(np.mean([m.mean_accuracy for m in effective])) if effective else None,
        "search": [s.to_dict() for s in log],
    }


def run(
    original: Model,
    reference: Data,
    suites: list[Data],
    operators: list[Operator],
    cells: list[Cell],
    settings: Settings,
    repeats: int,
    shots: int | None,
    seed: int,
    out: Path | None = None,
    fresh: bool = False,
    progress: Callable[[str], None] | None = None,
    noise: object = None,
) -> dict:
    folder = RunFolder(out, fresh)
    evaluator = Evaluator(original, repeats, shots, seed, noise)
    gen = Generator(original, reference, evaluator, settings, seed, folder.records, folder.save)
    per_cell: dict[str, dict] = {}
    all_effective: dict[str, Mutant] = {}
    by_operator: dict[str, list[Mutant]] = {}
    by_cell: dict[str, list[Mutant]] = {}
    for cell in cells:
        per_cell[cell.name] = {}
        for op in operators:
            if progress:
                progress(f"{cell.name} {op.name}")
            effective, generated, log = gen.run(op, cell.scope, cell.name)
            per_cell[cell.name][op.name] = summarize(effective, generated, log)
            all_effective.update({m.id: m for m in effective})
            by_operator.setdefault(op.name, []).extend(effective)
            by_cell.setdefault(cell.name, []).extend(effective)
    effective_list = sorted(all_effective.values(), key=lambda m: m.id)
    suite_scores = score_suites(effective_list, suites, evaluator, settings, folder)

    def score(ms: list[Mutant], suite: str) -> float | None:
        return sum(len(m.kills[suite]) for m in ms) / (len(ms) * original.num_classes) if ms else None

    per_operator_scores = {s.name: {op: score(ms, s.name) for op, ms in by_operator.items()} for s in suites}
    per_cell_scores = {s.name: {c: score(ms, s.name) for c, ms in by_cell.items()} for s in suites}
    orig_ref = evaluator.original_accuracies(reference)
    result = {
        "meta": {
            "format": FORMAT,
            "model": original.source,
            "model_sha256": original.sha256,
            "seed": seed,
            "shots": shots,
            "repeats": repeats,
            "noise": None if noise is None else {"name": noise.name, "sha256": noise.sha256},  # type: ignore[attr-defined]
            "versions": report.versions(),
        },
        "settings": asdict(settings),
        "reference": {
            "name": reference.name,
            "inputs": int(len(reference.y)),
            "original_mean_accuracy": float(np.mean(orig_ref)),
        },
        "cells": per_cell,
        "suites": suite_scores,
        "suite_scores_per_operator": per_operator_scores,
        "suite_scores_per_cell": per_cell_scores,
        "mutants": [mutant_row(m) for m in sorted(gen.cache.values(), key=lambda m: m.id)],
    }
    if out is not None:
        report.write_text_atomic(out / "report.json", report.to_json(result))
    return result


def mutant_row(m: Mutant) -> dict:
    return {
        "id": m.id,
        "operator": m.operator,
        "percentage": round(m.percentage, 6),
        "status": m.status,
        "mean_accuracy": None if m.accuracies is None else round(m.mean_accuracy, 6),
        "p_value": None if m.p_value != m.p_value else m.p_value,
        "effect_size": None if m.effect_size != m.effect_size else m.effect_size,
        "killable": m.killable,
        "nontrivial": m.nontrivial,
        "effective": m.effective,
        "kills": m.kills,
        "notes": m.notes,
    }


def null_kill_rate(
    probs: np.ndarray,
    y: np.ndarray,
    model: Model,
    repeats: int,
    shots: int,
    trials: int,
    seed: int,
    alpha: float = 0.05,
    effect: float = 0.5,
) -> float:
    """Fraction of `trials` in which an identical copy of the model is killed (must stay near alpha)."""
    kills = 0
    for t in range(trials):
        rng = np.random.default_rng(seed_of(seed, "null", t))
        base = stats.accuracy_distribution(probs, y, model.readout_matrix, model.num_classes, repeats, shots, rng)
        copy = stats.accuracy_distribution(probs, y, model.readout_matrix, model.num_classes, repeats, shots, rng)
        kills += stats.is_killed(base, copy, alpha, effect).killed
    return kills / trials
