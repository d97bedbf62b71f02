"""Kernel models: a fidelity quantum kernel with a trained SVM over it (qiskit-machine-learning's
QSVC, PegasosQSVC and QSVR), read as one linear readout over kernel outcomes.

The model's circuit is the kernel's feature map U(x); its readout (manifest kind ``kernel``) holds
the support vectors s_j (as the feature map's inputs), their dual coefficients c_j and the
intercept b. The decision is f(x) = sum_j c_j k(x, s_j) + b with the fidelity kernel
k(x, s) = |<0|U(s)^dag U(x)|0>|^2 (Havlicek et al., Nature 567, 2019, Eq. 2; qiskit-ml's
FidelityQuantumKernel with ComputeUncompute), the probability that the compute-uncompute circuit
U(s_j)^dag U(x) returns to |0...0>. A binary classifier predicts its second class when f > 0
(sklearn's SVC and PegasosQSVC alike; Pegasos's +1 kernel offset is folded into b); a regressor
(QSVR) outputs f.

Each input's kernel row is read as outcomes of the m compute-uncompute circuits, one block of two
per support vector: (k_j / m, (1 - k_j) / m), each circuit chosen with weight 1/m as the bases of a
multi-basis readout are. f is linear in those outcomes (each block sums to 1/m), so the class
scores are `probs @ W` as for every other readout, exact or from shot counts: with --shots S an
input's S shots are spread over its m circuits.
"""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError

FIELDS = ("support_vectors", "dual_coef", "intercept")


def decision_column(dual_coef: list[float] | np.ndarray, intercept: float) -> np.ndarray:
    """(2m,) column w with kernel-outcome rows @ w = f(x): row (j, returned) m c_j + b, row
    (j, not returned) b."""
    c = np.asarray(dual_coef, dtype=float).ravel()
    m = len(c)
    col = np.full((m, 2), float(intercept))
    col[:, 0] += m * c
    return col.reshape(-1)


def matrix(spec: dict, num_classes: int) -> np.ndarray:
    """The score matrix of a kernel readout: [-f/2, f/2] for two classes (the argmax is f's sign,
    a tie f = 0 to the first class, as sklearn's `f > 0`), or f's column for a regressor."""
    f = decision_column(spec["dual_coef"], spec["intercept"])[:, None]
    return f if num_classes == 0 else np.concatenate([-f / 2, f / 2], axis=1)


def check(spec: dict, num_features: int, num_qubits: int, num_classes: int) -> None:
    """Support vectors (m, F) of finite feature-map inputs, m dual coefficients, one intercept,
    every qubit read; two classes or a regressor (one-vs-one voting over more is not linear)."""
    missing = [k for k in FIELDS if k not in spec]
    if missing:
        raise InputError(f"a kernel readout needs {', '.join(missing)}")
    sv = np.asarray(spec["support_vectors"], dtype=float)
    c = np.asarray(spec["dual_coef"], dtype=float)
    if sv.ndim != 2 or sv.shape[0] == 0 or sv.shape[1] != num_features:
        raise InputError(
            f"kernel support_vectors must be (m, {num_features}) for {num_features} features, got {sv.shape}"
        )
    if c.shape != (sv.shape[0],):
        raise InputError(f"kernel dual_coef must hold one number per support vector ({sv.shape[0]}), got {c.shape}")
    values = np.concatenate([sv.ravel(), c, [float(spec["intercept"])]])
    if not np.all(np.isfinite(values)):
        raise InputError("kernel support_vectors, dual_coef and intercept must be finite")
    if list(spec.get("qubits", [])) != list(range(num_qubits)):
        raise InputError(f"a kernel readout reads every qubit: readout.qubits must be {list(range(num_qubits))}")
    if num_classes not in (0, 2):
        raise InputError(
            f"a kernel classifier of {num_classes} classes decides by one-vs-one votes, which qmltest does not "
            "read: import binary kernel classifiers (or QSVR)"
        )


def spec_of(
    support_vectors: np.ndarray, dual_coef: np.ndarray, intercept: float, num_qubits: int, estimator: str
) -> dict:
    """The manifest readout of a kernel model."""
    return {
        "kind": "kernel",
        "qubits": list(range(num_qubits)),
        "estimator": estimator,
        "support_vectors": np.asarray(support_vectors, dtype=float).tolist(),
        "dual_coef": np.asarray(dual_coef, dtype=float).ravel().tolist(),
        "intercept": float(intercept),
    }
