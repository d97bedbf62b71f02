"""Mutant sampling with a stated precision: stratified by operator, from a finite population.

Random and operator-stratified mutant sampling are how mutation testers cut cost (Zhang et al.,
"Operator-based and random mutant selection", ICSE 2010; Gopinath et al., "How hard does mutation
analysis have to be, anyway?", ISSRE 2015): the score of a random sample estimates the score of all
mutants, and its interval says how well. Here each operator is a stratum h holding N_h mutants; a
sample of n mutants is allocated in proportion to N_h (largest remainders, at least one site per
non-empty stratum), and within a stratum the mutants are the first n_h of a seeded permutation, so
a larger sample (the next round of `--precision`) contains the smaller one and resumes it. The
population is the run's distinct competent mutants (generated and de-duplicated first, which costs
no simulation), so the estimate is of the score a full run reports.

The population score is estimated by the stratified mean (Cochran, Sampling Techniques, 1977,
Eq. 5.1 and 5.6): p = sum_h W_h p_h with W_h = N_h / N, and

    Var(p) = sum_h W_h^2 (1 - n_h / N_h) p_h (1 - p_h) / n_h,

the finite-population correction (1 - n_h / N_h) making a stratum sampled whole contribute no
variance. p_h in the variance is the Agresti-Coull estimate (k_h + z^2/2) / (n_h + z^2), so a
stratum whose sample is all killed or all survived still carries uncertainty (a plain p_h of 0 or
1 would claim none). The interval is p +- z sqrt(Var), clipped to [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qmltest.errors import InputError
from qmltest.util.seeds import seed_of

Z95 = 1.959963984540054


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Proportional allocation of n sample units over strata of `sizes` (largest remainders), each
    non-empty stratum at least one unit while n allows, none above its size."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    nonempty = [h for h, s in sizes.items() if s > 0]
    out = {h: 0 for h in sizes}
    floor = min(n, len(nonempty))
    for h in sorted(nonempty, key=lambda h: (-sizes[h], h))[:floor]:
        out[h] = 1
    left = n - floor
    quota = {h: left * sizes[h] / total for h in nonempty}
    for h in nonempty:
        out[h] += min(int(quota[h]), sizes[h] - out[h])
    rest = n - sum(out.values())
    order = sorted(nonempty, key=lambda h: (-(quota[h] - int(quota[h])), -sizes[h], h))
    while rest > 0:
        progressed = False
        for h in order:
            if rest and out[h] < sizes[h]:
                out[h] += 1
                rest -= 1
                progressed = True
        if not progressed:
            break
    return out


def chosen(size: int, take: int, seed: int, stratum: str) -> list[int]:
    """Indices of the `take` sampled sites of a stratum of `size`, in site order: the first `take`
    of a permutation seeded by (seed, stratum), so samples of one seed are nested."""
    order = np.random.default_rng(seed_of(seed, "sample", stratum)).permutation(size)
    return sorted(int(i) for i in order[:take])


def sample_mutants(mutants: list, n: int, seed: int) -> tuple[list, dict]:
    """A stratified random sample of n of the run's distinct competent mutants (the population a
    full run scores), proportional per operator; incompetent ones are kept (they cost nothing and
    the report counts them). Generation order is kept, so the same seed gives the same run. Also
    the record the report keeps: population and sample per operator."""
    by_op: dict[str, list[int]] = {}
    for i, m in enumerate(mutants):
        if m.status == "scored":
            by_op.setdefault(m.operator, []).append(i)
    sizes = {op: len(rows) for op, rows in by_op.items()}
    take = allocate(sizes, n)
    keep = {rows[j] for op, rows in by_op.items() for j in chosen(len(rows), take[op], seed, op)}
    picked = [m for i, m in enumerate(mutants) if m.status != "scored" or i in keep]
    return picked, {"population": sizes, "sampled": take, "seed": seed}


@dataclass(frozen=True)
class Stratum:
    """One operator's sample: sites in the population, sites sampled, and of the sampled mutants
    that were scored, how many were killed."""

    population: int
    sampled: int
    scored: int
    killed: int


def estimate(strata: dict[str, Stratum], z: float = Z95) -> dict:
    """The stratified score estimate of the whole population and its interval (module docstring).

    A stratum's weight is its population times the share of its sampled mutants that were scored
    (not found equivalent or left undecided), the mutants a full run would count; a stratum with
    none scored drops out. The weights are taken as known (the equivalent share is near 0 or 1 per
    operator), so the interval carries the kill-rate uncertainty only."""
    used = {h: s for h, s in strata.items() if s.scored > 0 and s.sampled > 0}
    sizes = {h: s.population * s.scored / s.sampled for h, s in used.items()}
    weight_total = sum(sizes.values())
    if not weight_total:
        return {"estimate": None, "interval": None, "half_width": None}
    p = var = 0.0
    for h, s in used.items():
        w = sizes[h] / weight_total
        p += w * s.killed / s.scored
        fpc = max(0.0, 1.0 - s.sampled / s.population) if s.population else 0.0
        adj = (s.killed + z * z / 2) / (s.scored + z * z)
        var += w * w * fpc * adj * (1 - adj) / s.scored
    half = z * math.sqrt(var)
    return {"estimate": p, "interval": [max(0.0, p - half), min(1.0, p + half)], "half_width": half}


FIRST_ROUND = 64
"""Sites of the first `--precision` round (unless `--sample` gives another); each round doubles."""


def check(sample: int | None, precision: float | None) -> None:
    """Ranges of `--sample` and `--precision` (one line, exit 2); with both, N is the first round."""
    if sample is not None and sample < 1:
        raise InputError(f"--sample must be at least 1, got {sample}")
    if precision is not None and not 0.0 < precision < 1.0:
        raise InputError(f"--precision must be an interval width in (0, 1), got {precision}")


def largest(mutants: list, width: float, z: float = Z95) -> int:
    """The sample size past which `--precision width` needs no more rounds whatever the kill rates:
    the worst case p = 1/2 of the interval above, z sqrt((1 - n/N) / (4 n)) < width / 2, solved
    for n (Cochran Eq. 4.2 with the finite-population correction), N the competent mutants."""
    population = sum(1 for m in mutants if m.status == "scored")
    n0 = (z / width) ** 2
    return min(population, math.ceil(n0 / (1 + n0 / max(population, 1))))
