"""QCov criteria KSC, SCC, TSC (Eq. 2-4) as pluggable classes over an incremental coverage state.

Each criterion owns a boolean array of coverage items; `mark` ORs in a batch of probability
vectors in O(batch x |S| x top-k), so adding one input costs O(|S|), never a recomputation.
One registry (`REGISTRY`, filled by `@register`) is what `cover`, `fuzz` (its guides), the
reports and `--fail-under` read: a new criterion is one class (README, "Adding a coverage
criterion").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from qmltest.errors import InputError
from qmltest.util import plugins


@dataclass(frozen=True)
class Bounds:
    lower: np.ndarray  # l(s), shape (|S|,)
    upper: np.ndarray  # u(s)


class Criterion:
    """Interface: a name, the shape of its coverage items, and which items each input hits."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    reads: ClassVar[str] = "probabilities"
    """What each input contributes: its probability vector over the basis states, or one value per
    input ("entanglement": the Meyer-Wallach Q of its final state, `coverage.entanglement`)."""

    @classmethod
    def from_params(cls, params: dict) -> Criterion:
        """The criterion for a run's parameters (`k`, `top_k`, ...); most need none."""
        return cls()

    def detail(self, covered: np.ndarray) -> dict:
        """What the per-state table shows of one basis state's items (`covered`, its row)."""
        return {}

    def shape(self, num_states: int) -> tuple[int, ...]:
        raise NotImplementedError

    def hits(self, probs: np.ndarray, bounds: Bounds) -> tuple[np.ndarray, np.ndarray]:
        """(input index, flat item index) pairs for a batch: O(batch x |S|), no dense k-cell arrays."""
        raise NotImplementedError


