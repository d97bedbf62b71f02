"""Site enumeration for the QML and classic operator suites (efficient-QML paper Sec. IV-B, V).

Generation enumerates every site (exhaustive) or the directed, non-redundant sites, builds each
mutant, and drops mutants whose canonical form repeats an earlier one or the original (reporting
how many and why). Evaluation, kill criteria and reports are the one pipeline's
(`qmltest.mutation.pipeline`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from qmltest.errors import InputError, QmlTestError
from qmltest.model.artifact import Model
from qmltest.mutation.operators.canonical import canonical
from qmltest.mutation.operators.mutant import Mutant, content, mutant_id
from qmltest.mutation.operators.qml import QmlOperator, Site


@dataclass(frozen=True)
class Plan:
    """Every site of every operator, enumerated once: the run's progress total, the listing and the
    generation all read it (sites were enumerated twice before, once to count them)."""

    strategy: str
    sites: tuple[tuple[QmlOperator, tuple[Site, ...], int], ...]  # (operator, sites, commuting insertions)

    @property
    def total(self) -> int:
        """Sites before deduplication: an upper bound on the mutants generation makes."""
        return sum(len(found) for _, found, _ in self.sites)


def plan(model: Model, ops: list[QmlOperator], strategy: str) -> Plan:
    """The sites of `ops` on `model` ('directed': without the redundant ones, counted)."""
    if strategy not in ("directed", "exhaustive"):
        raise InputError(f"--strategy must be directed or exhaustive, got '{strategy}'")
    directed = strategy == "directed"
    rows = []
    for op in ops:
        found = tuple(op.sites(model, directed))
        commuting = len(op.sites(model, False)) - len(found) if directed else 0  # what directed sites leave out
        rows.append((op, found, commuting))
    return Plan(strategy, tuple(rows))


def generate(model: Model, ops: list[QmlOperator], strategy: str) -> tuple[list[Mutant], dict]:
    """Mutants of every operator; in 'directed' mode redundant ones are skipped and counted."""
    skipped: dict[str, dict[str, int]] = {}
    return list(iter_generate(model, plan(model, ops, strategy), skipped)), skipped


def iter_generate(model: Model, planned: Plan, skipped: dict) -> Iterator[Mutant]:
    """`generate`, one mutant at a time (a runner evaluates the first while later ones are made),
    status 'scored' or 'incompetent: ...'; `skipped` is filled per operator as each one finishes."""
    directed = planned.strategy == "directed"
    keys: dict = {}
    original_form = canonical(model, keys)
    seen = {original_form.text}  # the form's repr: equal iff the forms are, and a str caches its hash
    for op, found, commuting in planned.sites:
        counts = {"sites": 0, "duplicate_circuit": 0, "identical_to_original": 0}
        if directed:
            counts["commuting_insertions"] = commuting
        for site in found:
            counts["sites"] += 1
            try:
                mutant = op.apply(model, site)
                status = "scored"
            except QmlTestError as exc:
                mutant, status = None, f"incompetent: {exc}"
            except Exception as exc:  # an edit that yields no valid circuit is an incompetent mutant
                mutant, status = None, f"incompetent: {type(exc).__name__}: {exc}"
            text = content(mutant, keys)
            if directed and mutant is not None:
                if text in seen:
                    kind = "identical_to_original" if text == original_form.text else "duplicate_circuit"
                    counts[kind] += 1
                    continue
                seen.add(text)
            where = site.describe()
            yield Mutant(mutant_id(model.sha256, op.name, where, text), op.name, "all", where, mutant, status)
        skipped[op.name] = counts


def count(model: Model, ops: list[QmlOperator], strategy: str, rows: list | None = None) -> dict[str, int]:
    """Mutants per operator without simulating (`--list`); directed counts after deduplication.
    With `rows` (a list), each mutant's id, operator, site and status is appended to it."""
    return tally(model, plan(model, ops, strategy), rows)


def tally(model: Model, planned: Plan, rows: list | None = None) -> dict[str, int]:
    """`count` over a plan made already (any enumerating strategy's)."""
    if planned.strategy == "exhaustive" and rows is None:
        return {op.name: len(found) for op, found, _ in planned.sites}
    totals: dict[str, int] = {op.name: 0 for op, _, _ in planned.sites}
    for m in iter_generate(model, planned, {}):  # one mutant alive at a time
        totals[m.operator] += 1
        if rows is not None:
            rows.append({"id": m.id, "operator": m.operator, "site": m.site, "status": m.status})
    return totals
