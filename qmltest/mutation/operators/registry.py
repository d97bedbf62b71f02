"""The one operator registry: every operator of the three suites under one name, ``family/NAME``
(``quanforge/PF``, ``qml/APC``, ``classic/add-gate``), behind one site interface (`qml.QmlOperator`:
``sites(model, directed)`` then ``apply(model, site)``).

QuanForge's operators (Sec. 3.2, Table 1) act on gates chosen by percentage inside the binary
search (`generate.Generator`); here each is also offered one site at a time (`SiteWise`: every
gate, insert position or parameter pair it can act on), so that all sixteen count, list, run
exhaustively and are tested alike. A site's random draws (RGA's gate, PF's noise) derive from the
root seed and the site, never from the order of generation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from qmltest.errors import InputError
from qmltest.model.artifact import Model
from qmltest.mutation.operators import quanforge
from qmltest.mutation.operators.classic import CLASSIC
from qmltest.mutation.operators.qml import QML, QmlOperator, Site
from qmltest.mutation.operators.scope import Scope, make_scope
from qmltest.util import plugins
from qmltest.util.seeds import seed_of


class SiteWise(QmlOperator):
    """A QuanForge operator applied at one site (a gate, an insert position, or a PS pair)."""

    def __init__(self, op: quanforge.Operator, seed: int = 0) -> None:
        super().__init__(seed)
        self.op = op
        self.name = op.name  # type: ignore[misc]  # the instance carries its operator's name
        self.description = op.description  # type: ignore[misc]

    def _scope(self, model: Model) -> Scope:
        return make_scope(model.ir.num_qubits, None, None, None)

    def sites(self, model: Model, directed: bool) -> list[Site]:
        return [Site(self.name, args) for args in self.op.site_args(model.ir, self._scope(model))]

    def apply(self, model: Model, site: Site) -> Model:
        rng = np.random.default_rng(seed_of(self.seed, "site", self.name, site.describe()))
        new_ir, _ = self.op.apply(model.ir, self._scope(model), list(site.args), rng)
        return model.with_ir(export=False, new_ir=new_ir)


FAMILIES: dict[str, dict[str, type]] = {"quanforge": quanforge.REGISTRY, "qml": QML, "classic": CLASSIC}


def register(family: str) -> Callable[[type], type]:
    """Class decorator: add an operator to a family (a `QmlOperator` for qml and classic, a
    QuanForge `Operator` for quanforge); every command, listing and test then sees it."""
    if family not in FAMILIES:
        raise InputError(f"unknown operator family '{family}' ({', '.join(FAMILIES)})")

    def add(cls: type) -> type:
        FAMILIES[family][cls.name] = cls  # type: ignore[attr-defined]
        return cls

    return add


def names() -> list[str]:
    """Every operator's registry name, family/NAME."""
    return [f"{family}/{name}" for family, members in FAMILIES.items() for name in members]


def make(qualified: str, seed: int = 0) -> QmlOperator:
    """The operator named family/NAME, seeded by the run's root seed."""
    family, _, name = qualified.partition("/")
    if name not in FAMILIES.get(family, ()):
        raise InputError(f"unknown operator '{qualified}' (choose from {', '.join(names())})")
    if family == "quanforge":
        return SiteWise(quanforge.get(name), seed)
    return FAMILIES[family][name](seed)


def operators(suite: str, wanted: list[str] | None, seed: int = 0) -> list[QmlOperator]:
    """A suite's operators (all, or those named bare or as family/NAME), seeded by the root seed."""
    if suite not in FAMILIES:
        raise InputError(f"unknown operator suite '{suite}' ({', '.join(FAMILIES)})")
    members = FAMILIES[suite]
    chosen = []
    for name in wanted or list(members):
        family, sep, bare = name.partition("/")
        if sep and family != suite:
            raise InputError(f"operator '{name}' is not in the {suite} suite ({', '.join(members)})")
        bare = bare if sep else name
        if bare not in members:
            raise InputError(f"unknown {suite} operator(s) ['{name}'] (choose from {', '.join(members)})")
        chosen.append(make(f"{suite}/{bare}", seed))
    return chosen


plugins.load("qmltest.operators")  # other packages' operators (their import registers them)
