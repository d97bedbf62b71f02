"""fake: targets on the device (issue 32): the model transpiled to a fake IBM device with a seeded
layout and routing, read out through the final layout, simulated with the device's noise and
readout error; two devices of different sizes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qmltest import targets
from qmltest.errors import InputError
from qmltest.model import artifact
from qmltest.simulate import program
from qmltest.simulate.runner import model_probabilities

pytest.importorskip("qiskit_ibm_runtime")

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
DEVICES = ["FakeManilaV2", "FakeGuadalupeV2"]  # 5 and 16 qubits


def _bound(model, t, row) -> object:
    values = {p.name: v for p, v in zip(program.of_model(model).inputs, row)}
    return t.circuit.assign_parameters({p: values[p.name] for p in t.circuit.parameters})


@pytest.mark.parametrize("name", DEVICES)
def test_the_final_layout_carries_the_readout(name) -> None:
    """Noise-free, the transpiled circuit read on the final layout's physical qubits gives the
    model's ideal probabilities to 1e-9; read on the logical indices (qiskit-machine-learning
    #1040's mistake) it does not."""
    from qiskit.quantum_info import Statevector

    from qmltest.simulate import fake_device as device

    model = artifact.load(MODELS / "zzfm-su2-iris")
    job = program.of_model(model)
    t = device.transpiled(job.circuit, list(job.measured), name, seed=0)
    assert sorted(t.measured) != sorted(job.measured) or list(t.layout) != list(range(job.num_qubits))
    x = model.encode(np.random.default_rng(1).uniform(0, 1, (5, 4)))
    ideal = model_probabilities(model, np.random.default_rng(1).uniform(0, 1, (5, 4)))
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

    from qmltest.simulate import fake_device as device

    model = artifact.load(MODELS / "zzfm-su2-iris")
    raw = np.random.default_rng(2).uniform(0, 1, (3, 4))
    ours = model_probabilities(model, raw, noise=targets.parse(f"fake:{name}"))
    job = program.of_model(model)
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
    from qmltest.simulate import fake_device as device

    wide = artifact.load(MODELS / "qcl-mnist01")
    with pytest.raises(InputError, match="unknown fake backend 'FakeNope'"):
        device.backend("FakeNope")
    job = program.of_model(wide)
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


def _vqc(weights: np.ndarray | None, tmp: Path, name: str, circuit=None, measure=None) -> Path:
    """A VQC-like model (ZZ feature map + RealAmplitudes, readout x % 3) imported and saved."""
    from qiskit.circuit.library import real_amplitudes, zz_feature_map

    from qmltest.interop import from_circuit

    fm, an = zz_feature_map(4), real_amplitudes(4, reps=1)
    qc = circuit if circuit is not None else fm.compose(an)
    inputs = [p for p in qc.parameters if p.name.startswith("x")]
    model = from_circuit(qc, weights, inputs, readout="modulo", classes=[0, 1, 2], measure=measure)
    model.save(tmp / name)
    return tmp / name


