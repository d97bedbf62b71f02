"""The site strategies (efficient-QML paper Sec. IV-B, V): every site of every operator
(``exhaustive``) or the directed, non-redundant ones (``directed``), each mutant made once and
de-duplicated by canonical form; with --sample, a stratified sample of them is scored."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from qmltest.model.artifact import Model
from qmltest.mutation.operators import registry, sites
from qmltest.mutation.operators.mutant import Mutant
from qmltest.mutation.options import Options
from qmltest.mutation.strategies import sampling
from qmltest.mutation.strategies.base import Strategy, register


def iter_sites(
    original: Model, planned: sites.Plan, progress: Callable[..., None], generation: dict
) -> Iterator[Mutant]:
    """Every planned site, one mutant at a time; duplicates skipped and counted in `generation`
    once the last one is made."""
    skipped: dict[str, dict[str, int]] = {}
    per_op: dict[str, dict] = {op.name: {"generated": 0, "skipped": {}} for op, _, _ in planned.sites}
    for m in sites.iter_generate(original, planned, skipped):
        per_op[m.operator]["generated"] += 1
        progress(1)
        yield m
    for name, counts in skipped.items():
        per_op[name]["skipped"] = counts
    generation["cells"] = {"all": per_op}


class Sites(Strategy):
    """Site enumeration over any operator family."""

    def plan(self, original: Model, opts: Options) -> sites.Plan:
        ops = registry.operators(opts.suite, list(opts.operators) or None, opts.seed)
        return sites.plan(original, ops, "directed" if self.name == "directed" else "exhaustive")

    def stream(self, state) -> tuple[Iterator[Mutant], int]:  # type: ignore[override]
        planned = self.plan(state.original, state.opts)
        if state.opts.sample is None:
            state.tick(0, more=planned.total)  # one tick per mutant, once done; duplicates come off at the end
            return iter_sites(state.original, planned, lambda k=1, more=0: None, state.generation), planned.total
        # every mutant made and de-duplicated first, then a sample of them scored
        kept = state.kept
        if kept.made is None:  # made once for every --precision round
            kept.made = list(iter_sites(state.original, planned, lambda k=1, more=0: None, state.generation))
            kept.generation = dict(state.generation)
        made = kept.made
        state.generation = dict(kept.generation)
        picked, state.generation["sampling"] = sampling.sample_mutants(made, state.opts.sample, state.opts.seed)
        _prepare_forms(state, made, picked)
        picked = [replace(c, evidence=dict(c.evidence)) for c in picked]  # a round's own copies
        state.tick(0, more=len(picked))  # one tick per picked mutant, once done
        return iter(picked), len(picked)


def _prepare_forms(state, made: list[Mutant], picked: list[Mutant]) -> None:
    """In-process, the Gram forms of a sample's DFC mutants at once (batches would each pay for the
    shared states). With --precision, those of the largest sample the target width can need
    (`sampling.largest`), so forms built in the first round serve the later ones."""
    if state.remote:
        return  # workers hold their own evaluator and build forms per batch
    opts = state.opts
    if opts.precision is not None:
        picked, _ = sampling.sample_mutants(made, sampling.largest(made, opts.precision), opts.seed)
    models = [c.model for c in picked if c.status == "scored" and c.model is not None]
    for s in state.suites:
        state.evaluator.prepare_data_changes(models, s)


@register
class Directed(Sites):
    name = "directed"
    description = "the directed, non-redundant sites of every operator (QML and classic defaults)"


@register
class Exhaustive(Sites):
    name = "exhaustive"
    description = "every site of every operator"
