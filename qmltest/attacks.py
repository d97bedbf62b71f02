"""Adversarial inputs against a model's own output probabilities (QCov Appendix A, QuanForge 4.3.1).

Gradients are exact: the adjoint method on the batched engine gives dL/d(input state) (amplitude)
or dL/d(feature angle) (angle encoding), then the chain rule runs back through the normalization
and the manifest's linear preprocessing to the raw features. L is the cross-entropy of the true class.
"""

from __future__ import annotations

import numpy as np

from qmltest import readout
from qmltest.artifact import Model
from qmltest.data.preprocess import preprocess, vjp
from qmltest.errors import InputError
from qmltest.simulate import statevector
from qmltest.zoo.train import loss_and_lambda

METHODS = ("fgsm", "random")


def input_gradient(model: Model, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """d(cross-entropy of class y)/d(raw x), one row per input."""
    n = model.ir.num_qubits
    ops = model.job().ops
    encoded = model.encode(x)
    measured = list(model.ir.measured)
    cmat = readout.class_matrix(model.readout_map, model.num_classes)
    if model.amplitude:
        values: dict = {}
        psi0 = encoded
    else:
        values = {p: encoded[:, i] for i, p in enumerate(model.ir.inputs)}
        psi0 = statevector.zero_states(len(x), n)
    psi = statevector.run(ops, psi0, values, n)
    _, lam, _ = loss_and_lambda(psi, y, measured, n, cmat)
    initial: list = []
    per_input, _ = statevector.adjoint_gradient(ops, psi, lam, values, n, list(model.ir.inputs), initial)
    if model.amplitude:
        z = preprocess(model.manifest["preprocessing"], x)
        g = 2.0 * np.real(initial[0])[:, : z.shape[1]]
        norm = np.linalg.norm(z, axis=1, keepdims=True)
        unit = z / norm
        g_z = (g - unit * np.sum(unit * g, axis=1, keepdims=True)) / norm
    else:
        g_z = per_input
    return vjp(model.manifest["preprocessing"], x, g_z) * len(x)  # per-input, not batch-mean, scale


def attack(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    method: str,
    epsilon: float,
    low: float,
    high: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """FGSM (x + eps * range * sign(grad)) or uniform random noise of the same size, clipped."""
    span = high - low
    if method == "fgsm":
        step = epsilon * span * np.sign(input_gradient(model, x, y))
    elif method == "random":
        step = rng.uniform(-epsilon * span, epsilon * span, x.shape)
    else:
        raise InputError(f"unknown attack '{method}' (available: {', '.join(METHODS)})")
    return np.clip(x + step, low, high)


def success_rate(model: Model, x: np.ndarray, x_adv: np.ndarray, y: np.ndarray) -> float:
    """Fraction of originally correct inputs whose adversarial version is misclassified."""
    correct = model.predict(model.probabilities(x)) == y
    if not correct.any():
        return 0.0
    flipped = model.predict(model.probabilities(x_adv[correct])) != y[correct]
    return float(np.mean(flipped))
