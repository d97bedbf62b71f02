"""The strategy a run names: the built-in strategies registered (`by_site`, `search`), then other
packages' (the ``qmltest.strategies`` entry point group), looked up by name and checked against
the options."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qmltest.errors import InputError
from qmltest.mutation.strategies import by_site, search  # noqa: F401  (their import registers them)
from qmltest.mutation.strategies.base import REGISTRY, Strategy
from qmltest.util import plugins

if TYPE_CHECKING:
    from qmltest.mutation.options import Options

plugins.load("qmltest.strategies")


def names() -> tuple[str, ...]:
    """Every registered strategy's name."""
    return tuple(REGISTRY)


def get(name: str) -> Strategy:
    """The strategy named `name`, or one line naming the choices."""
    if name not in REGISTRY:
        raise InputError(f"--strategy must be one of {', '.join(REGISTRY)}, got '{name}'")
    return REGISTRY[name]


def checked(opts: Options) -> Strategy:
    """The run's strategy, once the options it cannot take are refused in one line (another
    operator family than it generates, sampling a strategy that enumerates nothing)."""
    strategy = get(opts.strategy)
    if strategy.families is not None and opts.suite not in strategy.families:
        raise InputError(
            f"--strategy {opts.strategy} does not generate {opts.suite} mutants: it is for the "
            f"{', '.join(strategy.families)} operators; directed/exhaustive site enumeration works for every suite"
        )
    if (opts.sample or opts.precision) and not strategy.enumerates:
        raise InputError(
            f"--sample and --precision sample the site strategies; {opts.strategy} finds its mutants as it runs"
        )
    return strategy
