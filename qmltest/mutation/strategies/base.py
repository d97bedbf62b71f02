"""The one generation-strategy interface and its registry: a strategy plans work items (ids that
exist before any mutant is built, as cosmic-ray's work items do) and streams the candidates the
pipeline evaluates. Built in: ``search`` (QuanForge Algorithm 1), ``directed`` and ``exhaustive``
sites (efficient-QML paper Sec. IV-B); ``--sample``/``--precision`` sample any enumerating one.
Another package adds one through the ``qmltest.strategies`` entry point group (`register`);
`chooser` looks them up."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from qmltest.errors import InputError

if TYPE_CHECKING:
    from qmltest.model.artifact import Model
    from qmltest.mutation.operators.mutant import Mutant
    from qmltest.mutation.operators.sites import Plan
    from qmltest.mutation.options import Options


@dataclass(frozen=True)
class WorkItem:
    """One unit of planned work: an operator at a site, its id fixed before the mutant is made
    (sha256 of the original's hash, the operator and the site), so a plan can be listed, split
    and compared without building anything."""

    id: str
    operator: str
    site: str


def item_id(original_sha: str, operator: str, site: str) -> str:
    """The work item id: sha256(original hash, operator, site)[:16]."""
    return hashlib.sha256(f"{original_sha}\x1f{operator}\x1f{site}".encode()).hexdigest()[:16]


class Strategy:
    """What a generation strategy declares and does. `enumerates`: its sites are known before the
    run (so --list, --sample, --precision, --shard and the projection apply); `needs_reference`:
    it generates against reference data; `scoped`: it takes --scan and the scope options;
    `families`: the operator families it generates for (None: every family)."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    families: ClassVar[tuple[str, ...] | None] = None
    enumerates: ClassVar[bool] = True
    needs_reference: ClassVar[bool] = False
    scoped: ClassVar[bool] = False

    def plan(self, original: Model, opts: Options) -> Plan | None:
        """Every site of the run's operators (None when the strategy finds its mutants as it runs)."""
        return None

    def items(self, original: Model, opts: Options) -> list[WorkItem]:
        """The planned work items, in generation order (empty when nothing is known beforehand)."""
        planned = self.plan(original, opts)
        if planned is None:
            return []
        return [
            WorkItem(item_id(original.sha256, op.name, s.describe()), op.name, s.describe())
            for op, found, _ in planned.sites
            for s in found
        ]

    def stream(self, state: object) -> tuple[Iterator[Mutant], int]:
        """The candidates of one run (`runstate.RunState` gives the model, options and folder)
        and how many there will be at most."""
        raise NotImplementedError


REGISTRY: dict[str, Strategy] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator: add a strategy under its `name`; --strategy NAME then runs it."""
    if not cls.name:
        raise InputError(f"strategy {cls.__name__} has no name")
    REGISTRY[cls.name] = cls()
    return cls
