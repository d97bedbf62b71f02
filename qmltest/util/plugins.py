"""Extension points for other packages: an installed distribution adds an operator, a generation
strategy, a kill criterion, a coverage criterion, a backend or a report format through an entry point, as pytest's
`pytest11` and cosmic-ray's `cosmic_ray.operator_providers` do.

An entry point names a module (or an object in one) of the plugin; loading it registers what it
defines through the registry's own `register` (`qmltest.mutation.operators.registry.register`,
`qmltest.mutation.judge.killing.register`, `qmltest.coverage.criteria.register`,
`qmltest.simulate.backends.REGISTRY.register`, `qmltest.report.views.register`). Each registry loads
its group once, when it is first imported, so every command sees the plugin.
"""

from __future__ import annotations

import functools
import warnings

GROUPS = {
    "qmltest.operators": "mutation operators",
    "qmltest.strategies": "generation strategies",
    "qmltest.criteria": "kill criteria",
    "qmltest.coverage": "coverage criteria",
    "qmltest.backends": "simulator backends",
    "qmltest.formats": "report formats",
}


@functools.cache
def _installed() -> object:
    """Every installed entry point, read once per process (each scan of the installed
    distributions cost ~25 ms; five registries would pay it five times at start-up)."""
    from importlib.metadata import entry_points

    return entry_points()


def load(group: str) -> list[str]:
    """Load every installed entry point of `group`, by name; the names loaded. A plugin that fails
    to load is one warning line naming it, and the run goes on without it."""
    from qmltest.errors import DataWarning

    loaded = []
    for ep in sorted(_installed().select(group=group), key=lambda e: e.name):  # type: ignore[attr-defined]
        try:
            ep.load()
        except Exception as exc:  # a third party's bug must not stop every command
            warnings.warn(
                f"plugin '{ep.name}' ({group} = {ep.value}) did not load: {type(exc).__name__}: {exc}",
                DataWarning,
                stacklevel=2,
            )
            continue
        loaded.append(ep.name)
    return loaded
