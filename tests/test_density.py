"""The numpy density-matrix noise engine equals Aer's density matrix within 1e-9: every shipped
noise config, amplitude- and angle-encoded models, mid-circuit dephasing; and it steps aside for
Aer where it would not pay (features re-uploaded to the end, a fake backend's model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qiskit.circuit import Parameter

from qmltest.data import datasets
from qmltest.model import artifact
from qmltest.noise.config import from_dict, load
from qmltest.simulate import density, engine, noisy, program

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p.stem for p in (ROOT / "configs/noise").glob("*.toml") if p.stem != "zero")


def _inputs(name: str, dataset: str, k: int) -> tuple[artifact.Model, np.ndarray]:
    model = artifact.load(ROOT / "data/models" / name)
    x, _ = datasets.select(f"{dataset}:test", "test", model.classes, k, 0)
    return model, model.encode(x)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize(
    "name,dataset", [("qcnn-mnist01", "mnist"), ("zfm-ra-iris", "iris"), ("zzfm-su2-iris", "iris")]
)
def test_numpy_density_matrix_equals_aer(name: str, dataset: str, config: str) -> None:
    model, enc = _inputs(name, dataset, 2)
    cfg = load(ROOT / "configs/noise" / f"{config}.toml")
    assert noisy.numpy_applies(program.of_model(model).circuit, cfg)
    fast = engine.probabilities(program.of_model(model), enc, "numpy", cfg)
    ref = engine.probabilities(program.of_model(model), enc, "aer", cfg)
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast.sum(axis=1), 1.0, atol=1e-9)


def test_qcl_under_depolarizing_equals_aer() -> None:
    model, enc = _inputs("qcl-mnist01", "mnist", 2)
    cfg = load(ROOT / "configs/noise/depolarizing-1pct.toml")
    fast = engine.probabilities(program.of_model(model), enc, "numpy", cfg)
    np.testing.assert_allclose(fast, engine.probabilities(program.of_model(model), enc, "aer", cfg), rtol=0, atol=1e-9)


def _mid_circuit() -> program.Circuit:
    x = [Parameter("x0"), Parameter("x1")]
    qc = QuantumCircuit(3)
    qc.h(0)
    qc.ry(x[0], 1)
    qc.cx(0, 1)
    qc.measure_all(add_bits=True, inplace=True)  # replaced below by a single mid-circuit measure
    body = QuantumCircuit(3, 1)
    for inst in qc.data[:3]:
        body.append(inst)
    body.measure(1, 0)  # outcome unused: dephasing
    body.rx(2 * x[1], 2)
    body.cx(1, 2)
    body.crz(0.4, 2, 0)
    body.ry(0.3, 0)
    return program.Circuit(body, (0, 2), tuple(x))


@pytest.mark.parametrize(
    "tables",
    [
        {"depolarizing": {"p1": 0.02, "p2": 0.05}},
        {"depolarizing": {"p1": 0.01, "p2": 0.02}, "crosstalk": {"zz_angle": 0.1, "pauli_p": 0.05}},
        {"amplitude_damping": {"gamma": 0.05}, "phase_damping": {"lambda": 0.03}, "readout": {"p01": 0.02}},
    ],
    ids=["depolarizing", "depolarizing+crosstalk", "damping+readout"],
)
def test_mid_circuit_dephasing_equals_aer(tables: dict) -> None:
    job = _mid_circuit()
    enc = np.array([[0.3, -1.2], [2.0, 0.7], [-0.4, 0.1]])
    cfg = from_dict(tables)
    fast = engine.probabilities(job, enc, "numpy", cfg)
    np.testing.assert_allclose(fast, engine.probabilities(job, enc, "aer", cfg), rtol=0, atol=1e-9)


def test_heisenberg_suffix_equals_forward_simulation() -> None:
    """Back-propagating the projectors through the suffix gives the same numbers as carrying every
    input's density matrix to the end."""
    model, enc = _inputs("zfm-ra-iris", "iris", 3)
    cfg = load(ROOT / "configs/noise/thermal.toml")
    from qmltest.noise import build

    qc = program.of_model(model).circuit
    errors = build.gate_errors(cfg, qc)
    measured, inputs = list(program.of_model(model).measured), list(program.of_model(model).inputs)
    steps = density.fuse(density.compile_noisy(qc, errors))
    cut = density.split(steps)
    assert 0 < cut < len(steps)
    fast = density.probabilities(qc, measured, inputs, enc, False, errors)
    n, d = qc.num_qubits, 2**qc.num_qubits
    values = {p: enc[:, i] for i, p in enumerate(inputs)}
    v = np.zeros((d * d, len(enc)), dtype=complex)
    v[0] = 1.0
    for step in density.compile_noisy(qc, errors):  # unfused, all forward
        m = density.step_matrix(step, values, len(enc))
        fn = density.apply_t if m.ndim == 3 else density.apply_dense
        v = fn(v, m, density.vec_qubits(step.qubits, n), 2 * n)
    slow = np.real(v.T @ density.projectors(measured, n))
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


def test_aer_runs_what_the_numpy_engine_would_not_speed_up() -> None:
    drnn = artifact.load(ROOT / "data/models/drnn-mnist01")
    cfg = load(ROOT / "configs/noise/depolarizing-1pct.toml")
    assert noisy.data_prefix(program.of_model(drnn).circuit) > noisy.PREFIX_LIMIT
    assert not noisy.numpy_applies(program.of_model(drnn).circuit, cfg)
    assert not noisy.numpy_applies(QuantumCircuit(2), from_dict({"backend": {"fake": "FakeManilaV2"}}))


def test_prepared_circuits_are_reused_across_data_sets_bit_for_bit(monkeypatch) -> None:
    """A mutant scored on several suites back-propagates its readout once per repetition: the second
    data set and a content-equal rebuilt circuit hit the cache, and the numbers equal an uncached
    call exactly."""
    model, enc = _inputs("zfm-ra-iris", "iris", 4)
    cfg = load(ROOT / "configs/noise/hardware-like.toml")
    reps = int(cfg.get("drift", "repetitions", 1))
    assert reps > 1  # drift: one prepared circuit per repetition
    job = program.of_model(model)
    calls = []
    real = density.prepare
    monkeypatch.setattr(density, "prepare", lambda *a: calls.append(1) or real(*a))
    noisy._PREPARED.clear()
    first = engine.probabilities(job, enc[:6], "numpy", cfg)
    second = engine.probabilities(job, enc[6:], "numpy", cfg)
    rebuilt = program.of_model(artifact.load(ROOT / "data/models/zfm-ra-iris"))  # same content, new objects
    third = engine.probabilities(rebuilt, enc[:6], "numpy", cfg)
    assert len(calls) == 2 * reps  # the rebuilt model's Parameters are new objects: one miss
    noisy._PREPARED.clear()
    np.testing.assert_array_equal(first, engine.probabilities(job, enc[:6], "numpy", cfg))
    np.testing.assert_array_equal(second, engine.probabilities(job, enc[6:], "numpy", cfg))
    np.testing.assert_array_equal(third, first)
    assert len(calls) == 3 * reps
