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

Round = Callable[[int, Path, bool], tuple[dict, dict]]


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
    """How many mutants x inputs a site-strategy run simulates and an upper bound on its time (the
    backend's cost model per input, every mutant and null copy run from the start); None for the
    search strategy, whose mutant count is found while it runs."""
    opts = opts.resolved()
    planned = strategies.get(opts.strategy).plan(original, opts)
    if planned is None:
        return None
    mutants = planned.total if opts.sample is None else min(planned.total, opts.sample)
    inputs = sum(len(s.y) for s in suites)
    job = program.of_model(original)
    chosen = REGISTRY.for_job(backend, job)
    cost = chosen.estimate_us(job.num_qubits, len(job.measured), len(job.ops))
    if cost == float("inf"):  # a backend without a cost model: auto's estimate stands in
        cost = REGISTRY.for_job("auto", job).estimate_us(job.num_qubits, len(job.measured), len(job.ops))
    rows = (mutants + opts.null_copies) * inputs
    return {"mutants": mutants, "inputs": inputs, "rows": rows, "backend": chosen.name, "seconds": rows * cost * 1e-6}
