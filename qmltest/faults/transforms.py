"""The transform registry of the fault kinds: one function per catalogue id (`kinds.catalogue`
binds them to their entries)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from qmltest.model.artifact import Model


@dataclass(frozen=True)
class Context:
    """What a transform may read besides the model: raw inputs of the split it is evaluated on
    (a scaler re-fitted on them)."""

    raw: np.ndarray | None = None


Transform = Callable[[Model, Context], "Model | None"]
TRANSFORMS: dict[str, Transform] = {}


def transform(kind: str) -> Callable[[Transform], Transform]:
    """Register the transform of one catalogue kind."""

    def add(fn: Transform) -> Transform:
        if kind in TRANSFORMS:
            raise ValueError(f"fault kind '{kind}' has two transforms")
        TRANSFORMS[kind] = fn
        return fn

    return add


def string_order(n: int) -> list[int]:
    """Indices 0..n-1 in the order their unpadded names sort as strings (x_0, x_1, x_10, ..., x_2)."""
    return sorted(range(n), key=str)
