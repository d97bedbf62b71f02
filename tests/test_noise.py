"""Noise: analytic channel outputs on Aer, crosstalk only on coupled spectators, zero-strength equals
noise-free exactly, readout confusion, and invalid configs refused with the key named."""

from __future__ import annotations

import math

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.errors import InputError
from qmltest.noise.build import apply_readout, with_random_insertion
from qmltest.noise.config import from_dict, load
from qmltest.simulate import engine, program
from qmltest.simulate.runner import model_probabilities


def run(qc: QuantumCircuit, measured: tuple[int, ...], tables: dict) -> np.ndarray:
    return engine.probabilities(program.Circuit(qc, measured, ()), np.zeros((1, 0)), noise=from_dict(tables))[0]


@pytest.mark.parametrize("p", [0.02, 0.1, 0.4])
def test_depolarizing_one_qubit_analytic(p: float) -> None:
    qc = QuantumCircuit(1)
    qc.x(0)  # rho -> (1 - p) |1><1| + p I/2 after the gate
    np.testing.assert_allclose(run(qc, (0,), {"depolarizing": {"p1": p}}), [p / 2, 1 - p / 2], atol=1e-12)


def test_thermal_relaxation_decays_exp_t_over_t1() -> None:
    t1, dt = 50e-6, 5e-6
    for idles in (0, 3, 9):
        qc = QuantumCircuit(1)
        qc.x(0)
        for _ in range(idles):
            qc.id(0)
        tables = {"thermal_relaxation": {"t1": t1, "t2": 60e-6, "time_1q": dt, "time_2q": dt}}
        p1 = run(qc, (0,), tables)[1]
        assert p1 == pytest.approx(math.exp(-(idles + 1) * dt / t1), abs=1e-9)


def test_crosstalk_changes_only_the_coupled_spectator() -> None:
    qc = QuantumCircuit(3)
    qc.x(1)
    qc.h(2)
    qc.cx(0, 1)  # qubit 2 is coupled to 1 on a line: RZZ(theta) on (1, 2) after the gate
    qc.h(2)
    theta = 0.3
    noisy = run(qc, (0, 1, 2), {"crosstalk": {"zz_angle": theta, "coupling": "line"}})
    clean = engine.probabilities(program.Circuit(qc, (0, 1, 2), ()), np.zeros((1, 0)))[0]
    marg = lambda p, q: p.reshape(2, 2, 2).sum(axis=tuple(a for a in range(3) if a != 2 - q))  # noqa: E731
    for q in (0, 1):
        np.testing.assert_allclose(marg(noisy, q), marg(clean, q), atol=1e-12)
    # spectator in |+>, control-1 partner: phase exp(-i theta/2 Z Z) flips it with sin^2(theta/2)
    assert marg(noisy, 2)[1] == pytest.approx(math.sin(theta / 2) ** 2, abs=1e-12)
    assert marg(clean, 2)[1] == pytest.approx(0.0, abs=1e-12)
    far = run(qc, (0, 1, 2), {"crosstalk": {"zz_angle": theta, "coupling": [[0, 1]]}})
    np.testing.assert_allclose(far, clean, atol=1e-12)  # no coupled spectator: nothing changes


def test_zero_strength_config_equals_noise_free_exactly(qcl_model) -> None:
    cfg = load("configs/noise/zero.toml")
    x = np.random.default_rng(0).uniform(0, 1, (4, 256))
    assert np.array_equal(model_probabilities(qcl_model, x, noise=cfg), model_probabilities(qcl_model, x))


def test_readout_confusion_by_hand() -> None:
    cfg = from_dict({"readout": {"p01": 0.1, "p10": 0.2}})
    probs = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    out = apply_readout(probs, cfg)
    np.testing.assert_allclose(out[0], [0.81, 0.09, 0.09, 0.01])  # |00> read as 00 with 0.9 * 0.9
    np.testing.assert_allclose(out[1], [0.04, 0.16, 0.16, 0.64])
    np.testing.assert_allclose(out.sum(axis=1), 1.0)


def test_random_insertion_is_seeded_and_sparse() -> None:
    qc = QuantumCircuit(2)
    for _ in range(300):
        qc.rx(0.1, 0)
        qc.cx(0, 1)
    tables = {
        "noise": {"mode": "random-insertion", "insertion_probability": 0.05, "seed": 3},
        "depolarizing": {"p1": 0.1, "p2": 0.1},
    }
    a = with_random_insertion(qc, from_dict(tables))
    b = with_random_insertion(qc, from_dict(tables))
    inserted = len(a.data) - len(qc.data)
    assert inserted == len(b.data) - len(qc.data)
    assert 0.02 * 600 < inserted < 0.09 * 600


@pytest.mark.parametrize(
    "text, key",
    [
        ("[thermal_relaxation]\nt1 = 1e-5\nt2 = 3e-5\ntime_1q = 1e-8\ntime_2q = 1e-8\n", "thermal_relaxation.t2"),
        ("[depolarizing]\np1 = 1.5\n", "depolarizing.p1"),
        ("[cosmic_rays]\nrate = 0.1\n", "cosmic_rays"),
        ("[bit_flip]\nq = 0.1\n", "bit_flip.q"),
        ('[noise]\nmode = "sometimes"\n', "noise.mode"),
    ],
)
def test_invalid_configs_name_the_key_and_exit_2(tmp_path, iris_model, text, key) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=key.replace(".", r"\.")):
        load(path)
    result = CliRunner().invoke(app, ["evaluate", str(iris_model), "--data", "iris", "--noise", str(path)])
    assert result.exit_code == 2 and f"'{key}'" in result.output


def test_shipped_configs_load_and_show(qcl_model) -> None:
    runner = CliRunner()
    for name in ("depolarizing-1pct", "thermal", "crosstalk", "hardware-like", "zero"):
        load(f"configs/noise/{name}.toml")
        result = runner.invoke(
            app, ["noise", "show", f"configs/noise/{name}.toml", "--model", "data/models/zfm-ra-iris"]
        )
        assert result.exit_code == 0, result.output


def test_noisy_evaluate_lowers_confidence_but_runs(iris_model) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(iris_model),
            "--data",
            "iris",
            "--exact",
            "--noise",
            "configs/noise/hardware-like.toml",
            "--json",
            "-",
        ],
    )
    assert result.exit_code == 0, result.output
    assert '"noise"' in result.output and "hardware-like" in result.output


def test_fake_backend_key_needs_the_hardware_extra(tmp_path, monkeypatch) -> None:
    """[backend] fake: one clear line naming the extra when qiskit-ibm-runtime is absent; with it, a
    FakeManilaV2 noise model gives normalized probabilities on a 4-qubit model."""
    import sys

    from qmltest.errors import InputError
    from qmltest.model import artifact
    from qmltest.noise.config import from_dict

    model = artifact.load("data/models/zfm-ra-iris")
    x = np.array([[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]])
    cfg = from_dict({"backend": {"fake": "FakeManilaV2"}})
    try:
        import qiskit_ibm_runtime  # noqa: F401
    except ImportError:
        with pytest.raises(InputError, match=r"qmltest\[hardware\]"):
            model_probabilities(model, x, noise=cfg)
        return
    probs = model_probabilities(model, x, noise=cfg)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-9)
    assert np.abs(probs - model_probabilities(model, x)).max() > 1e-4  # the device noise changes the outputs
    monkeypatch.setitem(sys.modules, "qiskit_ibm_runtime", None)
    with pytest.raises(InputError, match=r"qmltest\[hardware\]"):
        model_probabilities(model, x, noise=from_dict({"backend": {"fake": "FakeManilaV2"}}))
