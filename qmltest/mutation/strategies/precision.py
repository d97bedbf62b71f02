"""`mutate --precision W`: sample rounds until the score's interval is narrow enough; the line of
mutants x inputs and projected time printed before a long run."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path

from qmltest.model.artifact import Model
from qmltest.mutation.options import Options
from qmltest.mutation.strategies import chooser as strategies
from qmltest.mutation.strategies import sampling
from qmltest.runs.folder import write_report
from qmltest.simulate import program
from qmltest.simulate.backends import REGISTRY
from qmltest.simulate.compiled import Compiled

Round = Callable[[int, Path, bool], tuple[dict, dict]]

START_S = 0.3
"""Seconds before the first mutant (data, the original's probabilities), measured on the shipped models."""
EVIDENCE_S = 0.005
"""Seconds per evidence record (a mutant or null copy on one suite: the criteria's statistics),
4-7 ms on the shipped models at 30-200 inputs (2 cores)."""
GENERATE_S = 0.0003
"""Seconds per site generated (made and de-duplicated): 0.27-0.3 ms on QCNN's qml and classic sites."""


def until(original: Model, opts: Options, out: Path | None, one_round: Round) -> tuple[dict, dict]:
    """Nested stratified samples of doubling size (`sampling`), each round resuming the last from
    one run folder (a temporary one without --out), until the first suite's 95% interval is
    narrower than `opts.precision` or every site is in. The report is the last round's, with
    every round's size and interval. `one_round(sample, folder, first)` runs one round."""
    opts = opts.resolved()
    total = strategies.get(opts.strategy).plan(original, opts).total  # type: ignore[union-attr]
    n = min(total, opts.sample or sampling.FIRST_ROUND)
    rounds: list[dict] = []
    with contextlib.ExitStack() as stack:
        folder = out or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="qmltest-precision-"))) / "run"
        first: str | None = None
        while True:
            result, timing = one_round(n, folder, not rounds)
            if not rounds and timing.get("finished_before") and "rounds" in result.get("sampling", {}):
                return result, timing  # the whole --precision run finished before: its final report
            timing.pop("report_text", None)  # a round's text: the report is changed below
            first = first or timing["identity"]
            est = result["sampling"]
            width = None if est["interval"] is None else est["interval"][1] - est["interval"][0]
            rounds.append({"sampled": est["sampled"], "interval": est["interval"], "width": width})
            if (width is not None and width < opts.precision) or n >= total:  # type: ignore[operator]
                break
            n = min(total, 2 * n)
    result["sampling"] = dict(result["sampling"], target_width=opts.precision, rounds=rounds)
    result["suites"][next(iter(result["suites"]))]["sampling"] = result["sampling"]
    if out is not None:  # a re-run's first round (its identity) replays this final report
        write_report(out, first, result)  # type: ignore[arg-type]
    return result, timing


def projection(original: Model, suites: list, opts: Options, backend: str | None) -> dict | None:
    """How many mutants x inputs a site-strategy run simulates and its projected seconds: start-up,
    every site generated, each mutant and null copy's evidence, and the simulation by the chosen
    backend's measured cost per (mutant, input) (`Backend.mutant_us`, the model auto chooses by),
    DFC mutants past BUCKET_OUTCOMES at the cheaper of that and their Gram forms' states; None
    for the search strategy, whose mutant count is found while it runs."""
    opts = opts.resolved()
    planned = strategies.get(opts.strategy).plan(original, opts)
    if planned is None:
        return None
    mutants = planned.total if opts.sample is None else min(planned.total, opts.sample)
    inputs = sum(len(s.y) for s in suites)
    job = Compiled.original_job(original)
    each = max((len(s.y) for s in suites), default=1)
    chosen = REGISTRY.for_mutants(backend, job, each)
    shape = (job.num_qubits, len(job.measured), len(job.ops), each)
    cost = chosen.mutant_us(*shape)
    if cost == float("inf"):  # a backend without a cost model: auto's estimate stands in
        cost = REGISTRY.for_mutants("auto", job, each).mutant_us(*shape)
    rows = mutants * inputs  # the null copies reuse the original's probabilities: no simulation
    records = (mutants + opts.null_copies) * len(suites)  # each mutant and null copy's evidence per suite
    simulated = rows * cost
    dfc = sum(len(found) for op, found, _ in planned.sites if op.name == "DFC") * mutants / max(planned.total, 1)
    if dfc and not original.amplitude and program.wide(original):
        pairs = {s.args[1:3] for op, found, _ in planned.sites if op.name == "DFC" for s in found}
        states = 1 + len(original.ir.inputs) + min(len(pairs), dfc)  # Gram forms share B_{} and the single flips
        state_us = REGISTRY.get("numpy").mutant_us(*shape)
        simulated -= dfc * inputs * cost - min(dfc * inputs * cost, states * inputs * state_us)
    seconds = START_S + records * EVIDENCE_S + planned.total * GENERATE_S + simulated * 1e-6
    return {"mutants": mutants, "inputs": inputs, "rows": rows, "backend": chosen.name, "seconds": seconds}