def test_diff_finds_the_inputs_two_weight_sets_change(tmp_path) -> None:
    """Two exports of one VQC with different weights: `diff` names exactly the inputs whose
    predicted class differs by Qiskit's own Statevector of the two bound circuits."""
    import json

    from qiskit.circuit.library import real_amplitudes, zz_feature_map
    from qiskit.quantum_info import Statevector
    from qmltest_cli.main import app
    from typer.testing import CliRunner

    fm, an = zz_feature_map(4), real_amplitudes(4, reps=1)
    w1 = np.linspace(-1.0, 1.0, an.num_parameters)
    w2 = w1.copy()
    w2[3] += 0.8
    a, b = _vqc(w1, tmp_path, "a"), _vqc(w2, tmp_path, "b")
    x = np.random.default_rng(4).uniform(0, np.pi, (40, 4))
    np.savetxt(tmp_path / "x.csv", np.c_[x, np.zeros(40)], delimiter=",")
    res = CliRunner().invoke(app, ["diff", str(a), str(b), "--data", str(tmp_path / "x.csv"), "--json", "-"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)

    def predicted(w: np.ndarray) -> np.ndarray:
        qc = fm.compose(an)
        out = []
        for row in x:
            bound = qc.assign_parameters(dict(zip(list(fm.parameters) + list(an.parameters), [*row, *w])))
            p = Statevector(bound).probabilities()
            out.append(int(np.argmax([p[np.arange(16) % 3 == c].sum() for c in range(3)])))
        return np.array(out)

    changed = np.flatnonzero(predicted(w1) != predicted(w2))
    assert len(changed) > 0 and doc["disagree"] == len(changed)
    assert sorted(row["index"] for row in doc["inputs_that_disagree"]) == changed.tolist()


def test_diff_catches_a_readout_that_ignores_the_final_layout(tmp_path) -> None:
    """qiskit-machine-learning #1040 built on purpose: the circuit transpiled to FakeManilaV2 and
    read on the logical qubit indices instead of the final layout's; `diff` against the untranspiled
    model finds the damage, while the same import read through the layout agrees everywhere."""
    import json

    from qiskit.circuit.library import real_amplitudes, zz_feature_map
    from qiskit.transpiler import generate_preset_pass_manager
    from qmltest_cli.main import app
    from typer.testing import CliRunner

    from qmltest.simulate import fake_device as device

    fm, an = zz_feature_map(4), real_amplitudes(4, reps=1)
    w = np.linspace(-1.0, 1.0, an.num_parameters)
    bound = fm.compose(an).assign_parameters(dict(zip(an.parameters, w)))
    pm = generate_preset_pass_manager(optimization_level=1, backend=device.backend("FakeManilaV2"), seed_transpiler=3)
    tqc = pm.run(bound)
    final = tqc.layout.final_index_layout()
    assert final[:4] != [0, 1, 2, 3]  # a non-trivial layout, as on hardware
    ideal = _vqc(None, tmp_path, "ideal", circuit=bound)
    wrong = _vqc(None, tmp_path, "wrong", circuit=tqc.remove_final_measurements(inplace=False), measure=[0, 1, 2, 3])
    right = _vqc(None, tmp_path, "right", circuit=tqc.remove_final_measurements(inplace=False), measure=final[:4])
    x = np.random.default_rng(5).uniform(0, np.pi, (40, 4))
    np.savetxt(tmp_path / "x.csv", np.c_[x, np.zeros(40)], delimiter=",")
    runner = CliRunner()
    for other, expect_damage in ((wrong, True), (right, False)):
        res = runner.invoke(app, ["diff", str(ideal), str(other), "--data", str(tmp_path / "x.csv"), "--json", "-"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert (doc["disagree"] > 0) == expect_damage and (doc["tvd_max"] > 1e-6) == expect_damage


def test_mutate_and_cover_reports_record_the_device(tmp_path) -> None:
    """Every report run on a device target names it in its meta: device, calibration, layout."""
    import json

    from qmltest_cli.main import app
    from typer.testing import CliRunner

    model, runner = str(MODELS / "zfm-ra-iris"), CliRunner()
    target = ["--target", "fake:FakeManilaV2"]
    res = runner.invoke(
        app, ["mutate", model, "--suite", "qml", "--operators", "ALD", "--quiet", "--json", "-", *target]
    )
    assert res.exit_code == 0, res.output
    dev = json.loads(res.stdout)["meta"]["device"]
    assert dev["device"] == "FakeManilaV2" and len(dev["layout"]) == 4 and dev["calibration"]
    prof = tmp_path / "p.json"
    assert runner.invoke(app, ["profile", model, "--out", str(prof)]).exit_code == 0
    res = runner.invoke(app, ["cover", model, "--profile", str(prof), "--json", "-", *target])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["meta"]["device"]["readout_physical_qubits"] == dev["readout_physical_qubits"]


@pytest.mark.parametrize("name", DEVICES)
def test_the_active_qubits_alone_give_the_whole_devices_probabilities(name) -> None:
    """`Transpiled.compact` (the active physical qubits, their own noise) against AerSimulator.from_backend's
    density matrix of the whole transpiled circuit: equal to 1e-9."""
    from qiskit_aer import AerSimulator

    from qmltest.noise import build
    from qmltest.simulate import aer_jobs as aer
    from qmltest.simulate import fake_device as device

    model = artifact.load(MODELS / "zzfm-su2-iris")
    raw = np.random.default_rng(3).uniform(0, 1, (4, 4))
    ours = model_probabilities(model, raw, noise=targets.parse(f"fake:{name}"))
    job = program.of_model(model)
    t = device.transpiled(job.circuit, list(job.measured), name, seed=0)
    own = {p.name: p for p in t.circuit.parameters}
    bound = [own.get(p.name, p) for p in job.inputs]
    sim = AerSimulator.from_backend(device.backend(name), method="density_matrix")
    full = aer.run_batch(sim, t.circuit, list(t.measured), bound, model.encode(raw), False, True, 1, transpiled=True)
    full = build.confused(full, device.readout_confusion(name, t.measured))
    assert np.max(np.abs(ours - full)) < 1e-9
    assert len(t.physical) < device.backend(name).num_qubits or name == "FakeManilaV2"
