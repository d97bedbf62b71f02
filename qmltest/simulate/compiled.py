"""A model compiled for a backend (`Backend.compile`): the outcome probabilities of the original and
of each mutant on a data set, with the original's work shared across mutants (prefix checkpoints,
Gram forms for data changes, batched prefetch on the gpu backend); equivalence found exactly.
Mutation testing asks this object for outcomes and never simulates by itself."""

from __future__ import annotations

from collections import Counter, OrderedDict
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from qmltest.errors import InputError, QmlTestError
from qmltest.model import readout
from qmltest.model.artifact import Model
from qmltest.simulate import engine, linearity, program, resume

if TYPE_CHECKING:
    from qmltest.data.labelled import Data
    from qmltest.simulate.backend import Backend

EQUIVALENCE_TOL = 1e-10
DIFF_BLOCK_BYTES = 2**21


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| over two equal-shape arrays, a block of rows at a time: the temporaries stay in
    cache (100 inputs x 2^16 outcomes: 5.4 ms against 46 ms in one pass); the same number exactly."""
    rows = max(1, DIFF_BLOCK_BYTES // max(1, a[:1].nbytes))
    return max((float(np.max(np.abs(a[i : i + rows] - b[i : i + rows]))) for i in range(0, len(a), rows)), default=0.0)


def compile(original: Model, backend: str | Backend | None = None, noise: object = None, inputs: int = 100) -> Compiled:
    """The original compiled for a backend (a name, or auto when None: the lowest cost per
    (mutant, input) for mutants sent with `inputs` inputs, `Registry.for_mutants`): compile once,
    then ask `mutant_outcomes` per (mutant, data set). A function of this module rather than a
    Backend method: the backend interface stays below the engine it would otherwise need."""
    from qmltest.simulate.backends import REGISTRY

    job = Compiled.original_job(original)
    return Compiled(original, REGISTRY.for_mutants(backend, job, inputs), noise)


class Compiled:
    """One original model compiled for a backend: every mutant's outcome probabilities on a data
    set, sharing the original's work (sinter's compiled sampler is the model: compile once, then
    ask per task). Noise-free, on a backend that shares states, a mutant resumes from the
    original's checkpoints (`resume`); DFC mutants come from Gram forms (`linearity`); on the gpu
    backend mutants are prefetched as one batch. Every path equals the per-mutant simulation."""

    def __init__(self, original: Model, backend: Backend, noise: object = None) -> None:
        self.original = original
        self.backend = backend
        """The concrete backend (auto resolved for the original's width): its capabilities, not its
        name, decide prefix reuse and mutant batching."""
        self.noise = noise
        self.marginal = self.wide(original)
        """Past BUCKET_OUTCOMES outcomes (where the evidence reads class buckets anyway) each model
        is simulated for the marginal its class scores read (`program.class_view`): x % 2 over 20
        measured qubits returns 2 probabilities per input, not 2^20. Equivalence is then judged on
        what the readout reads. Narrower readouts keep every outcome (their reports unchanged)."""
        self._orig_probs: dict[str, np.ndarray] = {}
        self._prefix: dict[str, Any] = {}  # data fingerprint -> resume.Checkpoints
        self._reduced_cache: list[tuple[np.ndarray, ...]] = []  # (probs, matrix, reduced...), newest last
        self._batched: dict[tuple[str, str], np.ndarray] = {}  # `prefetch`ed probabilities by (program, data) content
        self._forms: OrderedDict[tuple[str, tuple[int, ...]], linearity.Form | None] = OrderedDict()

    marginals = True
    """Simulate the class marginal past BUCKET_OUTCOMES outcomes (off: every outcome, as before)."""

    @classmethod
    def wide(cls, original: Model) -> bool:
        """Whether runs of this original read the class marginal (`marginal`)."""
        return cls.marginals and program.wide(original)

    @classmethod
    def original_job(cls, original: Model) -> program.Circuit:
        """The program a run of this original simulates for it (what auto and the projection weigh)."""
        return program.class_view(original)[0] if cls.wide(original) else program.of_model(original)

    def job(self, model: Model) -> program.Circuit:
        """The program `probs` runs for a model: its class view past BUCKET_OUTCOMES outcomes."""
        return program.class_view(model)[0] if self.marginal else program.of_model(model)

    def matrix(self, model: Model) -> np.ndarray:
        """The readout matrix over the outcomes `probs` returns for a model."""
        return program.class_view(model)[1] if self.marginal else model.readout_matrix

    def probs(self, model: Model, data: Data) -> np.ndarray:
        if self._batched:
            hit = self._batched.pop((program.content_key(self.job(model)), data.fingerprint), None)
            if hit is not None:
                return hit
        encoded = data.encoded
        changed = model.manifest["preprocessing"] != self.original.manifest["preprocessing"]
        if changed:
            if data.raw is None:
                raise InputError(f"{data.name}: a data mutation needs the raw inputs")
            encoded = model.encode(data.raw)
        if model.is_kernel:  # a kernel model's outcomes are its kernel rows (`simulate.fidelity`)
            from qmltest.simulate import fidelity

            return fidelity.outcomes(model, encoded, self.noise)
        if (
            not changed
            and self.noise is None
            and self.prefix_reuse
            and model is not self.original
            and self.backend.capabilities.prefix_reuse
        ):
            reused = self._resumed(model, data)
            if reused is not None:
                return reused
        return engine.probabilities(self.job(model), encoded, self.backend, noise=self.noise)

    PREFETCH_BYTES = 256 * 2**20
    """Probabilities one `prefetch` may hold until they are read."""

    def prefetch(self, work: list[tuple[list[Model], Data]]) -> int:
        """On the gpu backend, noise-free: each (models, data set)'s probabilities simulated as one
        mutants x inputs batch (`engine.probabilities_many`) and kept until `probs` reads each once,
        PREFETCH_BYTES in all; how many were made. A new call first drops what an earlier one left
        unread. Elsewhere nothing (numpy resumes each mutant from the original's checkpoints, Aer
        runs one circuit at a time)."""
        self._batched.clear()
        if not self.backend.capabilities.mutant_batching or self.noise is not None or self.original.is_kernel:
            return 0
        pre = self.original.manifest["preprocessing"]
        budget, made = self.PREFETCH_BYTES, 0
        for models, data in work:
            same = [m for m in models if m is not self.original and m.manifest["preprocessing"] == pre]
            if len(same) < 2:
                continue
            per = len(data.encoded) * 8 * max(2 ** len(self.job(m).measured) for m in same)
            take = same[: budget // max(per, 1)]
            if len(take) < 2:  # the budget is spent: the rest run one by one
                continue
            budget -= per * len(take)
            for m, p in zip(take, engine.probabilities_many([self.job(m) for m in take], data.encoded, self.backend)):
                self._batched[(program.content_key(self.job(m)), data.fingerprint)] = p
            made += len(take)
        return made

    prefix_reuse = True
    fuse = True
    """Resume mutants from the original's cached states (bit-identical) and, with `fuse`, finish them
    with its dense suffix unitaries (equal to rounding)."""

    def __getstate__(self) -> dict:
        """Workers get the settings, not the client's cached batch states (they rebuild their own)."""
        return dict(self.__dict__, _prefix={}, _reduced_cache=[], _batched={}, _forms=OrderedDict())

    def _resumed(self, model: Model, data: Data) -> np.ndarray | None:
        """A mutant resumed from the original's checkpoints (`qmltest.simulate.resume`)."""
        key = data.fingerprint
        if key not in self._prefix:
            orig = self.job(self.original)
            if not program.reusable(orig, data.encoded):
                return None
            self._prefix.clear()  # one data set's checkpoints at a time: memory stays bounded
            self._prefix[key] = resume.Checkpoints(orig, data.encoded, self.fuse)
        return self._prefix[key].probabilities(self.job(model))

    data_forms = True
    """Class probabilities of DFC mutants from Gram forms where they apply (off: per mutant)."""
    FORMS = 512
    """Gram forms kept (`linearity`): 16 qubits, 100 inputs, a feature pair: 77 kB each."""

    def data_change(self, model: Model) -> tuple[int, ...] | None:
        """The input columns a DFC mutant changes, where its class probabilities may come from a
        Gram form (`linearity`, whose states the numpy kernels simulate whatever the backend): noise-free, a
        class readout of more than `readout.BUCKET_OUTCOMES` outcomes (where the evidence already
        draws from class buckets, so the draws are the per-mutant path's), one feature change
        appended to the original's preprocessing. None elsewhere."""
        pre, orig = model.manifest["preprocessing"], self.original.manifest["preprocessing"]
        if (
            not self.data_forms
            or self.noise is not None
            or len(pre) != len(orig) + 1
            or pre[:-1] != orig
            or pre[-1].get("op") != "feature_change"
            or not self._bucketed_class_readout
        ):
            return None
        return tuple(sorted({int(i) for i in pre[-1]["indices"]}))

    @cached_property
    def _bucketed_class_readout(self) -> bool:
        """The original's readout is a class readout past `readout.BUCKET_OUTCOMES` outcomes (checked
        once: on 2^16 outcomes the check took 8 ms a mutant)."""
        m = self.original.readout_matrix
        return m.shape[0] > readout.BUCKET_OUTCOMES and readout.is_class_readout(m)

    def _mutant_per_state(self, inputs: int) -> float:
        """What simulating one mutant on this backend costs against one Gram-form state on numpy's
        kernels, by the measured tables (`Backend.mutant_us`): 1 on numpy, 0.72 for Aer at 20
        qubits on 2 cores (a form then pays off only where it saves that much more)."""
        from qmltest.simulate.backends import REGISTRY

        numpy = REGISTRY.get("numpy")
        if self.backend is numpy:
            return 1.0
        job = self.job(self.original)
        shape = (job.num_qubits, len(job.measured), len(job.ops), inputs)
        mine = self.backend.mutant_us(*shape)
        return 1.0 if mine == float("inf") else mine / numpy.mutant_us(*shape)

    def prepare_data_changes(self, models: list[Model], data: Data) -> int:
        """Gram forms for the feature sets `models` change, built where they cost fewer
        simulations than they save: all of them together when the shared states (`linearity.forms`)
        cost no more than the mutants they serve, else each set that at least 2^|Q| of the models
        change. How many were built. Kept per data set, FORMS in all."""
        if self.original.is_kernel:  # a kernel row is no Gram form of the inputs' states
            return 0
        counts = Counter(k for k in map(self.data_change, models) if k is not None)
        job = program.of_model(self.original)
        todo: dict[tuple[int, ...], tuple[linearity.Split, int]] = {}
        for cols, count in counts.items():
            key = (data.fingerprint, cols)
            if key in self._forms or max(cols) >= len(job.inputs):
                continue
            s = linearity.split(job, cols)
            if s is None:
                self._forms[key] = None
                continue
            todo[cols] = (s, count)
        w = self._mutant_per_state(len(data.encoded))  # a mutant simulated, against one form state
        if sum(c for _, c in todo.values()) * w < linearity.cost([s for s, _ in todo.values()]):
            todo = {cols: (s, c) for cols, (s, c) in todo.items() if c * w >= s.size}
        if not todo:
            return 0
        built = linearity.forms(job, [s for s, _ in todo.values()], data.encoded, self.original.readout_matrix)
        for cols, f in zip(todo, built):
            self._forms[(data.fingerprint, cols)] = f
        while len(self._forms) > self.FORMS:
            self._forms.popitem(last=False)
        return len(built)

    def mutant_outcomes(self, mutant: Model, data: Data) -> tuple[np.ndarray | None, np.ndarray, str]:
        """(probabilities, their readout matrix, status) of a mutant: its class buckets from a Gram
        form where `prepare_data_changes` made one (the matrix then `reduced`'s), else its
        outcome probabilities (`mutant_probs`) and its own readout matrix. Inputs that leave the
        changed qubits' local states as they were up to a phase give the original's outcome
        probabilities (`Form.unchanged`: equivalent, as the per-mutant path finds); a form's result
        otherwise within the equivalence tolerance of the original's on every outcome of a class is
        handed to the per-outcome test, so the status is the per-mutant path's."""
        cols = self.data_change(mutant) if self._forms else None
        form = self._forms.get((data.fingerprint, cols)) if cols is not None else None
        if form is not None and data.raw is not None:
            try:
                encoded = mutant.encode(data.raw)
            except QmlTestError:
                encoded = None
            others = np.ones(data.encoded.shape[1], bool)
            others[list(cols)] = False  # type: ignore[arg-type]
            if encoded is not None and np.array_equal(encoded[:, others], data.encoded[:, others]):
                if form.unchanged(encoded):  # the reference's state up to a phase on every input
                    return self.original_probs(data), self.matrix(self.original), "equivalent"
                base, bmat = self.reduced(self.original_probs(data), self.matrix(self.original))
                q = form.probabilities(encoded)
                probs = (
                    q
                    if bmat.shape[0] == q.shape[1]
                    else np.concatenate([q, np.clip(1.0 - q.sum(axis=1, keepdims=True), 0.0, None)], axis=1)
                )
                if max_abs_diff(probs, base) >= EQUIVALENCE_TOL * self.original.readout_matrix.shape[0]:
                    return probs, bmat, "ok"
        probs, status = self.mutant_probs(mutant, data)
        return probs, self.matrix(mutant), status

    def original_probs(self, data: Data) -> np.ndarray:
        key = data.fingerprint
        if key not in self._orig_probs:
            self._orig_probs[key] = self.probs(self.original, data)
        return self._orig_probs[key]

    def reduced(self, probs: np.ndarray, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities, readout matrix) with the outcomes of a class readout merged per class
        (and one bucket for no class): votes count classes, so the draws have the same distribution,
        and on a 16-qubit all-measured readout every pass over 2^16 outcomes per call cost more
        than the simulation. Other readouts pass through. Kept for the last few arrays (a
        candidate's and the original's probabilities are read for every class)."""
        if matrix.shape[0] <= matrix.shape[1] + 1:
            return probs, matrix
        hit = next((h for h in self._reduced_cache if h[0] is probs and h[1] is matrix), None)
        if hit is None:
            if not readout.is_class_readout(matrix):
                return probs, matrix
            q = readout.class_q(probs, matrix)
            k = matrix.shape[1]
            if np.all(matrix.sum(axis=1) == 1):
                out = (q, np.eye(k))
            else:
                out = (
                    np.concatenate([q, np.clip(1.0 - q.sum(axis=1, keepdims=True), 0.0, None)], axis=1),
                    np.vstack([np.eye(k), np.zeros((1, k))]),
                )
            if len(self._reduced_cache) >= 4:
                self._reduced_cache.pop(0)
            hit = (probs, matrix, *out)
            self._reduced_cache.append(hit)
        return hit[2], hit[3]

    def mutant_probs(self, mutant: Model, data: Data) -> tuple[np.ndarray | None, str]:
        """(probabilities, status): status is ok, equivalent or incompetent (the mutant cannot run)."""
        if mutant is self.original:  # a null copy: the original's probabilities, the same bits
            return self.original_probs(data), "equivalent"
        try:
            p = self.probs(mutant, data)
        except QmlTestError as exc:
            return None, f"incompetent: {exc}"
        base = self.original_probs(data)
        if p.shape != base.shape:  # the readout changed (remove-measure): compare class probabilities
            p_cls = readout.class_probabilities(p, self.matrix(mutant), mutant.num_classes)
            base = readout.class_probabilities(base, self.matrix(self.original), self.original.num_classes)
            return p, "equivalent" if max_abs_diff(p_cls, base) < EQUIVALENCE_TOL else "ok"
        if max_abs_diff(p, base) < EQUIVALENCE_TOL:
            return p, "equivalent"
        return p, "ok"
