"""Test prioritisation (the QCov prototype's prioritization.py, beyond the paper): orders of a
suite's inputs so that faults show early, and APFD to score an order.

- coverage: greedy additional coverage (Rothermel et al., TSE 2001): next the input that adds the
  most uncovered items of every probability criterion together; when none adds any, coverage is
  reset and the rest are ordered again. Ties: the lower index.
- kills: greedy additional mutants killed (an input kills a mutant when it is in the mutant's
  `killed_by`), reset the same way.
- gini: DeepGini (Feng et al., ISSTA 2020), the impurity 1 - sum_c p_c^2 of the class scores,
  highest first.
APFD (Rothermel et al.): 1 - sum_i TF_i / (n m) + 1 / (2n), TF_i the 1-based position of the
first input revealing fault i, over the m faults some input reveals.
"""

from __future__ import annotations

import numpy as np

from qmltest.coverage.criteria import Bounds, build
from qmltest.errors import InputError

METHODS = ("coverage", "kills", "gini", "random")


def _greedy(items: list[set[int]]) -> list[int]:
    """Greedy additional order over each input's item set (reset when no input adds any)."""
    left = list(range(len(items)))
    covered: set[int] = set()
    order = []
    while left:
        gains = [len(items[i] - covered) for i in left]
        best = int(np.argmax(gains))
        if gains[best] == 0:
            if not covered:  # nothing covers anything: the rest in index order
                return order + left
            covered = set()
            continue
        i = left.pop(best)
        order.append(i)
        covered |= items[i]
    return order


def by_coverage(probs: np.ndarray, lower: np.ndarray, upper: np.ndarray, k: int = 100, top_k: int = 1) -> list[int]:
    """Inputs (rows of `probs`) by greedy additional KSC + SCC + TSC items against bounds (l, u)."""
    probs = np.atleast_2d(np.asarray(probs, dtype=float))
    bounds = Bounds(np.asarray(lower, float), np.asarray(upper, float))
    items: list[set[int]] = [set() for _ in range(len(probs))]
    offset = 0
    for c in build(k, top_k):
        rows, flat = c.hits(probs, bounds)
        for r, f in zip(rows.tolist(), flat.tolist()):
            items[r].add(offset + f)
        offset += int(np.prod(c.shape(probs.shape[1])))
    return _greedy(items)


def by_kills(killed_by: list[list[int]], num_inputs: int) -> list[int]:
    """Inputs by greedy additional mutants killed; `killed_by[m]` lists the inputs killing mutant m."""
    items: list[set[int]] = [set() for _ in range(num_inputs)]
    for m, inputs in enumerate(killed_by):
        for i in inputs:
            if not 0 <= i < num_inputs:
                raise InputError(f"a mutant's killed_by names input {i}; the suite has {num_inputs}")
            items[i].add(m)
    return _greedy(items)


def by_gini(scores: np.ndarray) -> list[int]:
    """Inputs by DeepGini impurity of their class scores (rows sum to 1), most uncertain first."""
    p = np.asarray(scores, dtype=float)
    p = p / np.where(p.sum(axis=1, keepdims=True) > 0, p.sum(axis=1, keepdims=True), 1.0)
    impurity = 1.0 - np.sum(p**2, axis=1)
    return np.argsort(-impurity, kind="stable").tolist()


def apfd(order: list[int] | np.ndarray, reveals: np.ndarray) -> float | None:
    """APFD of an order over (inputs x faults) booleans; None when no input reveals any fault."""
    reveals = np.asarray(reveals, dtype=bool)
    n = reveals.shape[0]
    if sorted(int(i) for i in order) != list(range(n)):
        raise InputError(f"an order must list each of the {n} inputs once")
    seen = reveals[np.asarray(order, dtype=int)]
    found = seen.any(axis=0)
    m = int(found.sum())
    if m == 0:
        return None
    first = np.argmax(seen[:, found], axis=0) + 1
    return float(1.0 - first.sum() / (n * m) + 1.0 / (2 * n))


def rank(
    model: object,
    x: np.ndarray,
    by: str,
    profile: object = None,
    killed_by: list[list[int]] | None = None,
    seed: int = 0,
    k: int = 100,
    top_k: int = 1,
) -> list[int]:
    """The order of the inputs `x` by one method: coverage needs a profile (`coverage.profile`),
    kills each mutant's killing inputs (a mutation report over these inputs), random a seed."""
    from qmltest.coverage.profile import bounds
    from qmltest.simulate.runner import model_probabilities

    if by not in METHODS:
        raise InputError(f"--by must be one of {', '.join(METHODS)}, got '{by}'")
    if by == "random":
        return np.random.default_rng(seed).permutation(len(x)).tolist()
    if by == "kills":
        if killed_by is None:
            raise InputError("--by kills needs a mutation report over these inputs (--report)")
        return by_kills(killed_by, len(x))
    if by == "gini":
        probs = model_probabilities(model, x)
        return by_gini(probs @ model.readout_matrix)  # type: ignore[attr-defined]
    if profile is None:
        raise InputError("--by coverage needs a profile (--profile, made by qmltest profile)")
    register = profile.meta.get("register", "all")  # type: ignore[attr-defined]
    lo, hi = bounds(profile)  # type: ignore[arg-type]
    return by_coverage(model_probabilities(model, x, register=register), lo, hi, k, top_k)


def killing_inputs(report: dict, suite: str | None = None) -> list[list[int]]:
    """Each scored mutant's killing inputs on one suite of a mutation report (the only suite when
    `suite` is None): the majority criteria record them per input."""
    names = list(report.get("suites", {}) or report.get("suites_info", {}))
    rows = report.get("mutants", [])
    if suite is None:
        seen = sorted({name for r in rows for name in r.get("verdicts", {})})
        if len(seen) != 1:
            raise InputError(f"the report holds suites {seen or names}: name one (--suite-name)")
        suite = seen[0]
    out = []
    for r in rows:
        v = r.get("verdicts", {}).get(suite)
        if v is not None:
            out.append([int(i) for i in v.get("killed_by", [])])
    if not out:
        raise InputError(f"the report has no verdicts on suite '{suite}'")
    return out
