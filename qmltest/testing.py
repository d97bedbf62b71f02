"""Assertions for a QNN's own test suite (pytest or plain Python): the mutation score or coverage
a suite must reach, failing with what fell short (the surviving mutants, the criteria below)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qmltest import api

SHOWN = 10
"""Surviving mutants an assertion message lists (the rest are counted)."""


def assert_mutation_score(
    model: api.Source,
    tests: str | Path | list[str] | None = None,
    at_least: float = 0.9,
    *,
    lower: bool = False,
    **options: Any,
) -> api.MutationResult:
    """Fail unless the mutation score of the test suite `tests` (name:split or files), or with
    `lower` its 95% lower bound, is at least `at_least`; the message gives the score, its interval
    and the surviving mutants. `options` are `api.mutate`'s (suite="qml", per_class, sample, ...)."""
    __tracebackhide__ = True  # pytest shows the failing assertion, not this helper's source
    specs = [str(tests)] if isinstance(tests, (str, Path)) else tests
    result = api.mutate(model, specs, **options)
    interval = result.interval
    value = (interval[0] if interval else 0.0) if lower else (result.score or 0.0)
    if value < at_least:
        survivors = result.survivors
        lines = [f"  {m['id']}  {m['operator']}  {m['site']}" for m in survivors[:SHOWN]]
        if len(survivors) > SHOWN:
            lines.append(f"  ... and {len(survivors) - SHOWN} more")
        what = "95% lower bound" if lower else "mutation score"
        raise AssertionError(
            f"{what} {value:.3f} < {at_least:.3f} ({result.summary()}); surviving mutants:\n" + "\n".join(lines)
        )
    return result


def assert_coverage(
    model: api.Source, profile: Any, suite: str | None = None, *, at_least: dict[str, float], **options: Any
) -> api.CoverageResult:
    """Fail unless every named criterion (ksc, scc, tsc, or one registered) reaches its fraction."""
    __tracebackhide__ = True
    result = api.cover(model, profile, suite, **options)
    low = {k: result.totals.get(k, 0.0) for k, bar in at_least.items() if result.totals.get(k, 0.0) < bar}
    if low:
        parts = ", ".join(f"{k} {100 * v:.2f}% < {100 * at_least[k]:.2f}%" for k, v in low.items())
        raise AssertionError(f"coverage below the bar: {parts}")
    return result
