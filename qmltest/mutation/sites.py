"""Site enumeration for the QML and classic operator suites (efficient-QML paper Sec. IV-B, V).

Generation enumerates every site (exhaustive) or the directed, non-redundant sites, builds each
mutant, and drops mutants whose canonical form repeats an earlier one or the original (reporting
how many and why). Evaluation, kill criteria and reports are the one pipeline's
(`qmltest.mutation.pipeline`).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

from qmltest.artifact import Model
from qmltest.errors import InputError, QmlTestError
from qmltest.mutation import registry
from qmltest.mutation.canonical import canonical
from qmltest.mutation.qml import QmlOperator, Site


def operators(suite: str, names: list[str] | None, seed: int = 0) -> list[QmlOperator]:
    """The suite's operators (all, or those named), seeded by the run's root seed (`registry`)."""
    return registry.operators(suite, names, seed)


@dataclass
class Generated:
    site: Site
    model: Model | None
    id: str
    status: str = "pending"  # pending | incompetent: ...
    seconds: float = 0.0


def mutant_id(model: Model, site: Site, mutant: Model | None, form: tuple | None = None) -> str:
    """Content address from the original's hash, the site and the mutant's canonical form."""
    if mutant is not None and form is None:
        form = canonical(mutant)
    body = "" if form is None else getattr(form, "text", None) or repr(form)
    return hashlib.sha256(f"{model.sha256}\x1f{site.describe()}\x1f{body}".encode()).hexdigest()[:16]


def generate(model: Model, ops: list[QmlOperator], strategy: str) -> tuple[list[Generated], dict]:
    """Mutants of every operator; in 'directed' mode redundant ones are skipped and counted."""
    skipped: dict[str, dict[str, int]] = {}
    return list(iter_generate(model, ops, strategy, skipped)), skipped


def iter_generate(model: Model, ops: list[QmlOperator], strategy: str, skipped: dict) -> Iterator[Generated]:
    """`generate`, one mutant at a time (a runner evaluates the first while later ones are made);
    `skipped` is filled per operator as each one finishes."""
    if strategy not in ("directed", "exhaustive"):
        raise InputError(f"--strategy must be directed or exhaustive, got '{strategy}'")
    directed = strategy == "directed"
    keys: dict = {}
    original_form = canonical(model, keys)
    seen = {original_form.text}  # the form's repr: equal iff the forms are, and a str caches its hash
    for op in ops:
        counts = {"sites": 0, "duplicate_circuit": 0, "identical_to_original": 0}
        if directed:
            counts["commuting_insertions"] = len(op.sites(model, False)) - len(op.sites(model, True))
        for site in op.sites(model, directed):
            counts["sites"] += 1
            start = time.perf_counter()
            try:
                mutant = op.apply(model, site)
                status = "pending"
            except QmlTestError as exc:
                mutant, status = None, f"incompetent: {exc}"
            except Exception as exc:  # an edit that yields no valid circuit is an incompetent mutant
                mutant, status = None, f"incompetent: {type(exc).__name__}: {exc}"
            form = None if mutant is None else canonical(mutant, keys)
            if directed and form is not None:
                if form.text in seen:
                    kind = "identical_to_original" if form.text == original_form.text else "duplicate_circuit"
                    counts[kind] += 1
                    continue
                seen.add(form.text)
            g = Generated(site, mutant, mutant_id(model, site, mutant, form), status)
            g.seconds = time.perf_counter() - start
            yield g
        skipped[op.name] = counts


def site_count(model: Model, ops: list[QmlOperator], strategy: str) -> int:
    """Sites before deduplication: an upper bound on the mutants `generate` makes."""
    return sum(len(op.sites(model, strategy == "directed")) for op in ops)


def count(model: Model, ops: list[QmlOperator], strategy: str, rows: list | None = None) -> dict[str, int]:
    """Mutants per operator without simulating (`--list`); directed counts after deduplication.
    With `rows` (a list), each mutant's id, operator, site and status is appended to it."""
    if strategy == "exhaustive" and rows is None:
        return {op.name: len(op.sites(model, False)) for op in ops}
    totals: dict[str, int] = {op.name: 0 for op in ops}
    for g in iter_generate(model, ops, strategy, {}):  # one mutant alive at a time
        totals[g.site.operator] += 1
        if rows is not None:
            rows.append({"id": g.id, "operator": g.site.operator, "site": g.site.describe(), "status": g.status})
    return totals