def _pairs(mask: np.ndarray, item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, s = np.nonzero(mask)
    return n, item[n, s]


REGISTRY: dict[str, type[Criterion]] = {}


def register(cls: type[Criterion]) -> type[Criterion]:
    """Add a criterion class under its name (a new name; order of registration is report order)."""
    if not cls.name or cls.name in REGISTRY or cls.name == "random":
        raise ValueError(f"coverage criterion name '{cls.name}' is empty or taken")
    REGISTRY[cls.name] = cls
    return cls


def names(reads: str | None = "probabilities") -> tuple[str, ...]:
    """The registered criteria that read `reads` (every one for None), in report order."""
    return tuple(name for name, cls in REGISTRY.items() if reads is None or cls.reads == reads)


def build(k: int = 100, top_k: int = 1, reads: str = "probabilities") -> list[Criterion]:
    """One instance of every registered criterion that reads `reads`, for a run's parameters."""
    return [cls.from_params({"k": k, "top_k": top_k}) for cls in REGISTRY.values() if cls.reads == reads]


@register
class KSC(Criterion):
    """K-cell State Coverage (Eq. 2): k equal cells of [l(s), u(s)] per basis state."""

    name = "ksc"
    description = "k-cell state coverage"

    def __init__(self, k: int = 100) -> None:
        if k < 1:
            raise InputError(f"--k must be at least 1, got {k}")
        self.k = k

    @classmethod
    def from_params(cls, params: dict) -> Criterion:
        return cls(int(params.get("k", 100)))

    def detail(self, covered: np.ndarray) -> dict:
        return {"cells_covered": np.flatnonzero(covered).tolist()}

    def shape(self, num_states: int) -> tuple[int, ...]:
        return (num_states, self.k)

    def cells(self, probs: np.ndarray, bounds: Bounds) -> np.ndarray:
        """Cell index per (input, state), or -1 outside [l, u]; u itself is in the last cell."""
        lo, hi = bounds.lower, bounds.upper
        width = hi - lo
        inside = (probs >= lo) & (probs <= hi)
        idx = np.floor((probs - lo) / np.where(width > 0, width, 1.0) * self.k)
        idx = np.clip(np.nan_to_num(idx), 0, self.k - 1).astype(int)
        idx[:, width <= 0] = 0  # a degenerate range [l, l] is one point: the first cell
        return np.where(inside, idx, -1)

    def hits(self, probs: np.ndarray, bounds: Bounds) -> tuple[np.ndarray, np.ndarray]:
        cells = self.cells(probs, bounds)
        flat = np.arange(probs.shape[1])[None, :] * self.k + cells
        return _pairs(cells >= 0, flat)


@register
class SCC(Criterion):
    """State Corner Coverage (Eq. 3): lower [0, l) and upper (u, 1] corners, 2|S| items."""

    name = "scc"
    description = "state corner coverage"

    def shape(self, num_states: int) -> tuple[int, ...]:
        return (num_states, 2)

    def detail(self, covered: np.ndarray) -> dict:
        return {"lower_corner": bool(covered[0]), "upper_corner": bool(covered[1])}

    def hits(self, probs: np.ndarray, bounds: Bounds) -> tuple[np.ndarray, np.ndarray]:
        states = np.arange(probs.shape[1])[None, :] * 2
        low_n, low_i = _pairs(probs < bounds.lower, np.broadcast_to(states, probs.shape))
        up_n, up_i = _pairs(probs > bounds.upper, np.broadcast_to(states + 1, probs.shape))
        return np.concatenate([low_n, up_n]), np.concatenate([low_i, up_i])


@register
class TSC(Criterion):
    """Top-k State Coverage (Eq. 4): states among an input's k most probable."""

    name = "tsc"
    description = "top-k state coverage"

    def __init__(self, top_k: int = 1) -> None:
        if top_k < 1:
            raise InputError(f"--top-k must be at least 1, got {top_k}")
        self.top_k = top_k

    @classmethod
    def from_params(cls, params: dict) -> Criterion:
        return cls(int(params.get("top_k", 1)))

    def detail(self, covered: np.ndarray) -> dict:
        return {"top_k": bool(covered)}

    def shape(self, num_states: int) -> tuple[int, ...]:
        return (num_states,)

    def hits(self, probs: np.ndarray, bounds: Bounds) -> tuple[np.ndarray, np.ndarray]:
        k = min(self.top_k, probs.shape[1])
        if k == 1:  # argmax: the first maximum, the same tie rule as the stable sort, without the sort
            return np.arange(len(probs)), np.argmax(probs, axis=1)
        order = np.argsort(-probs, axis=1, kind="stable")[:, :k]  # ties: the lower state index wins
        return np.repeat(np.arange(len(probs)), k), order.ravel()


@register
class KEC(KSC):
    """K-cell Entanglement Coverage (the QCov prototype's KEC): k equal cells of [l, u], the range
    of the Meyer-Wallach Q over the training inputs; its items are those k cells."""

    name = "kec"
    description = "k-cell entanglement coverage"
    reads = "entanglement"

    def detail(self, covered: np.ndarray) -> dict:
        return {}


class Coverage:
    """Accumulated coverage of several criteria; adding one input costs O(|S|)."""

    def __init__(self, criteria: list[Criterion], bounds: Bounds) -> None:
        self.criteria = criteria
        self.bounds = bounds
        n = len(bounds.lower)
        self.state = {c.name: np.zeros(c.shape(n), bool) for c in criteria}
        self.count = {c.name: 0 for c in criteria}

    def _check(self, probs: np.ndarray) -> np.ndarray:
        probs = np.atleast_2d(np.asarray(probs, dtype=float))
        if probs.shape[1] != len(self.bounds.lower):
            raise InputError(f"probability vectors have {probs.shape[1]} states, the profile {len(self.bounds.lower)}")
        return probs

    def add(self, probs: np.ndarray) -> dict[str, int]:
        """OR a batch into the state; returns how many items each criterion gained."""
        probs = self._check(probs)
        gained = {}
        for c in self.criteria:
            _, items = c.hits(probs, self.bounds)
            flat = self.state[c.name].reshape(-1)
            flat[items] = True  # counted after, not deduplicated first: np.unique took 40% of a coverage
            now = int(np.count_nonzero(flat))
            gained[c.name] = now - self.count[c.name]
            self.count[c.name] = now
        return gained

    def would_gain(self, probs: np.ndarray) -> dict[str, int]:
        """Items one batch would add, without adding them (coverage-guided fuzzing)."""
        probs = self._check(probs)
        out = {}
        for c in self.criteria:
            _, items = c.hits(probs, self.bounds)
            new = items[~self.state[c.name].reshape(-1)[items]]
            out[c.name] = len(np.unique(new)) if len(probs) > 1 else len(new)
        return out

    def values(self) -> dict[str, float]:
        return {c.name: self.count[c.name] / self.state[c.name].size for c in self.criteria}


plugins.load("qmltest.coverage")  # other packages' coverage criteria (their import registers them)
