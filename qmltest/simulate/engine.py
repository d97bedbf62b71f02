"""The engine: exact probability vectors or shot counts for one program and a batch of inputs.

It checks the inputs, splits a program read in several bases into one job per basis, asks the
backend registry (`backends.REGISTRY`) which backend runs the job, and calls it. Noise-free shots
are drawn from the exact distribution (multinomial), so repeated predictions cost no extra
simulation.
"""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError
from qmltest.simulate import memory, program
from qmltest.simulate.backend import Backend
from qmltest.simulate.backends import REGISTRY


def probabilities(
    job: program.Circuit, encoded: np.ndarray, backend: str | Backend | None = None, noise: object = None
) -> np.ndarray:
    """Exact probabilities (N, 2^m) over the measured qubits for encoded inputs.

    `encoded` is (N, F) feature values for angle encoding, or (N, 2^n) states for amplitude.
    `backend`: a registry name (auto when None) or a Backend; `noise`: a NoiseConfig (all-zero
    configs run noise-free).
    """
    encoded = np.asarray(encoded)
    if not job.amplitude and encoded.shape[1] != len(job.inputs):
        raise InputError(f"wrong feature count: the circuit has {len(job.inputs)} inputs, got {encoded.shape[1]}")
    if job.groups:  # each basis chosen with weight 1/G (readout.observable_columns reads them so)
        parts = [probabilities(g, encoded, backend, noise) for g in job.groups]
        return np.concatenate(parts, axis=1) / len(parts)
    if noise is not None:  # noise models load Aer's noise module: only when a config is given
        from qmltest.noise.build import is_trivial
    noisy = noise is not None and not is_trivial(noise)  # type: ignore[arg-type]
    chosen = REGISTRY.for_run(backend, job, noise if noisy else None)
    if noisy:
        return chosen.noisy(job, encoded, noise)
    memory.check_size(job.num_qubits)
    return chosen.probabilities(job, encoded)


def probabilities_many(
    jobs: list[program.Circuit], encoded: np.ndarray, backend: str | Backend | None = "gpu"
) -> list[np.ndarray]:
    """Exact probabilities of several programs (a model's mutants) on the same encoded inputs, each
    as `probabilities` would return it; the backend batches them where it can (the gpu backend's
    mutants x inputs kernel). Programs read in several bases run one by one."""
    if not jobs:
        return []
    chosen = REGISTRY.for_job(backend, jobs[0])
    out: list[np.ndarray | None] = [None] * len(jobs)
    plain = [i for i, job in enumerate(jobs) if not job.groups]
    for i, job in enumerate(jobs):
        if job.groups:
            out[i] = probabilities(job, encoded, chosen)
    for i, p in zip(plain, chosen.probabilities_many([jobs[i] for i in plain], encoded)):
        out[i] = p
    return out  # type: ignore[return-value]


def estimate(probs: np.ndarray, shots: int | None, rng: np.random.Generator) -> np.ndarray:
    """Exact probabilities, or the frequencies of `shots` multinomial samples per input (what a
    plug-in estimate of any linear readout reads: class scores, <O>, a kernel row)."""
    if shots is None:
        return probs
    return sample_counts(probs, shots, rng) / shots


def sample_counts(probs: np.ndarray, shots: int, rng: np.random.Generator) -> np.ndarray:
    """Shot counts (N, 2^m) drawn from exact probabilities: one multinomial per input. A model
    read in G bases gives (N, G 2^m) rows: each shot picks its basis at random (weight 1/G), an
    unbiased estimate of every observable with shots / G per basis on average."""
    if shots <= 0:
        raise InputError(f"shots must be positive, got {shots}")
    p = np.clip(probs, 0.0, None)
    p = p / p.sum(axis=1, keepdims=True)
    return rng.multinomial(shots, p)
