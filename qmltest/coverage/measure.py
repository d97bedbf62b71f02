"""Coverage of a test suite against a profile: totals, per-state detail, per-input growth, parts, shots."""

from __future__ import annotations

import numpy as np

from qmltest.coverage.criteria import Bounds, Coverage, Criterion, build
from qmltest.coverage.profile import Profile, bounds
from qmltest.errors import InputError
from qmltest.simulate import engine

FORMAT = "qmltest.coverage/1"


def criteria(k: int = 100, top_k: int = 1) -> list[Criterion]:
    """Every registered criterion (`coverage.criteria.REGISTRY`) for these parameters."""
    return build(k, top_k)


estimate = engine.estimate
"""Exact probabilities, or frequencies from `shots` multinomial samples (QCov Sec. 4.5)."""


def state_label(index: int, width: int) -> str:
    """Bitstring of a measured-register state, Qiskit order (measured qubit 0 rightmost)."""
    return format(index, f"0{width}b")


def cover(
    parts: list[tuple[str, np.ndarray]],
    profile: Profile,
    k: int = 100,
    top_k: int = 1,
    method: str = "minmax",
    mad_confidence: float = 0.99,
    per_input: bool = True,
    entanglement: list[np.ndarray] | None = None,
) -> dict:
    """Coverage of the suite given as named parts (e.g. Org., then X): cumulative after each part.

    `entanglement`: each part's Meyer-Wallach values, read by the entanglement criteria (KEC)
    against the profile's (`profile.entanglement`); without them only probability criteria count."""
    lo, hi = bounds(profile, method, mad_confidence)
    cov = Coverage(criteria(k, top_k), Bounds(lo, hi))
    growth: dict[str, list[float]] = {c.name: [] for c in cov.criteria}
    part_rows = []
    total_inputs = 0
    for name, probs in parts:
        probs = np.atleast_2d(np.asarray(probs, dtype=float))
        if probs.shape[1] != profile.num_states:
            raise InputError(f"suite '{name}' gives {probs.shape[1]} states, the profile {profile.num_states}")
        if per_input:
            for row in probs:
                cov.add(row)
                for cname, value in cov.values().items():
                    growth[cname].append(value)
        else:
            cov.add(probs)
        total_inputs += len(probs)
        alone = Coverage(criteria(k, top_k), Bounds(lo, hi))
        alone.add(probs)
        part_rows.append(
            {
                "part": name,
                "inputs": len(probs),
                "cumulative_inputs": total_inputs,
                "cumulative": cov.values(),
                "alone": alone.values(),
            }
        )
    if entanglement is not None and profile.entanglement is not None:
        _entangled(entanglement, profile.entanglement, k, part_rows)
    width = int(np.log2(profile.num_states))
    per_state = []
    for s in range(profile.num_states):
        row = {"state": state_label(s, width), "lower": float(lo[s]), "upper": float(hi[s])}
        for c in cov.criteria:
            row.update(c.detail(cov.state[c.name][s]))
        per_state.append(row)
    return {
        "totals": part_rows[-1]["cumulative"] if part_rows else cov.values(),
        "inputs": total_inputs,
        "parts": part_rows,
        "per_state": per_state,
        "per_input": growth if per_input else None,
        "params": {"k": k, "top_k": top_k, "bounds": method, "mad_confidence": mad_confidence},
        "items": {c.name: int(cov.state[c.name].size) for c in cov.criteria},
    }


def _entangled(parts: list[np.ndarray], trained: np.ndarray, k: int, rows: list[dict]) -> None:
    """Add each entanglement criterion's cumulative and alone values to the part rows."""
    bounds = Bounds(np.array([trained.min()]), np.array([trained.max()]))
    cov = Coverage(build(k, reads="entanglement"), bounds)
    for row, values in zip(rows, parts):
        column = np.asarray(values, dtype=float).reshape(-1, 1)
        cov.add(column)
        alone = Coverage(build(k, reads="entanglement"), bounds)
        alone.add(column)
        row["cumulative"] = {**row["cumulative"], **cov.values()}
        row["alone"] = {**row["alone"], **alone.values()}


BOOTSTRAP = 20
"""Independent re-draws of the shots behind each row of a shots sweep (the first is the row's value)."""


def shots_sweep(
    suite_probs: np.ndarray,
    profile: Profile,
    shot_counts: list[int],
    seed: int,
    draws: int = BOOTSTRAP,
    **params: object,
) -> list[dict]:
    """Coverage with profile and suite probabilities both estimated from s shots, beside exact (Sec. 4.5).

    Each row's value is one draw of the shots; `interval` holds, per criterion, the 2.5% and 97.5%
    percentiles over `draws` independent draws (a parametric bootstrap over shot noise), and
    `exact_inside` whether the exact value lies in it: outside means a bias, not a fluctuation."""
    rows = []
    exact = cover([("suite", suite_probs)], profile, per_input=False, **params)["totals"]  # type: ignore[arg-type]
    rows.append({"shots": "exact", **exact})
    for i, s in enumerate(shot_counts):
        values: dict[str, list[float]] = {}
        for d in range(draws):
            rng = np.random.default_rng([seed, i] if d == 0 else [seed, i, d])
            sampled_profile = Profile(estimate(profile.probabilities, s, rng), profile.model_sha256, profile.meta)
            totals = cover([("suite", estimate(suite_probs, s, rng))], sampled_profile, per_input=False, **params)  # type: ignore[arg-type]
            for name, value in totals["totals"].items():
                values.setdefault(name, []).append(float(value))
        first = {name: v[0] for name, v in values.items()}
        interval = {name: [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] for name, v in values.items()}
        inside = {name: bool(interval[name][0] <= exact[name] <= interval[name][1]) for name in values}
        rows.append({"shots": s, **first, "interval": interval, "exact_inside": inside, "draws": draws})
    return rows
