"""The fuzzing loop of QCov Algorithm 1 and the random-testing baseline, on one budget.

Seeds are popped from a FIFO queue and mutated `per_seed` times (DeepHunter's batch); a mutant
the model misclassifies (against its initial seed's label) is a failure; a passing mutant that
raises the guiding criterion's coverage of I u U (plus the mutants kept so far) is enqueued, else
discarded. Mutants are simulated in
batches popped from the queue head, then judged one by one in order, so decisions are those of the
sequential algorithm. Random testing mutates uniformly chosen initial seeds with no feedback.
Reported failures are re-checked with the Aer reference simulator.

Schedule 'prob' is a DeepHunter-style alternative to the FIFO queue (Xie et al. 2019): seeds stay
in a pool, and a seed already fuzzed f times is picked with probability max(1 - f / GAMMA, P_MIN)
(rejection sampling over the pool, newer seeds tried first), each pick mutated `per_seed` times;
the campaign ends on its budget, never on an empty queue.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from qmltest.coverage import measure
from qmltest.coverage.criteria import Bounds, Coverage
from qmltest.coverage.criteria import names as criteria_names
from qmltest.errors import InputError
from qmltest.fuzz.mutators import Seed
from qmltest.model.artifact import Model
from qmltest.simulate.runner import model_probabilities
from qmltest.util import intervals


def guides() -> tuple[str, ...]:
    """Every coverage criterion of the registry as a guide, and the random baseline."""
    return (*criteria_names(), "random")


SCHEDULES = ("fifo", "prob")
GAMMA, P_MIN = 20.0, 0.1


def check_schedule(schedule: str) -> None:
    """One line for an unknown seed schedule (the CLI, `campaign` and `fuzz` all ask before work)."""
    if schedule not in SCHEDULES:
        raise InputError(f"unknown schedule '{schedule}' (choose from {', '.join(SCHEDULES)})")


def pick(fuzzed: list[int], count: int, rng: np.random.Generator) -> list[int]:
    """`count` pool indices, each accepted with probability max(1 - f / GAMMA, P_MIN) for a seed
    fuzzed f times; candidates come newest first with random offsets (DeepHunter-style selection)."""
    out: list[int] = []
    n = len(fuzzed)
    while len(out) < count:
        i = n - 1 - int(rng.integers(n)) if rng.random() < 0.5 else int(rng.integers(n))
        if rng.random() < max(1.0 - fuzzed[i] / GAMMA, P_MIN):
            out.append(i)
            fuzzed[i] += 1
    return out


@dataclass
class Outcome:
    guide: str
    iterations: int = 0
    failures: list[tuple[Seed, int]] = field(default_factory=list)  # (mutant, predicted class)
    unconfirmed: int = 0
    enqueued: int = 0
    discarded_invalid: int = 0
    max_queue: int = 0
    final_queue: int = 0
    coverage_trace: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0
    stop: str = ""
    initial_seeds: int = 0

    @property
    def tsr(self) -> float:
        """Test success rate: failed mutants / mutants generated."""
        return len(self.failures) / self.iterations if self.iterations else 0.0

    @property
    def seeds_failed(self) -> int:
        """Initial seeds with at least one failing descendant."""
        return len({s.origin for s, _ in self.failures})

    @property
    def seed_tsr(self) -> float:
        """The other reading of QCov's TSR ("misclassified cases generated from initial seeds"):
        initial seeds with a failing descendant / initial seeds."""
        return self.seeds_failed / self.initial_seeds if self.initial_seeds else 0.0

    def summary(self) -> dict:
        return {
            "guide": self.guide,
            "iterations": self.iterations,
            "failures": len(self.failures),
            "tsr": self.tsr,
            "tsr_interval": intervals.wilson(len(self.failures), self.iterations),
            "seeds_failed": self.seeds_failed,
            "seed_tsr": self.seed_tsr,
            "unconfirmed_failures": self.unconfirmed,
            "enqueued": self.enqueued,
            "invalid_mutations": self.discarded_invalid,
            "max_queue": self.max_queue,
            "final_queue": self.final_queue,
            "final_coverage": self.coverage_trace[-1] if self.coverage_trace else {},
            "stop": self.stop,
        }

    def timing(self) -> dict:
        """Wall-clock numbers, kept out of the reports so that a seed gives byte-identical files."""
        per = self.seconds / self.iterations if self.iterations else None
        return {"seconds": round(self.seconds, 3), "seconds_per_iteration": per}


def fuzz(
    model: Model,
    seeds: list[Seed],
    bounds: Bounds,
    mutator,
    guide: str,
    budget: int,
    rng: np.random.Generator,
    k: int = 100,
    top_k: int = 1,
    batch: int = 32,
    recheck_backend: str = "aer",
    per_seed: int = 10,
    register: str = "all",
    schedule: str = "fifo",
    backend: str = "auto",
) -> Outcome:
    check_schedule(schedule)
    if guide not in guides():
        raise InputError(f"unknown guide '{guide}' (choose from {', '.join(guides())}, all)")
    if budget < 1:
        raise InputError(f"--budget must be positive, got {budget}")
    start = time.perf_counter()
    result = Outcome(guide, initial_seeds=len(seeds))
    cov = Coverage(measure.criteria(k, top_k), bounds)
    cov.add(model_probabilities(model, np.array([s.x for s in seeds]), backend, register=register))
    prob = schedule == "prob"
    queue: deque[Seed] = deque(seeds)  # schedule 'fifo'
    pool, fuzzed = list(seeds), [0] * len(seeds)  # schedule 'prob': the pool never shrinks
    while result.iterations < budget:
        if guide == "random":
            parents = [seeds[int(i)] for i in rng.integers(len(seeds), size=min(batch, budget - result.iterations))]
        elif prob:
            picked = pick(fuzzed, max(1, batch // per_seed), rng)
            parents = [pool[i] for i in picked for _ in range(per_seed)][: budget - result.iterations]
        else:
            if not queue:
                result.stop = "queue empty"
                break
            # DeepHunter mutates each popped seed a batch of times; children are judged in order
            popped = [queue.popleft() for _ in range(min(max(1, batch // per_seed), len(queue)))]
            parents = [p for p in popped for _ in range(per_seed)][: budget - result.iterations]
        children = []
        for parent in parents:
            child = mutator.mutate(parent, rng)
            if child is None:
                result.discarded_invalid += 1
            else:
                children.append(child)
        if not children:
            continue
        probs = model_probabilities(model, np.array([c.x for c in children]), backend, register=register)
        preds = model.predict(model.readout_from_full(probs) if register == "all" else probs)
        for child, p, pred in zip(children, probs, preds):
            result.iterations += 1
            if pred != child.label:
                result.failures.append((child, int(pred)))
                cov.add(p)  # failures join U, part of the coverage base
            elif guide == "random":
                cov.add(p)  # tracked for the report only: random testing takes no feedback
            elif cov.would_gain(p)[guide] > 0:
                cov.add(p)
                if prob:
                    pool.append(child)
                    fuzzed.append(0)
                else:
                    queue.append(child)
                result.enqueued += 1
            result.coverage_trace.append(cov.values())
        result.max_queue = max(result.max_queue, len(pool) if prob else len(queue))
    if not result.stop:
        result.stop = "budget"
    result.final_queue = len(pool) if prob else len(queue)
    result.failures = recheck(model, result, recheck_backend)
    result.seconds = time.perf_counter() - start
    return result


def recheck(model: Model, result: Outcome, backend: str) -> list[tuple[Seed, int]]:
    """Keep only failures the reference simulator confirms (same misclassification)."""
    if not result.failures:
        return []
    x = np.array([s.x for s, _ in result.failures])
    preds = model.predict(model_probabilities(model, x, backend))
    kept = [(s, int(p)) for (s, _), p in zip(result.failures, preds) if p != s.label]
    result.unconfirmed = len(result.failures) - len(kept)
    return kept
