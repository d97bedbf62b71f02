"""A kernel model's outcomes (`qmltest.model.kernel`): the feature map's states for the inputs
and for the support vectors, their fidelities, read as the m compute-uncompute circuits' outcomes.

Exact on the numpy statevector engine: the kernel is a Gram product of two state batches, so m
support vectors cost m + N feature-map runs, not m N compute-uncompute circuits. The support
vectors' states are kept per model (a mutant of the feature map has its own).
"""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError
from qmltest.simulate import program, statevector


def states(model: object, encoded: np.ndarray) -> np.ndarray:
    """|phi(x)> = U(x)|0...0> for each row of feature-map inputs (N, 2^n)."""
    job = program.of_model(model)
    n = model.ir.num_qubits  # type: ignore[attr-defined]
    values = statevector.feature_values(list(model.ir.inputs), np.asarray(encoded, dtype=float))  # type: ignore[attr-defined]
    return statevector.run(job.ops, statevector.zero_states(len(encoded), n), values, n, zero=True)


def fidelities(model: object, encoded: np.ndarray) -> np.ndarray:
    """k(x_i, s_j) = |<phi(s_j)|phi(x_i)>|^2, (N, m)."""
    memo = model.memo  # type: ignore[attr-defined]
    if "kernel/support" not in memo:
        sv = np.asarray(model.manifest["readout"]["support_vectors"], dtype=float)  # type: ignore[attr-defined]
        memo["kernel/support"] = states(model, sv)
    return np.abs(states(model, encoded) @ memo["kernel/support"].conj().T) ** 2


def outcomes(model: object, encoded: np.ndarray, noise: object = None) -> np.ndarray:
    """(N, 2m) outcome probabilities: per support vector (k / m, (1 - k) / m). Noise-free only."""
    if noise is not None:
        raise InputError("a kernel model runs noise-free: its kernel is exact (no --noise or --target)")
    k = np.clip(fidelities(model, encoded), 0.0, 1.0)
    m = k.shape[1]
    return np.stack([k / m, (1.0 - k) / m], axis=2).reshape(len(k), 2 * m)
