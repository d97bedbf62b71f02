"""A scratch cache owned by one immutable object: it lives and dies with its owner.

Immutable records (a `Model`, a `ModelIR`, an IR `Gate`) carry one, so what is derived from them
(a compiled program, flattened rows, split units) is made once per object and dropped with it,
never kept in a module dict keyed by `id()`. A copy or a pickle starts empty: a worker process
derives its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Memo(dict):
    """A dict that copies and pickles empty; compare=False on its field keeps it out of equality."""

    def __reduce__(self) -> tuple:
        return (Memo, ())

    def __copy__(self) -> Memo:
        return Memo()

    def __deepcopy__(self, _: dict) -> Memo:
        return Memo()

    def get_or(self, key: str, make: Callable[[], Any]) -> Any:
        """The value under `key`, made by `make()` the first time."""
        if key not in self:
            self[key] = make()
        return self[key]


def memo_field() -> Any:
    """The dataclass field of an owner's memo: not in __init__, equality, hash or repr."""
    from dataclasses import field

    return field(default_factory=Memo, init=False, compare=False, repr=False)
