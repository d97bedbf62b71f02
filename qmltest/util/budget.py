"""Predictions under a shot budget, spent sequentially: shots go only to inputs not yet decided.

Hardware shots cost money and queue time; most inputs of a trained model are decided after a few
dozen shots. Round r gives every undecided input `start x 2^r` shots (per measurement basis);
an input is decided when its leading class's score beats every other class's by more than
Hoeffding's bound allows for chance: each shot adds a bounded difference d_c(s) = W[s, top] -
W[s, c] in [lo_c, hi_c], so the mean difference after n shots exceeds 0 by chance with
probability at most exp(-2 n t^2 / (hi_c - lo_c)^2). The error level alpha is split over inputs,
ordered pairs of classes and the most rounds there can be (Bonferroni), so every decided prediction is the
one infinitely many shots would give with probability at least 1 - alpha overall (the shots of a
basis are independent draws, as Hoeffding needs; their distributions may differ). Inputs still
undecided when the budget runs out keep their current argmax and are counted as undecided.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from qmltest.errors import InputError

MAX_ROUNDS = 16
START = 64
ALPHA = 0.05


@dataclass(frozen=True)
class Outcome:
    """Predictions (class indices), counts and shots spent per input, which are decided."""

    predictions: np.ndarray
    counts: np.ndarray
    shots: np.ndarray
    decided: np.ndarray
    rounds: int

    def to_dict(self, budget: int, alpha: float) -> dict:
        return {
            "shots_budget": budget,
            "shots_spent": int(self.shots.sum()),
            "rounds": self.rounds,
            "decided": int(self.decided.sum()),
            "undecided": int((~self.decided).sum()),
            "alpha": alpha,
            "shots_per_input": {"min": int(self.shots.min()), "max": int(self.shots.max())}
            if len(self.shots)
            else None,
        }


def bound(matrix: np.ndarray, top: np.ndarray) -> np.ndarray:
    """(N, C) ranges hi - lo of the per-shot score difference W[s, top_i] - W[s, c]."""
    diff = matrix[:, top].T[:, None, :] - matrix.T[None, :, :]  # (N, C, S)
    return diff.max(axis=2) - diff.min(axis=2)


def decided(counts: np.ndarray, matrix: np.ndarray, alpha: float) -> np.ndarray:
    """Inputs whose leading class beats every other by more than the Hoeffding bound at `alpha`
    (already split: the caller divides by inputs, rivals and rounds)."""
    n = counts.sum(axis=1).astype(float)
    scores = counts @ matrix / np.maximum(n, 1)[:, None]
    top = np.argmax(scores, axis=1)
    lead = scores[np.arange(len(scores)), top][:, None] - scores  # (N, C) mean differences
    spread = bound(matrix, top)
    margin = spread * np.sqrt(math.log(1.0 / alpha) / (2 * np.maximum(n, 1)))[:, None]
    ok = (lead > margin) | (spread == 0)  # a rival whose difference never varies cannot win by chance
    ok[np.arange(len(scores)), top] = True
    return ok.all(axis=1) & (n > 0)


def predict(
    draw: Callable[[np.ndarray, int], np.ndarray],
    num_inputs: int,
    matrix: np.ndarray,
    budget: int,
    bases: int = 1,
    alpha: float = ALPHA,
) -> Outcome:
    """Spend at most `budget` shots (all bases together) on `num_inputs` inputs, sequentially.

    `draw(indices, shots)` returns counts (len(indices), rows of `matrix`) with `shots` shots per
    basis for each listed input: a sampler job on hardware, multinomial draws in tests.
    """
    if budget < bases * num_inputs:
        raise InputError(f"--shots-budget {budget} is less than one shot per input and basis ({bases * num_inputs})")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    counts = np.zeros((num_inputs, matrix.shape[0]), dtype=np.int64)
    shots = np.zeros(num_inputs, dtype=np.int64)
    k = matrix.shape[1]
    level = alpha / (num_inputs * max(k * (k - 1), 1) * MAX_ROUNDS)
    done = np.zeros(num_inputs, bool)
    spent, rounds = 0, 0
    for r in range(MAX_ROUNDS):
        todo = np.flatnonzero(~done)
        if not len(todo):
            break
        per = min(START * 2**r, (budget - spent) // (bases * len(todo)))
        if per < 1:
            break
        counts[todo] += draw(todo, per)
        shots[todo] += per * bases
        spent += per * bases * len(todo)
        rounds += 1
        done[todo] = decided(counts[todo], matrix, level)
    return Outcome(np.argmax(counts @ matrix, axis=1), counts, shots, done, rounds)
