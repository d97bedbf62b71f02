"""Evaluate mutants on labelled inputs: outcomes from the compiled original (`Backend.compile`,
`qmltest.simulate.compiled`), then repeated shot predictions.

A mutant's accuracy distributions are sampled with a generator seeded by the mutant id, so the same
mutant always gets the same numbers; the original's majority-vote reference is computed once per
data set.
"""

from __future__ import annotations

import numpy as np

from qmltest.data.labelled import Data
from qmltest.model import readout
from qmltest.model.artifact import Model
from qmltest.mutation.evidence import stats
from qmltest.simulate.compiled import EQUIVALENCE_TOL, Compiled, max_abs_diff  # noqa: F401  (their old home)
from qmltest.simulate.compiled import compile as compile_model
from qmltest.util.seeds import seed_of


class Evaluator:
    """The kill criteria's view of a run: the compiled original (`sim`) for outcomes, the shots,
    repeats and seed for the accuracy and vote draws."""

    def __init__(
        self,
        original: Model,
        repeats: int,
        shots: int | None,
        seed: int,
        noise: object = None,
        backend: str | None = None,
        inputs: int = 100,
    ) -> None:
        self.original = original
        self.sim: Compiled = compile_model(original, backend, noise, inputs)
        self.backend = self.sim.backend
        self.noise = noise
        self.repeats = repeats
        self.shots = shots
        self.seed = seed
        self._orig_win: dict[str, tuple[np.ndarray, bool]] = {}

    def probs(self, model: Model, data: Data) -> np.ndarray:
        return self.sim.probs(model, data)

    def original_probs(self, data: Data) -> np.ndarray:
        return self.sim.original_probs(data)

    def mutant_probs(self, mutant: Model, data: Data) -> tuple[np.ndarray | None, str]:
        return self.sim.mutant_probs(mutant, data)

    def mutant_outcomes(self, mutant: Model, data: Data) -> tuple[np.ndarray | None, np.ndarray, str]:
        return self.sim.mutant_outcomes(mutant, data)

    def prefetch(self, work: list[tuple[list[Model], Data]]) -> int:
        return self.sim.prefetch(work)

    def prepare_data_changes(self, models: list[Model], data: Data) -> int:
        return self.sim.prepare_data_changes(models, data)

    def reduced(self, probs: np.ndarray, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.sim.reduced(probs, matrix)

    def accuracies(
        self,
        probs: np.ndarray,
        data: Data,
        key: str,
        mask: np.ndarray | None = None,
        matrix: np.ndarray | None = None,
        repeats: int | None = None,
    ) -> np.ndarray:
        """Seeded accuracy distribution; `matrix` is the readout of the model that made `probs`
        (a remove-measure mutant reads out fewer qubits than the original)."""
        m = self.original
        sel = slice(None) if mask is None else mask
        rng = np.random.default_rng(seed_of(self.seed, key, data.fingerprint))
        cmat = self.sim.matrix(m) if matrix is None else matrix
        n = self.repeats if repeats is None else repeats
        if self.shots is not None:
            probs, cmat = self.reduced(probs, cmat)
        return stats.accuracy_distribution(probs[sel], data.y[sel], cmat, m.num_classes, n, self.shots, rng)

    def original_accuracies(
        self, data: Data, mask: np.ndarray | None = None, tag: str = "all", repeats: int | None = None
    ) -> np.ndarray:
        return self.accuracies(self.original_probs(data), data, f"original/{tag}", mask, repeats=repeats)

    def original_win(self, data: Data, idx: np.ndarray) -> tuple[np.ndarray, bool]:
        """(w, exact): the original's chance that one majority vote of `shots` shots is right, on
        the inputs `idx` (the majority criterion's reference, `votes.win_probability`); cached per
        data set, and computed in the client before the tasks go out."""
        from qmltest.mutation.evidence import votes

        key = f"{data.fingerprint}/{len(idx)}"
        if key not in self._orig_win:
            probs = self.original_probs(data)[idx]
            matrix, classes = self.sim.matrix(self.original), self.original.num_classes
            rng = np.random.default_rng(seed_of(self.seed, "original-votes", data.fingerprint))
            self._orig_win[key] = votes.original_win(
                probs, matrix, data.y[idx], lambda p: readout.predict(p, matrix, classes), self.shots, rng
            )
        return self._orig_win[key]
