"""Suites and attacks: confidence ordering, skew ratio, correctness of every kept input, seeded
rebuilds identical, FGSM along the sign of the analytic gradient on a 2-qubit toy model."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit import qasm3
from qiskit.circuit import Parameter, QuantumCircuit
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest import attacks, suites
from qmltest.data import datasets
from qmltest.evaluate import label_indices
from qmltest.model import artifact
from qmltest.simulate.runner import model_probabilities

MODEL = "data/models/qcl-mnist01"


@pytest.fixture(scope="module")
def mnist():
    model = artifact.load(MODEL)
    x, y = datasets.select("mnist", "test", model.classes)
    return model, x, y


def test_hconf_above_lconf_and_all_correct(mnist) -> None:
    model, x, y = mnist
    conf = {}
    for kind in ("ori", "hconf", "lconf"):
        idx = suites.build(model, x, y, kind, 30, 0)
        assert np.all(model.predict(model_probabilities(model, x[idx])) == label_indices(model, y[idx]))
        conf[kind] = suites.confidence(model, x[idx], y[idx]).mean()
    assert conf["hconf"] > conf["ori"] > conf["lconf"]


def test_skewed_ratio_and_small_size(mnist) -> None:
    model, x, y = mnist
    skew = suites.build(model, x, y, "skewed", 40, 0)
    assert np.bincount(label_indices(model, y[skew])).tolist() == [40, 4]
    assert len(suites.build(model, x, y, "small", 40, 0)) == 40


def test_cli_suites_rebuild_identical_and_aug_correct(tmp_path) -> None:
    runner = CliRunner()
    for name in ("a", "b"):
        result = runner.invoke(
            app,
            [
                "suite",
                "build",
                MODEL,
                "--kind",
                "aug",
                "--per-class",
                "10",
                "--seed",
                "3",
                "--out",
                str(tmp_path / f"{name}.npz"),
            ],
        )
        assert result.exit_code == 0, result.output
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    model = artifact.load(MODEL)
    with np.load(tmp_path / "a.npz") as z:
        assert str(z["kind"]) == "aug" and np.all(z["source_index"] == -1)
        assert np.all(model.predict(model_probabilities(model, z["x"])) == label_indices(model, z["y"]))
    shown = runner.invoke(app, ["suite", "show", str(tmp_path / "a.npz")])
    assert shown.exit_code == 0 and "kind aug" in shown.output
    assert (
        runner.invoke(app, ["suite", "build", MODEL, "--kind", "weird", "--out", str(tmp_path / "c.npz")]).exit_code
        == 2
    )


def test_fgsm_follows_sign_of_analytic_gradient(tmp_path) -> None:
    """rx(a) q0, rx(b) q1, cx: q1 reads q0 xor q1, P1 = p0 (1 - p1) + (1 - p0) p1 with p = sin^2(angle/2)."""
    a, b = Parameter("x_000"), Parameter("x_001")
    qc = QuantumCircuit(2, 1)
    qc.rx(a, 0)
    qc.rx(b, 1)
    qc.cx(0, 1)
    qc.measure(1, 0)
    path = tmp_path / "toy.qasm"
    path.write_text(qasm3.dumps(qc))
    model = artifact.load(path)  # inferred: parity readout of qubit 1, classes [0, 1]
    x = np.array([[0.4, 1.1], [2.0, 0.3], [0.9, 2.5]])
    y = np.array([0, 1, 0])
    p0, p1 = np.sin(x[:, 0] / 2) ** 2, np.sin(x[:, 1] / 2) ** 2
    dP_da, dP_db = (1 - 2 * p1) * np.sin(x[:, 0]) / 2, (1 - 2 * p0) * np.sin(x[:, 1]) / 2
    sign = np.where(y == 0, 1.0, -1.0)  # loss -log P(y) grows with P1 when y = 0
    analytic = np.stack([sign * dP_da, sign * dP_db], axis=1)
    grad = attacks.input_gradient(model, x, y)
    np.testing.assert_array_equal(np.sign(grad), np.sign(analytic))
    adv = attacks.attack(model, x, y, "fgsm", 0.1, 0.0, np.pi, np.random.default_rng(0))
    np.testing.assert_allclose(adv, np.clip(x + 0.1 * np.pi * np.sign(analytic), 0.0, np.pi))


def test_jsma_dlfuzz_bounds_and_nes_agrees_with_exact(mnist) -> None:
    model, x, y = mnist
    x, yi = x[:6], label_indices(model, y[:6])
    high = float(x.max())
    adv = attacks.jsma(model, x, yi, 1.0, 0.1, 0.0, high)
    changed = np.count_nonzero(adv != x, axis=1)
    assert np.all(changed <= int(0.1 * x.shape[1]))
    fuzzed = attacks.dlfuzz(model, x, yi, 5, 0.02, 0.1, 0.0, high)
    assert np.all(np.abs(fuzzed - x) <= 0.1 * high + 1e-9)
    # NES from shots points the same way as the exact gradient (positive correlation per input)
    exact = attacks.input_gradient(model, x, yi)
    nes = attacks.nes_gradient(model, x, yi, 100_000, 40, 0.01 * high, np.random.default_rng(0))
    cos = np.sum(exact * nes, axis=1) / (np.linalg.norm(exact, axis=1) * np.linalg.norm(nes, axis=1))
    # random directions in d = 784 have cosine ~ N(0, 1/d): demand 3 standard deviations on the median
    assert np.all(cos > 0) and np.median(cos) > 3 / np.sqrt(x.shape[1])


def test_meyer_wallach_value_and_gradient() -> None:
    from qiskit.quantum_info import Statevector, partial_trace

    rng = np.random.default_rng(0)
    n = 3
    psi = rng.normal(size=(2, 8)) + 1j * rng.normal(size=(2, 8))
    psi /= np.linalg.norm(psi, axis=1, keepdims=True)
    q, g = attacks.meyer_wallach(psi, n)
    for s, value in zip(psi, q):
        rhos = [partial_trace(Statevector(s), [j for j in range(n) if j != k]).data for k in range(n)]
        assert value == pytest.approx(2 * (1 - sum(np.real(np.trace(r @ r)) for r in rhos) / n))
    bell = np.zeros((1, 4), complex)
    bell[0, [0, 3]] = 1 / np.sqrt(2)
    assert attacks.meyer_wallach(bell, 2)[0][0] == pytest.approx(1.0)  # maximally entangled
    d = rng.normal(size=8) + 1j * rng.normal(size=8)
    qp, _ = attacks.meyer_wallach(psi[:1] + 1e-6 * d, n)
    qm, _ = attacks.meyer_wallach(psi[:1] - 1e-6 * d, n)
    assert (qp - qm)[0] / 2e-6 == pytest.approx(2 * np.real(np.vdot(g[0], d)), rel=1e-6)
