"""A regressor mutant's kill evidence: its outputs against the original's on the suite's inputs,
judged by the squared-error differential test (`qmltest.model.regression.loss_test`: Wilcoxon's
signed-rank test on d_i = (y'_i - t_i)^2 - (y_i - t_i)^2, after Diebold and Mariano 1995, with
Cohen's d_z against beta). The evidence has the statistical criterion's shape, {"all": [p, d],
"classes": {}}, so verdicts, corrections and reports are the classifier's; a regressor has no
classes, so only the plain score exists.

Under shots each output is the plug-in estimate from `shots` shots; the mutant's draw is seeded by
its id and the original's by "vs" + its id, so every comparison gets an independent draw of the
original (an identical copy is then killed at most at alpha, the null control).
"""

from __future__ import annotations

import numpy as np

from qmltest.data.labelled import Data
from qmltest.model import regression
from qmltest.mutation.evidence import stats
from qmltest.simulate import engine
from qmltest.util.seeds import seed_of


def outputs(probs: np.ndarray, matrix: np.ndarray, shots: int | None, rng: np.random.Generator) -> np.ndarray:
    """Outputs per input: exact, or estimated from `shots` shots."""
    return (engine.estimate(probs, shots, rng) @ matrix)[:, 0]


def evidence(
    probs: np.ndarray,
    matrix: np.ndarray,
    original: tuple[np.ndarray, np.ndarray],
    suite: Data,
    key: str,
    shots: int | None,
    seed: int,
    status: str,
) -> dict:
    """The mutant's evidence on one suite; `original` is the original's (probs, matrix) there."""
    mine = outputs(probs, matrix, shots, np.random.default_rng(seed_of(seed, key, suite.fingerprint, "outputs")))
    rng = np.random.default_rng(seed_of(seed, "vs", key, suite.fingerprint, "outputs"))
    theirs = outputs(*original, shots, rng)
    p, d = regression.loss_test(mine, theirs, suite.y)
    return {
        "status": "equivalent" if status == "equivalent" else "ok",
        "stat": {"all": [stats.finite(p), stats.finite(d)], "classes": {}},
        "mse": round(float(np.mean((mine - suite.y) ** 2)), 9),
        "killed_by": [],
    }
