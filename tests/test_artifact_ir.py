"""Artifact and IR: QASM3 -> IR -> QASM3 round trips, manifest checks, third-party files."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import random_model
from qiskit import qasm3
from qiskit.circuit import ParameterVector, QuantumCircuit
from qiskit.circuit.library import real_amplitudes, zz_feature_map
from qiskit.quantum_info import Statevector

from qmltest.errors import InputError
from qmltest.model import artifact
from qmltest.model import ir as irmod
from qmltest.simulate.runner import model_probabilities
from qmltest.zoo.architectures import ARCHS
from qmltest.zoo.catalog import MODELS_DIR


def fidelities(a: artifact.Model, b: artifact.Model, rng: np.random.Generator) -> np.ndarray:
    """Statevector fidelity of the two models' unitary parts on shared random inputs."""
    ca, cb = irmod.unitary_part(a.ir), irmod.unitary_part(b.ir)
    out = []
    for _ in range(3):
        feats = rng.uniform(0, np.pi, len(a.ir.inputs))
        sa = Statevector(ca.assign_parameters(dict(zip(a.ir.inputs, feats))))
        sb = Statevector(cb.assign_parameters(dict(zip(b.ir.inputs, feats))))
        out.append(abs(np.vdot(sa.data, sb.data)) ** 2)
    return np.array(out)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_roundtrip_fidelity_one_every_architecture(arch: str, tmp_path) -> None:
    model = random_model(arch, [0, 1])
    artifact.save(model, tmp_path / arch)
    loaded = artifact.load(tmp_path / arch)
    again = loaded.with_ir(loaded.ir)
    np.testing.assert_allclose(fidelities(model, loaded, np.random.default_rng(1)), 1.0, atol=1e-12)
    np.testing.assert_allclose(fidelities(loaded, again, np.random.default_rng(2)), 1.0, atol=1e-12)
    assert loaded.ir.layer_table() == model.ir.layer_table()
    assert [g.name for g in loaded.ir.gates] == [g.name for g in model.ir.gates]


def test_shipped_models_roundtrip() -> None:
    folders = sorted(p.parent for p in MODELS_DIR.glob("*/model.json"))
    for folder in folders:
        model = artifact.load(folder)
        again = model.with_ir(model.ir)
        np.testing.assert_allclose(fidelities(model, again, np.random.default_rng(0)), 1.0, atol=1e-12)


def test_ir_marks_parameters_and_spans(zzfm_model) -> None:
    kinds = {p.kind for g in zzfm_model.ir.gates for p in g.params}
    assert kinds == {"data", "weight"}
    fm, ans = zzfm_model.ir.layers
    assert fm.kind == "feature_map" and ans.kind == "ansatz"
    assert all(p.kind == "data" for g in fm.gates for p in g.params)
    assert all(p.kind == "weight" for g in ans.gates for p in g.params)
    lines = zzfm_model.qasm_text.splitlines()
    for g in zzfm_model.ir.gates:
        assert g.span is not None
        assert lines[g.span.start_line - 1].startswith(g.name)


def test_known_gate_definitions_map_back_to_standard_gates(tmp_path) -> None:
    qc = QuantumCircuit(2)
    qc.rzz(0.3, 0, 1)
    qc.rxx(0.2, 0, 1)
    qc.measure_all()
    path = tmp_path / "gates.qasm"
    path.write_text(qasm3.dumps(qc))
    model = artifact.load(path)
    assert [type(g.operation).__name__ for g in model.ir.gates] == ["RZZGate", "RXXGate"]


def test_hash_mismatch_refused(qcl_model, tmp_path) -> None:
    artifact.save(qcl_model, tmp_path / "m")
    text = (tmp_path / "m" / "model.qasm").read_text()
    (tmp_path / "m" / "model.qasm").write_text(text.replace("rx(", "ry(", 1))
    with pytest.raises(InputError, match="qasm_sha256"):
        artifact.load(tmp_path / "m")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("classes", [0], "classes"),
        ("encoding", {"kind": "basis"}, "encoding.kind"),
        ("format_version", 9, "format_version"),
        ("readout", {"kind": "basis", "qubits": [0], "map": [0]}, "readout.map"),
        ("readout", {"qubits": [0], "map": [0, 1]}, "field 'readout': 'kind' is a required property"),
        ("layers", [1, 2], r"field 'layers\[0\]': 1 is not of type 'object'"),
        ("training", "x", "field 'training': 'x' is not of type 'object'"),
        ("classes", [[0], [1]], r"field 'classes\[0\]'"),
        ("classes", [0, 0], "non-unique"),
        ("preprocessing", [{"op": "affine", "scale": "2", "offset": 0}], r"preprocessing\[0\]\.scale"),
        ("preprocessing", [{"op": "affine", "scale": [1.0]}], "'offset' is a required property"),
        ("preprocessing", [{"op": "affine", "scale": [float("nan")], "offset": [0.0]}], "NaN"),
        ("readout", {"kind": "basis", "qubits": [0, 1], "map": [0, 0, 0, -1]}, r"never predicts class\(es\) \[1\]"),
    ],
)
def test_bad_manifest_field_named(qcl_model, tmp_path, field, value, message) -> None:
    artifact.save(qcl_model, tmp_path / "m")
    path = tmp_path / "m" / "model.json"
    data = json.loads(path.read_text())
    data[field] = value
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=message):
        artifact.load(tmp_path / "m")


