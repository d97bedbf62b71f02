"""Import from files and circuits: layer inference tables, OpenQASM 3/2 and QPY, PennyLane, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from qiskit import QuantumCircuit, qasm3, qpy
from qiskit.circuit import Parameter, ParameterVector
from qiskit.circuit.library import efficient_su2, real_amplitudes, z_feature_map, zz_feature_map
from qiskit.quantum_info import Statevector
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.errors import InputError
from qmltest.interop import from_circuit
from qmltest.interop import layers as lay
from qmltest.interop.sources import apply_probe
from qmltest.model import artifact, readout
from qmltest.simulate.runner import model_probabilities

FIXTURES = Path(__file__).parent / "fixtures"
runner = CliRunner()


def _kinds(model) -> list[tuple[str, str, int, int]]:
    return [(r["name"], r["kind"], r["start"], r["stop"]) for r in model.manifest["layers"]]


def _reference(circuit: QuantumCircuit, binding: dict, measured: list[int]) -> np.ndarray:
    """Qiskit's own Statevector probabilities over `measured` (bit i = measured[i])."""
    sv = Statevector(circuit.assign_parameters(binding))
    return sv.probabilities(measured)


def test_layers_zz_feature_map_real_amplitudes():
    """ZZFeatureMap(3, reps=2): 2 x (3 H + 3 P + 3 x (cx p cx)) = 30 gates, the closing CX included;
    RealAmplitudes(3, reps=2): 3 x 3 RY + 2 x 2 CX = 13."""
    qc = zz_feature_map(3, reps=2).compose(real_amplitudes(3, reps=2))
    model = from_circuit(qc, np.linspace(0.1, 0.9, 9), readout="parity", classes=[0, 1])
    assert _kinds(model) == [("feature_map", "feature_map", 0, 30), ("ansatz", "ansatz", 30, 43)]


def test_layers_z_feature_map_efficient_su2():
    qc = z_feature_map(4, reps=2).compose(efficient_su2(4, reps=1))
    model = from_circuit(qc, np.linspace(0.1, 1.6, 16), readout="modulo", classes=[0, 1, 2])
    assert _kinds(model) == [("feature_map", "feature_map", 0, 16), ("ansatz", "ansatz", 16, 35)]


def test_layers_data_reuploading():
    """x-block, w-block, x-block, w-block: alternating layers; H before each data block goes with it."""
    x, w = ParameterVector("x", 2), ParameterVector("w", 8)
    qc = QuantumCircuit(2)
    for r in range(2):
        qc.h([0, 1])
        qc.rz(x[0], 0)
        qc.rz(x[1], 1)
        qc.ry(w[4 * r], 0)
        qc.ry(w[4 * r + 1], 1)
        qc.cx(0, 1)
        qc.rz(w[4 * r + 2], 0)
        qc.rz(w[4 * r + 3], 1)
    model = from_circuit(qc, np.arange(1, 9) / 10, readout="parity", classes=[0, 1])
    assert _kinds(model) == [
        ("feature_map_0", "feature_map", 0, 4),
        ("ansatz_0", "ansatz", 4, 9),
        ("feature_map_1", "feature_map", 9, 13),
        ("ansatz_1", "ansatz", 13, 18),
    ]


def test_layers_reuploading_block_ending_in_a_cnot_ladder():
    """PennyLane-style re-uploading: RY(x) layer, RZ(w) layer, CNOT ladder; the ladder closes the block."""
    x, w = ParameterVector("x", 3), ParameterVector("w", 6)
    qc = QuantumCircuit(3)
    for r in range(2):
        for q in range(3):
            qc.ry(x[q], q)
        for q in range(3):
            qc.rz(w[3 * r + q], q)
        qc.cx(0, 1)
        qc.cx(1, 2)
    model = from_circuit(qc, np.arange(1, 7) / 10, readout="basis", classes=[0, 1, 2], measure=[0, 1])
    assert [(r["kind"], r["start"], r["stop"]) for r in model.manifest["layers"]] == [
        ("feature_map", 0, 3),
        ("ansatz", 3, 8),
        ("feature_map", 8, 11),
        ("ansatz", 11, 16),
    ]


