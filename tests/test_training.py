"""Adjoint gradients equal finite differences; readout tables and the loss behave as documented."""

from __future__ import annotations

import numpy as np
import pytest

from qmltest.errors import InputError
from qmltest.model import readout
from qmltest.simulate import statevector
from qmltest.zoo import architectures as archs
from qmltest.zoo.train import loss_and_lambda


def _loss(built, ops, weights, feats, psi0, y, cmat):
    values = {p: np.asarray(v) for p, v in zip(built.weights, weights)}
    values.update({p: feats[:, i] for i, p in enumerate(built.features)})
    psi = statevector.run(ops, psi0, values, built.num_qubits)
    loss, lam, _ = loss_and_lambda(psi, y, built.measured, built.num_qubits, cmat)
    return loss, lam, psi, values


@pytest.mark.parametrize("arch", ["zzfm_su2", "drnn", "qcnn", "ccqc"])
def test_adjoint_gradient_matches_finite_differences(arch: str) -> None:
    rng = np.random.default_rng(4)
    built = archs.get(arch).build(2)
    n = built.num_qubits
    ops = statevector.compile_circuit(built.circuit())
    batch = 3
    feats = rng.uniform(0, np.pi, (batch, len(built.features)))
    if built.encoding == "amplitude":
        psi0 = rng.normal(size=(batch, 2**n)) + 0j
        psi0 /= np.linalg.norm(psi0, axis=1, keepdims=True)
    else:
        psi0 = statevector.zero_states(batch, n)
    y = np.array([0, 1, 0])
    cmat = readout.class_matrix(readout.table(built.readout, len(built.measured), 2), 2)
    w = rng.uniform(-1, 1, len(built.weights))
    _, lam, psi, values = _loss(built, ops, w, feats, psi0, y, cmat)
    per_input, grad = statevector.adjoint_gradient(ops, psi, lam, values, n, list(built.weights) + built.features)
    for k in rng.choice(len(w), 4, replace=False):
        h = 1e-6
        wp, wm = w.copy(), w.copy()
        wp[k] += h
        wm[k] -= h
        fd = (_loss(built, ops, wp, feats, psi0, y, cmat)[0] - _loss(built, ops, wm, feats, psi0, y, cmat)[0]) / (2 * h)
        assert grad[k] == pytest.approx(fd, abs=1e-6)
    if built.features:  # per-input gradient with respect to a feature angle
        i, f = 1, 0
        fp, fm = feats.copy(), feats.copy()
        fp[i, f] += 1e-6
        fm[i, f] -= 1e-6
        fd = (_loss(built, ops, w, fp, psi0, y, cmat)[0] - _loss(built, ops, w, fm, psi0, y, cmat)[0]) / 2e-6
        assert per_input[i, len(w) + f] == pytest.approx(fd, abs=1e-6)


def test_readout_tables() -> None:
    assert readout.table("basis", 2, 3) == [0, 1, 2, -1]
    assert readout.table("parity", 2, 2) == [0, 1, 1, 0]
    assert readout.table("modulo", 2, 3) == [0, 1, 2, 0]
    with pytest.raises(InputError):
        readout.table("parity", 2, 3)
    probs = np.array([[0.1, 0.2, 0.3, 0.4]])
    np.testing.assert_allclose(readout.class_probabilities(probs, [0, 1, 2, -1], 3), [[1 / 6, 2 / 6, 3 / 6]])
    assert readout.predict(np.array([[0.1, 0.2, 0.4, 0.3]]), [0, 1, 1, 0], 2).tolist() == [1]
    counts = np.array([[10, 0, 0, 90], [0, 60, 40, 0]])
    assert readout.predict(counts, [0, 1, 2, -1], 3).tolist() == [0, 1]