def test_malformed_qasm_refused(tmp_path) -> None:
    bad = tmp_path / "bad.qasm"
    bad.write_text("OPENQASM 3.0;\nqubit[2] q;\nfoo q[0];\n")
    with pytest.raises(InputError, match="malformed"):
        artifact.load(bad)


def test_third_party_vqc_file_loads_and_evaluates(tmp_path) -> None:
    """A Qiskit ML style VQC circuit (feature map + ansatz, measure_all) exported by qasm3.dumps."""
    x = ParameterVector("x", 4)
    fm = zz_feature_map(4)
    fm = fm.assign_parameters(dict(zip(fm.parameters, x)))
    ansatz = real_amplitudes(4, reps=2)
    qc = fm.compose(ansatz.assign_parameters(np.linspace(-1, 1, ansatz.num_parameters)))
    qc.measure_all()
    path = tmp_path / "vqc.qasm"
    path.write_text(qasm3.dumps(qc))
    model = artifact.load(path)
    assert model.manifest["feature_names"] == ["_x_0_", "_x_1_", "_x_2_", "_x_3_"]
    assert any("parity" in note for note in model.inferred)
    feats = np.random.default_rng(0).uniform(0, 1, (5, 4))
    probs = model_probabilities(model, feats)
    ref = []
    for row in feats:
        sv = Statevector(qc.remove_final_measurements(inplace=False).assign_parameters(dict(zip(x, row))))
        ref.append(sv.probabilities())
    np.testing.assert_allclose(probs, np.array(ref), atol=1e-9)
    assert model.predict(probs).shape == (5,)


def test_wrong_feature_count_and_nan(zzfm_model) -> None:
    with pytest.raises(InputError, match="feature count"):
        model_probabilities(zzfm_model, np.zeros((2, 5)))
    with pytest.raises(InputError, match="NaN"):
        model_probabilities(zzfm_model, np.array([[0.1, np.nan, 0.2, 0.3]]))


def test_save_is_atomic_and_leaves_no_temp_files(qcl_model, tmp_path) -> None:
    artifact.save(qcl_model, tmp_path / "m")
    artifact.save(qcl_model, tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["model.json", "model.qasm"]
    shutil.rmtree(tmp_path / "m")


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (
            'OPENQASM 4.0;\ninclude "stdgates.inc";\nqubit[1] q;\nbit[1] c;\nh q[0];\nc[0] = measure q[0];\n',
            "version 4.0",
        ),
        (
            'OPENQASM 99;\ninclude "stdgates.inc";\nqubit[1] q;\nbit[1] c;\nh q[0];\nc[0] = measure q[0];\n',
            "version 99",
        ),
        (
            'OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[1] q;\nbit[1] c;\nrx(1e308) q[0];\nc[0] = measure q[0];\n',
            "out-of-range",
        ),
        (
            'OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[1] q;\nbit[1] c;\npow(2) @ x q[0];\nc[0] = measure q[0];\n',
            "gate modifier",
        ),
    ],
)
def test_nonsense_qasm_is_refused_in_one_line(body, says) -> None:
    from qmltest.model import qasm

    with pytest.raises(InputError, match=re.escape(says)):
        qasm.loads(body, "m.qasm")


@pytest.mark.parametrize("field", ["num_qubits", "map"])
def test_manifest_indices_written_as_floats_are_refused(field, tmp_path) -> None:
    src = Path(__file__).resolve().parents[1] / "data" / "models" / "zfm-ra-iris"
    shutil.copytree(src, tmp_path / "m")
    m = json.loads((tmp_path / "m" / "model.json").read_text())
    if field == "num_qubits":
        m["num_qubits"] = float(m["num_qubits"])
    else:
        m["readout"]["map"] = [float(v) for v in m["readout"]["map"]]
    (tmp_path / "m" / "model.json").write_text(json.dumps(m))
    with pytest.raises(InputError, match="whole numbers"):
        artifact.load(tmp_path / "m")


def test_a_wide_readout_map_is_checked_item_by_item(tmp_path) -> None:
    """An 11-qubit parity readout (2,048 map entries, past `artifact.WIDE_MAP`): its items are
    checked in one pass, as strictly as the schema checks a short map."""
    from qiskit.circuit.library import real_amplitudes, z_feature_map

    from qmltest.interop import from_circuit

    fm, an = z_feature_map(11), real_amplitudes(11, reps=1)
    w = np.random.default_rng(0).uniform(-1, 1, an.num_parameters)
    from_circuit(fm.compose(an), w, list(fm.parameters), readout="parity", classes=[0, 1]).save(tmp_path / "m")
    assert len(artifact.load(tmp_path / "m").manifest["readout"]["map"]) == 2**11 > artifact.WIDE_MAP
    path = tmp_path / "m" / "model.json"
    good = json.loads(path.read_text())
    for bad, message in [(-2, "readout.map"), ("1", "readout.map"), (True, "readout.map"), (1.5, "whole numbers")]:
        data = json.loads(json.dumps(good))
        data["readout"]["map"][5] = bad
        path.write_text(json.dumps(data))
        with pytest.raises(InputError, match=message):
            artifact.load(tmp_path / "m")