def test_layers_library_blocks_appended_as_gates():
    fm, ans = zz_feature_map(2), real_amplitudes(2, reps=1)
    qc = QuantumCircuit(2)
    qc.append(fm.to_gate(label="ZZFeatureMap"), [0, 1])
    qc.append(ans.to_gate(label="RealAmplitudes"), [0, 1])
    model = from_circuit(qc, [0.1, 0.2, 0.3, 0.4], readout="parity", classes=[0, 1])
    assert [(r["name"], r["kind"]) for r in model.manifest["layers"]] == [
        ("zzfeaturemap", "feature_map"),
        ("realamplitudes", "ansatz"),
    ]
    flat = fm.compose(ans)
    binding = dict(zip(sorted(ans.parameters, key=lambda p: p.index), [0.1, 0.2, 0.3, 0.4]))
    x = np.array([[0.3, -0.7]])
    binding.update(dict(zip(sorted(fm.parameters, key=lambda p: p.index), x[0])))
    assert np.allclose(model_probabilities(model, x)[0], _reference(flat, binding, [0, 1]), atol=1e-12)


def test_layer_rules_on_roles():
    # a pauli-style conjugation h p(x) h closes inside the feature map; a trailing h before weights stays
    names = ["h", "p", "h", "ry", "cx"]
    assert lay.infer(list("CDCWC"), [(0,), (0,), (0,), (0,), (0, 1)], names) == [
        {"name": "feature_map", "kind": "feature_map", "start": 0, "stop": 3},
        {"name": "ansatz", "kind": "ansatz", "start": 3, "stop": 5},
    ]
    assert lay.infer(list("DCW"), [(0,), (1,), (0,)], ["p", "h", "ry"])[0]["stop"] == 1  # h on another qubit: ansatz
    assert lay.angle_role(np.pi / 2) == "C" and lay.angle_role(1.2345) == "W"
    assert lay.parse_spec("0-2:feature_map,2-5:ansatz", 5)[1] == {
        "name": "ansatz",
        "kind": "ansatz",
        "start": 2,
        "stop": 5,
    }
    with pytest.raises(InputError, match="covers gates 0-4"):
        lay.parse_spec("0-4:ansatz", 5)


def _vqc_like(tmp_path: Path) -> tuple[QuantumCircuit, np.ndarray]:
    qc = zz_feature_map(3, reps=1).compose(real_amplitudes(3, reps=1))
    w = np.random.default_rng(4).normal(size=6)
    np.save(tmp_path / "w.npy", w)
    (tmp_path / "c.qasm").write_text(qasm3.dumps(qc))
    with open(tmp_path / "c.qpy", "wb") as fh:
        qpy.dump(qc, fh)
    return qc, w


@pytest.mark.parametrize("source", ["c.qasm", "c.qpy"])
def test_cli_import_qasm3_and_qpy_with_weights(tmp_path, source):
    qc, w = _vqc_like(tmp_path)
    res = runner.invoke(
        app,
        [
            "import",
            str(tmp_path / source),
            "--out",
            str(tmp_path / "m"),
            "--weights",
            str(tmp_path / "w.npy"),
            "--classes",
            "0,1,2",
            "--readout",
            "modulo",
            "--json",
            "-",
        ],
    )
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["features"] == ["x_000", "x_001", "x_002"] and info["num_weights"] == 6
    assert [layer["kind"] for layer in info["layers"]] == ["feature_map", "ansatz"]
    model = artifact.load(tmp_path / "m")
    x = np.array([[0.1, 0.5, -0.4], [1.0, 0.2, 0.3]])
    ansatz_params = [p for p in qc.parameters if p.name.startswith("θ")]
    feats = [p for p in qc.parameters if p.name.startswith("x")]
    for row, probs in zip(x, model_probabilities(model, x)):
        binding = dict(zip(ansatz_params, w)) | dict(zip(feats, row))
        assert np.max(np.abs(probs - _reference(qc, binding, [0, 1, 2]))) < 1e-12


