"""Run a model on raw inputs: encode, compile (once per model), simulate, in chunks on workers.

The model stays data (`artifact.Model`); this is where it meets a backend. The backend is passed
explicitly, by name or as a `Backend`, to every call and to every worker task: nothing is read
from the environment.
"""

from __future__ import annotations

import numpy as np

from qmltest.errors import SimulatorError
from qmltest.simulate import engine, program
from qmltest.util import parallel

CHUNK_INPUTS = 32
"""Inputs per task when probabilities are computed on workers (noise: ~0.1-0.3 s per input)."""


def model_probabilities(
    model: object,
    raw: np.ndarray,
    backend: object = None,
    register: str = "readout",
    noise: object = None,
    where: object = None,
) -> np.ndarray:
    """Output probabilities (N, 2^m) of a model for raw inputs.

    `backend`: a registry name (default auto) or a `Backend`; `noise`: a NoiseConfig. `where` (a
    `parallel.Plan`) splits the inputs into fixed chunks run as tasks: exact probabilities do not
    depend on how the inputs were split.
    """
    encoded = model.encode(raw)  # type: ignore[attr-defined]
    if register == "readout" and getattr(model, "is_kernel", False):  # what it predicts from: kernel outcomes
        from qmltest.simulate import fidelity

        return fidelity.outcomes(model, encoded, noise)
    job = program.of_model(model, register)
    if where is None or where.local or len(encoded) <= CHUNK_INPUTS:  # type: ignore[attr-defined]
        return engine.probabilities(job, encoded, backend, noise)
    items = [encoded[i : i + CHUNK_INPUTS] for i in range(0, len(encoded), CHUNK_INPUTS)]
    parts = parallel.run_tasks(_probabilities_task, (job, backend, noise), items, where)  # type: ignore[arg-type]
    for part in parts:
        if isinstance(part, parallel.TaskError):
            raise SimulatorError(f"simulating a chunk of inputs failed: {part.message}")
    return np.concatenate(parts)


def _probabilities_task(shared: tuple, encoded: np.ndarray) -> np.ndarray:
    job, backend, noise = shared
    return engine.probabilities(job, encoded, backend, noise)
