"""fake: targets on the device (issue 32): the model transpiled to a fake IBM device with a seeded
layout and routing, read out through the final layout, simulated with the device's noise and
readout error; two devices of different sizes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qmltest import artifact, targets
from qmltest.errors import InputError

pytest.importorskip("qiskit_ibm_runtime")

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
DEVICES = ["FakeManilaV2", "FakeGuadalupeV2"]  # 5 and 16 qubits


def _bound(model, t, row) -> object:
    values = {p.name: v for p, v in zip(model.job().inputs, row)}
    return t.circuit.assign_parameters({p: values[p.name] for p in t.circuit.parameters})


@pytest.mark.parametrize("name", DEVICES)
def test_the_final_layout_carries_the_readout(name) -> None:
    """Noise-free, the transpiled circuit read on the final layout's physical qubits gives the
    model's ideal probabilities to 1e-9; read on the logical indices (qiskit-machine-learning
    #1040's mistake) it does not."""
    from qiskit.quantum_info import Statevector

    from qmltest.simulate import device

    model = artifact.load(MODELS / "zzfm-su2-iris")
    job = model.job()
    t = device.transpiled(job.circuit, list(job.measured), name, seed=0)
    assert sorted(t.measured) != sorted(job.measured) or list(t.layout) != list(range(job.num_qubits))
    x = model.encode(np.random.default_rng(1).uniform(0, 1, (5, 4)))
    ideal = model.probabilities(np.random.default_rng(1).uniform(0, 1, (5, 4)))
    right = np.array([Statevector(_bound(model, t, row)).probabilities(list(t.measured)) for row in x])
    wrong = np.array([Statevector(_bound(model, t, row)).probabilities(list(job.measured)) for row in x])
    assert np.max(np.abs(right - ideal)) < 1e-9
    assert np.max(np.abs(wrong - ideal)) > 0.05


@pytest.mark.parametrize("name", DEVICES)
def test_fake_target_equals_aer_from_backend_within_shot_noise(name) -> None:
    """Our probabilities under fake:NAME against Aer's own AerSimulator.from_backend run of the same
    transpiled circuit with measurements (20,000 shots; readout error included on both sides)."""
    from qiskit import ClassicalRegister
    from qiskit_aer import AerSimulator

    from qmltest.simulate import device

    model = artifact.load(MODELS / "zzfm-su2-iris")
    raw = np.random.default_rng(2).uniform(0, 1, (3, 4))
    ours = model.probabilities(raw, noise=targets.parse(f"fake:{name}"))
    job = model.job()
    t = device.transpiled(job.circuit, list(job.measured), name, seed=0)
    shots = 20_000
    for row, p in zip(model.encode(raw), ours):
        qc = _bound(model, t, row).copy()
        creg = ClassicalRegister(len(t.measured), "c")
        qc.add_register(creg)
        for b, q in enumerate(t.measured):
            qc.measure(q, creg[b])
        counts = AerSimulator.from_backend(device.backend(name), seed_simulator=7).run(qc, shots=shots).result()
        freq = np.zeros(len(p))
        for key, c in counts.get_counts().items():
            freq[int(key.replace(" ", ""), 2)] += c / shots
        sigma = np.sqrt(np.maximum(p * (1 - p), 1e-6) / shots)
        assert np.all(np.abs(freq - p) < 5 * sigma + 1e-3), np.max(np.abs(freq - p) / sigma)


def test_devices_refuse_what_they_cannot_run() -> None:
    from qmltest.simulate import device

    wide = artifact.load(MODELS / "qcl-mnist01")
    with pytest.raises(InputError, match="unknown fake backend 'FakeNope'"):
        device.backend("FakeNope")
    job = wide.job()
    if job.num_qubits > 5:
        with pytest.raises(InputError, match="qubits but FakeManilaV2 has 5"):
            device.transpiled(job.circuit, list(job.measured), "FakeManilaV2", 0)


def test_evaluate_records_the_device_layout() -> None:
    import json

    from qmltest_cli.main import app
    from typer.testing import CliRunner

    args = ["evaluate", str(MODELS / "zfm-ra-iris"), "--exact", "--target", "fake:FakeGuadalupeV2", "--json", "-"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    dev = json.loads(res.stdout)["device"]
    assert dev["device"] == "FakeGuadalupeV2" and dev["device_qubits"] == 16
    assert len(dev["layout"]) == 4 and len(set(dev["readout_physical_qubits"])) == 4
    assert set(dev["gates"]) <= {"cx", "rz", "sx", "x", "ecr", "barrier"} and dev["calibration"]