def test_pennylane_qasm2_fixture_matches_default_qubit(tmp_path):
    """PennyLane's to_openqasm output (committed), probe-valued features; probs(wires=[0,1]) = --measure 1,0."""
    fx = FIXTURES / "pennylane"
    from fixtures.pennylane.make_fixture import PROBE  # noqa: PLC0415

    res = runner.invoke(
        app,
        [
            "import",
            str(fx / "qnode.qasm"),
            "--out",
            str(tmp_path / "pl"),
            "--probe",
            ",".join(map(str, PROBE)),
            "--readout",
            "basis",
            "--classes",
            "0,1,2,3",
            "--measure",
            "1,0",
        ],
    )
    assert res.exit_code == 0, res.output
    model = artifact.load(tmp_path / "pl")
    with np.load(fx / "expected.npz") as z:
        x, expected = z["x"], z["probs"]
    assert np.max(np.abs(model_probabilities(model, x) - expected)) < 1e-9
    assert [r["kind"] for r in model.manifest["layers"]] == ["feature_map", "ansatz"]


def test_pennylane_reexport_when_installed(tmp_path):
    pytest.importorskip("pennylane")
    from fixtures.pennylane.make_fixture import PROBE, export  # noqa: PLC0415

    export(tmp_path)
    circuit, _ = __import__("qmltest.interop.sources", fromlist=["x"]).load_circuit(tmp_path / "qnode.qasm", PROBE)
    model = from_circuit(circuit, readout="basis", classes=[0, 1, 2, 3], measure=[1, 0])
    with np.load(tmp_path / "expected.npz") as z:
        assert np.max(np.abs(model_probabilities(model, z["x"]) - z["probs"])) < 1e-9


def test_probe_value_not_found():
    """2x is a recognized form (a multiple); 3x is not, so the probe value is found nowhere."""
    qc = QuantumCircuit(1)
    qc.rx(2 * 0.25, 0)
    assert str(apply_probe(qc, [0.25], "c.qasm").data[0].operation.params[0]) == "2*x_000"
    qc = QuantumCircuit(1)
    qc.rx(3 * 0.25, 0)
    with pytest.raises(InputError, match="probe value 0.25"):
        apply_probe(qc, [0.25], "c.qasm")


def test_expectation_readout_hand_computed():
    """RY(theta)|0>: <Z> = cos(theta), <X> = sin(theta); sign and argmax readouts, exact and under shots."""
    theta = Parameter("t")
    qc = QuantumCircuit(1)
    qc.ry(theta, 0)
    model = from_circuit(qc, readout="expectation", observables=["X"], classes=["neg", "pos"])
    x = np.array([[0.3], [2.0], [-1.0]])
    ev = readout.expectation_values(model_probabilities(model, x), ["X"], [0])[:, 0]
    assert np.allclose(ev, np.sin(x[:, 0]), atol=1e-12)
    assert model.predict(model_probabilities(model, x)).tolist() == [1, 1, 0]
    thr = from_circuit(qc, readout="expectation", observables=["X"], classes=[0, 1], threshold=0.5)
    assert thr.predict(model_probabilities(thr, x)).tolist() == [0, 1, 0]  # sin(0.3) = 0.296 < 0.5 < sin(2.0) = 0.909
    counts = np.array([[60, 40], [90, 10]])  # <X> estimates 0.2 and 0.8 (state 0 = the +1 outcome)
    assert thr.predict(counts).tolist() == [0, 1]
    assert np.allclose(readout.expectation_matrix(["ZI", "IZ"], [0, 1]), [[1, 1], [1, 0], [0, 1], [0, 0]])


