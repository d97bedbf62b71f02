"""Issue 60: a hand-built circuit that mixes a scalar feature Parameter with ParameterVector weights
imports (it stopped with an internal TypeError, exit 3, sorting the two kinds of parameter), with
its weights bound in the vector's index order and its outputs equal to Qiskit's Statevector."""

from __future__ import annotations

import numpy as np
from qiskit.circuit import Parameter, ParameterVector, QuantumCircuit
from qiskit.quantum_info import Statevector

from qmltest.interop import from_circuit
from qmltest.interop.flattening import natural_order
from qmltest.simulate import engine, program


def _circuit() -> tuple[QuantumCircuit, Parameter, ParameterVector]:
    x, x2, w = Parameter("x"), Parameter("x_2"), ParameterVector("w", 3)
    qc = QuantumCircuit(2)
    qc.ry(x, 0)
    qc.ry(x2, 1)
    qc.cx(0, 1)
    qc.ry(w[0], 0)
    qc.rz(w[1], 1)
    qc.ry(w[2], 1)
    return qc, (x, x2), w


def test_mixed_parameters_sort_without_error() -> None:
    qc, (x, x2), w = _circuit()
    x10 = Parameter("x_10")
    assert [p.name for p in natural_order([w[2], x10, x, w[0], x2, w[1]])] == [
        "w[0]",
        "w[1]",
        "w[2]",
        "x",
        "x_2",
        "x_10",
    ]


def test_a_circuit_mixing_a_scalar_feature_and_vector_weights_imports_exactly() -> None:
    qc, (x, x2), w = _circuit()
    weights = np.array([0.3, -0.7, 1.1])
    model = from_circuit(qc, weights, [x, x2], readout="modulo", classes=[0, 1])
    assert model.manifest["import"]["weights"] == 3 and model.manifest["import"]["roundtrip"]["max_abs_diff"] < 1e-12
    feats = np.array([[0.2, 1.3], [2.0, -0.4]])
    ours = engine.probabilities(program.of_model(model), model.encode(feats))
    for row, values in zip(ours, feats):
        bound = qc.assign_parameters({x: values[0], x2: values[1], **dict(zip(w, weights))})
        np.testing.assert_allclose(row, Statevector(bound).probabilities(), atol=1e-12)


HAND = """OPENQASM 3.0;
include "stdgates.inc";
input float[64] feat_a;
input float[64] feat_b;
input float[64] w0;
input float[64] w1;
qubit[2] q;
ry(feat_a) q[0];
ry(feat_b) q[1];
cx q[0], q[1];
ry(w0) q[0];
ry(w1) q[1];
"""


def test_weights_named_as_weights_are_never_taken_for_features(tmp_path) -> None:
    """A hand-written file with inputs feat_a, feat_b, w0, w1 and no --weights used to import as a
    four-feature, zero-weight classifier without a word; it is one line naming the weights and the
    option that settles it, and with --weights it imports with two features."""
    from qmltest_cli.main import app
    from typer.testing import CliRunner

    runner = CliRunner()
    (tmp_path / "hand.qasm").write_text(HAND)
    res = runner.invoke(app, ["import", str(tmp_path / "hand.qasm"), "--out", str(tmp_path / "m"), "--classes", "0,1"])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "['w0', 'w1'] look like weights" in res.stderr and "--features feat_a,feat_b" in res.stderr
    np.save(tmp_path / "w.npy", np.array([0.4, -1.2]))
    res = runner.invoke(
        app,
        ["import", str(tmp_path / "hand.qasm"), "--out", str(tmp_path / "m"), "--classes", "0,1"]
        + ["--weights", str(tmp_path / "w.npy"), "--features", "feat_a,feat_b"],
    )
    assert res.exit_code == 0, res.output
    from qmltest.model import artifact

    model = artifact.load(tmp_path / "m")
    assert len(model.ir.inputs) == 2 and model.manifest["import"]["weights"] == 2


def test_a_feature_map_alone_still_imports_as_features() -> None:
    from qiskit.circuit.library import z_feature_map

    model = from_circuit(z_feature_map(3), None, readout="modulo", classes=[0, 1])
    assert len(model.ir.inputs) == 3 and model.manifest["import"]["weights"] == 0
    assert any("no trained weight" in w and "--kernel" in w for w in model.manifest["import"]["warnings"])


def test_a_weight_free_circuit_says_so_on_import(tmp_path) -> None:
    """`qmltest import` of a feature map alone: imported, with one warning line naming --kernel."""
    import qiskit.qpy
    from qiskit.circuit.library import zz_feature_map
    from qmltest_cli.main import app
    from typer.testing import CliRunner

    with open(tmp_path / "fm.qpy", "wb") as fh:
        qiskit.qpy.dump(zz_feature_map(2, reps=1), fh)
    args = ["import", str(tmp_path / "fm.qpy"), "--readout", "parity", "--classes", "0,1"]
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    warned = [line for line in res.output.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "no trained weight" in warned[0] and "--kernel" in warned[0]
