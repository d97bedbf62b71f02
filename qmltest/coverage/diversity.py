"""Input diversity (QCov Sec. 4.2): JS divergence between the fidelity distribution of the input
states and that of Haar-random states; lower means a more diverse suite."""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError
from qmltest.model import ir as irmod
from qmltest.model.artifact import Model
from qmltest.simulate import statevector


def input_states(model: Model, raw: np.ndarray) -> np.ndarray:
    """States after encoding: the prepared amplitude state, or the leading feature-map layers on |0>."""
    encoded = model.encode(raw)
    if model.amplitude:
        return encoded
    leading = []
    for layer in model.ir.layers:
        if layer.kind != "feature_map":
            break
        leading.append(layer)
    if not leading:
        raise InputError("the model has no leading feature-map layer: no input state to compare")
    sub = irmod.ModelIR(model.ir.num_qubits, tuple(leading), model.ir.measured, model.ir.inputs)
    ops = statevector.compile_circuit(irmod.unitary_part(sub))
    n = model.ir.num_qubits
    values = {p: encoded[:, i] for i, p in enumerate(model.ir.inputs)}
    return statevector.run(ops, statevector.zero_states(len(encoded), n), values, n, zero=True)


def pairwise_fidelities(states: np.ndarray) -> np.ndarray:
    """|<a|b>|^2 for every pair a < b."""
    if len(states) < 2:
        raise InputError("diversity needs at least two inputs")
    gram = np.abs(states.conj() @ states.T) ** 2
    return gram[np.triu_indices(len(states), 1)]


def haar_bin_masses(dim: int, edges: np.ndarray) -> np.ndarray:
    """Probability of each fidelity bin for Haar-random pure states: P(F) = (d-1)(1-F)^(d-2)."""
    cdf = 1.0 - (1.0 - edges) ** (dim - 1)
    return np.diff(cdf)


def js_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence in bits (0 identical, 1 disjoint)."""
    p = p / p.sum()
    q = q / q.sum()
    m = (p + q) / 2

    def kl(a: np.ndarray, b: np.ndarray) -> float:
        mask = a > 0
        return float(np.sum(a[mask] * np.log2(a[mask] / b[mask])))

    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def diversity(states: np.ndarray, bins: int = 100) -> dict:
    fid = pairwise_fidelities(states)
    edges = np.linspace(0.0, 1.0, bins + 1)
    hist, _ = np.histogram(fid, bins=edges)
    haar = haar_bin_masses(states.shape[1], edges)
    return {
        "js_divergence": js_divergence(hist.astype(float), haar),
        "inputs": int(len(states)),
        "pairs": int(len(fid)),
        "mean_fidelity": float(fid.mean()),
        "haar_mean_fidelity": 1.0 / states.shape[1],
        "bins": bins,
    }