BAD = [
    (["--weights", "w3.npy"], "6 weight parameters but 3 weights"),
    (["--readout", "expectation", "--observables", "ZZ"], "width 2 but the circuit has 3 qubits"),
    (["--readout", "modulo", "--classes", "0,1,2", "--measure", "0"], "never predicts class(es) [2]"),
    (["--readout", "modulo"], "needs the class labels"),
    (["--features", "nope"], "feature parameter 'nope' is not in the circuit"),
    (["--readout", "expectation", "--observables", "XIZ+ZZ", "--classes", "0,1"], "width 2 but the circuit has 3"),
]


def test_cli_import_observables_in_two_bases_evaluates_under_shots(tmp_path):
    """`--observables XIZ,ZIZ` reads qubit 2 in X and in Z: imported (two measurement bases, one
    argmax over two outputs), the bases shown by inspect and in the evaluate report, and the shot
    accuracy close to the exact one (which is 1: the labels are its own predictions)."""
    _vqc_like(tmp_path)
    out = tmp_path / "out"
    args = ["import", str(tmp_path / "c.qasm"), "--weights", str(tmp_path / "w.npy"), "--out", str(out)]
    res = runner.invoke(app, args + ["--readout", "expectation", "--observables", "XIZ,ZIZ", "--classes", "0,1"])
    assert res.exit_code == 0, res.output
    info = json.loads(runner.invoke(app, ["inspect", str(out), "--json", "-"]).output)
    assert info["readout"]["measurement_bases"] == 2
    data = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    xs = rng.uniform(-1, 1, (300, 3))
    model = artifact.load(out)
    labels = model.predict(model_probabilities(model, xs))  # the model's own exact predictions as labels
    data.write_text("a,b,c,label\n" + "\n".join(",".join(map(str, r)) + f",{int(v)}" for r, v in zip(xs, labels)))
    res = runner.invoke(app, ["evaluate", str(out), "--data", str(data), "--shots", "4000", "--json", "-"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["measurement_bases"] == 2 and report["shots_per_basis"]["mean"] == 2000
    assert 0.9 < report["accuracy"] < 1.0  # shot noise flips the inputs near the decision boundary
    exact = json.loads(runner.invoke(app, ["evaluate", str(out), "--data", str(data), "--exact", "--json", "-"]).output)
    assert exact["accuracy"] == 1.0 and exact["measurement_bases"] == 2 and exact["shots_per_basis"] is None


@pytest.mark.parametrize("extra,message", BAD)
def test_cli_import_bad_input_one_line_exit_2_nothing_written(tmp_path, extra, message):
    _vqc_like(tmp_path)
    np.save(tmp_path / "w3.npy", np.zeros(3))
    args = ["import", str(tmp_path / "c.qasm"), "--out", str(tmp_path / "out")]
    if "--weights" not in extra:
        args += ["--weights", str(tmp_path / "w.npy")]
    if "--classes" not in extra and "--readout" in extra and "modulo" not in extra:
        args += ["--classes", "0,1"]
    res = runner.invoke(app, args + [a.replace("w3.npy", str(tmp_path / "w3.npy")) for a in extra])
    assert res.exit_code == 2, res.output
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output
    assert not (tmp_path / "out").exists()


def test_cli_import_unsplittable_parameters_and_missing_file(tmp_path):
    a, b = Parameter("alpha"), Parameter("beta")
    qc = QuantumCircuit(1)
    qc.rx(a, 0)
    qc.ry(b, 0)
    (tmp_path / "ab.qasm").write_text(qasm3.dumps(qc))
    np.save(tmp_path / "w.npy", np.zeros(1))
    res = runner.invoke(
        app,
        [
            "import",
            str(tmp_path / "ab.qasm"),
            "--out",
            str(tmp_path / "o"),
            "--weights",
            str(tmp_path / "w.npy"),
            "--classes",
            "0,1",
        ],
    )
    assert res.exit_code == 2 and "cannot split" in res.stderr
    res = runner.invoke(app, ["import", str(tmp_path / "missing.qasm"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no such file" in res.stderr
    assert not (tmp_path / "o").exists()
