"""Two models, or one model on two targets, on the same inputs: where do the answers differ?

Exact (both sides' class probabilities computed): an input disagrees when the predicted classes
differ; the total variation distance of the class distributions measures by how much. Under shots
(`shots`), each side's `repeats` votes of S shots are drawn per input and an input disagrees when
Fisher's exact test on "votes for A's likeliest class" rejects after Holm's correction across the
inputs (so a model against itself disagrees nowhere, at alpha family-wise). Accuracies carry Wilson
intervals; the paired change in correctness is McNemar's exact test.
"""

from __future__ import annotations

import numpy as np

from qmltest.data import labels as labels_mod
from qmltest.model import readout
from qmltest.mutation.evidence import votes
from qmltest.simulate import engine
from qmltest.util import intervals


def _scores(probs: np.ndarray, cmat: np.ndarray, num_classes: int) -> np.ndarray:
    return readout.class_probabilities(probs, cmat, num_classes)


def _drawn(probs: np.ndarray, predict, shots: int, repeats: int, rng: np.random.Generator) -> np.ndarray:
    """(repeats, N) predicted classes of majority votes of `shots` shots."""
    return np.stack([predict(engine.sample_counts(probs, shots, rng)) for _ in range(repeats)])


def compare(
    probs_a: np.ndarray,
    probs_b: np.ndarray,
    model_a: object,
    model_b: object,
    y: np.ndarray,
    shots: int | None = None,
    repeats: int = 20,
    alpha: float = 0.05,
    seed: int = 0,
) -> dict:
    """The diff report body (see the module docstring); `y` the inputs' class indices."""
    from scipy.stats import binomtest, fisher_exact

    k = model_a.num_classes  # type: ignore[attr-defined]
    qa = _scores(probs_a, model_a.readout_matrix, k)  # type: ignore[attr-defined]
    qb = _scores(probs_b, model_b.readout_matrix, k)  # type: ignore[attr-defined]
    tvd = 0.5 * np.abs(qa - qb).sum(axis=1)
    if shots is None:
        pa, pb = model_a.predict(probs_a), model_b.predict(probs_b)  # type: ignore[attr-defined]
        disagree = pa != pb
        right_a, right_b = pa == y, pb == y
        pvalues = None
    else:
        rng = np.random.default_rng(seed)
        va = _drawn(probs_a, model_a.predict, shots, repeats, rng)  # type: ignore[attr-defined]
        vb = _drawn(probs_b, model_b.predict, shots, repeats, rng)  # type: ignore[attr-defined]
        lead = np.argmax(qa, axis=1)
        ka, kb = (va == lead).sum(axis=0), (vb == lead).sum(axis=0)
        pvalues = np.array(
            [fisher_exact([[a, repeats - a], [b, repeats - b]]).pvalue for a, b in zip(ka, kb)], dtype=float
        )
        disagree = votes.rejected(pvalues, alpha, "holm")
        right_a, right_b = (va == y).mean(axis=0) >= 0.5, (vb == y).mean(axis=0) >= 0.5
    n = len(y)
    only_a = int(np.sum(right_a & ~right_b))
    only_b = int(np.sum(~right_a & right_b))
    mcnemar = binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
    per_class = {}
    for c in range(k):
        mask = y == c
        m = int(mask.sum())
        per_class[str(model_a.classes[c])] = {  # type: ignore[attr-defined]
            "inputs": m,
            "accuracy_a": float(right_a[mask].mean()) if m else None,
            "accuracy_b": float(right_b[mask].mean()) if m else None,
            "disagree": int(disagree[mask].sum()),
        }
    return {
        "inputs": n,
        "mode": "exact" if shots is None else f"{repeats} x {shots} shots, Fisher + Holm at {alpha}",
        "disagree": int(disagree.sum()),
        "disagree_rate": float(disagree.mean()) if n else None,
        "disagree_interval": intervals.wilson(int(disagree.sum()), n),
        "accuracy_a": float(right_a.mean()) if n else None,
        "accuracy_a_interval": intervals.wilson(int(right_a.sum()), n),
        "accuracy_b": float(right_b.mean()) if n else None,
        "accuracy_b_interval": intervals.wilson(int(right_b.sum()), n),
        "mcnemar_p": float(mcnemar),
        "tvd_mean": float(tvd.mean()) if n else None,
        "tvd_max": float(tvd.max()) if n else None,
        "per_class": per_class,
        "inputs_that_disagree": [
            {
                "index": int(i),
                "label": labels_mod.key(model_a.classes[int(y[i])]),  # type: ignore[attr-defined]
                "tvd": float(tvd[i]),
                **({"p": float(pvalues[i])} if pvalues is not None else {}),
            }
            for i in np.flatnonzero(disagree)
        ],
    }
