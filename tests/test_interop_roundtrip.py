"""Import round two: no import yields a model that disagrees with its source.

Every import is checked against its source circuit; PennyLane QNodes against their own forward
pass; OpenQASM 2 exports recover angles that are functions of several features (IQP's x_i x_j) and
verify them on a second export, or refuse. The PennyLane tests skip without PennyLane."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qiskit.circuit import ParameterVector

from qmltest.errors import InputError
from qmltest.interop import from_circuit, roundtrip, sources
from qmltest.simulate.runner import model_probabilities

P1 = [0.1234567, 0.2345678, 0.3456789]
P2 = [0.71, -0.43, 1.27]


def _iqp_qasm2(x: list[float], w: float = 0.37) -> str:
    """IQP-style circuit as PennyLane exports it: H, RZ(x_i), CX RZ(x_i x_j) CX, a weight, CX."""
    lines = ["OPENQASM 2.0;", 'include "qelib1.inc";', "qreg q[3];", "creg c[3];"]
    for i in range(3):
        lines += [f"h q[{i}];", f"rz({x[i]!r}) q[{i}];"]
    for i, j in ((0, 1), (0, 2), (1, 2)):
        lines += [f"cx q[{i}],q[{j}];", f"rz({x[i] * x[j]!r}) q[{j}];", f"cx q[{i}],q[{j}];"]
    lines += [f"ry({w!r}) q[0];", "cx q[0],q[1];", "measure q[0] -> c[0];", "measure q[1] -> c[1];"]
    return "\n".join(lines) + "\n"


def _iqp_reference(x: np.ndarray, w: float = 0.37) -> np.ndarray:
    from qiskit.quantum_info import Statevector

    qc = QuantumCircuit(3)
    for i in range(3):
        qc.h(i)
        qc.rz(x[i], i)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        qc.cx(i, j)
        qc.rz(x[i] * x[j], j)
        qc.cx(i, j)
    qc.ry(w, 0)
    qc.cx(0, 1)
    return Statevector(qc).probabilities([0, 1])


def test_product_angles_are_recovered_and_verified(tmp_path) -> None:
    (tmp_path / "a.qasm").write_text(_iqp_qasm2(P1))
    (tmp_path / "b.qasm").write_text(_iqp_qasm2(P2))
    circuit, fmt = sources.load_circuit(tmp_path / "a.qasm", P1)
    assert fmt == "qasm2" and len(circuit.parameters) == 3
    other, _ = sources.load_circuit(tmp_path / "b.qasm", None, bound=True)
    assert sources.verify_probe(circuit, other, P2, "b.qasm") < 1e-12
    model = from_circuit(circuit, None, None, readout="basis", classes=[0, 1, 2, 3], measure=[0, 1])
    x = np.random.default_rng(0).uniform(-np.pi, np.pi, (12, 3))
    ref = np.array([_iqp_reference(row) for row in x])
    assert np.max(np.abs(model_probabilities(model, x) - ref)) < 1e-12


def test_a_second_export_that_disagrees_is_refused(tmp_path) -> None:
    """An angle form the probe method does not know (here: the product stored as if it were
    x_0 x_1 + 0.1 at the second point) is caught by the second export."""
    (tmp_path / "a.qasm").write_text(_iqp_qasm2(P1))
    (tmp_path / "b.qasm").write_text(_iqp_qasm2(P2, w=0.47))  # a different model at the second point
    circuit, _ = sources.load_circuit(tmp_path / "a.qasm", P1)
    other, _ = sources.load_circuit(tmp_path / "b.qasm", None, bound=True)
    with pytest.raises(InputError, match="differs from it by"):
        sources.verify_probe(circuit, other, P2, "b.qasm")


def test_a_probe_that_aliases_two_features_is_refused(tmp_path) -> None:
    aliased = [0.2, 0.4, 0.3456789]  # x_1 = 2 x_0: an angle 0.4 is explained two ways
    (tmp_path / "a.qasm").write_text(_iqp_qasm2(aliased))
    with pytest.raises(InputError, match="several feature forms"):
        sources.load_circuit(tmp_path / "a.qasm", aliased)


def test_cli_import_with_verify_and_without(tmp_path) -> None:
    from qmltest_cli.main import app
    from typer.testing import CliRunner

    runner = CliRunner()
    (tmp_path / "a.qasm").write_text(_iqp_qasm2(P1))
    (tmp_path / "b.qasm").write_text(_iqp_qasm2(P2))
    base = ["import", str(tmp_path / "a.qasm"), "--probe", ",".join(map(str, P1)), "--readout", "basis"]
    base += ["--classes", "0,1,2,3", "--measure", "0,1"]
    res = runner.invoke(
        app, [*base, "--out", str(tmp_path / "m1"), "--verify", f"{tmp_path / 'b.qasm'}=0.71,-0.43,1.27"]
    )
    assert res.exit_code == 0, res.output
    assert "not checked away from the probe" not in res.output
    res = runner.invoke(app, [*base, "--out", str(tmp_path / "m2")])
    assert res.exit_code == 0 and "not checked away from the probe" in res.output
    bad = runner.invoke(
        app, [*base, "--out", str(tmp_path / "m3"), "--verify", f"{tmp_path / 'b.qasm'}=0.7,-0.43,1.27"]
    )
    assert bad.exit_code == 2 and "import refused" in bad.output and len(bad.output.strip().splitlines()) == 1


def test_a_model_that_differs_from_its_source_is_refused() -> None:
    """The round-trip check itself: a reference that disagrees by more than 1e-9 refuses."""
    x = ParameterVector("x", 2)
    qc = QuantumCircuit(2)
    qc.ry(x[0], 0)
    qc.ry(x[1], 1)
    qc.cx(0, 1)
    model = from_circuit(qc, None, list(x), readout="basis", classes=[0, 1, 2, 3])
    assert model.manifest["import"]["roundtrip"]["max_abs_diff"] < 1e-12
    with pytest.raises(InputError, match="import refused"):
        roundtrip.check(model, lambda z: roundtrip.model_outputs(model, z) + 1e-6, "a perturbed reference")


def _qnodes():
    qml = pytest.importorskip("pennylane")
    dev = qml.device("default.qubit", wires=4)
    rng = np.random.default_rng(0)

    @qml.qnode(dev)
    def iqp(x, w):
        qml.IQPEmbedding(x, wires=range(4))
        qml.BasicEntanglerLayers(w, wires=range(4))
        return qml.probs(wires=[0, 1])

    @qml.qnode(dev)
    def angle(x, w):
        qml.AngleEmbedding(x, wires=range(4))
        qml.BasicEntanglerLayers(w, wires=range(4))
        return qml.expval(qml.PauliZ(0))

    @qml.qnode(dev)
    def strong(x, w):
        qml.AngleEmbedding(x, wires=range(4), rotation="Y")
        qml.StronglyEntanglingLayers(w, wires=range(4))
        return [qml.expval(qml.PauliZ(0) @ qml.PauliZ(1)), qml.expval(qml.PauliX(2)), qml.expval(qml.PauliZ(3))]

    return {
        "iqp": (iqp, (rng.uniform(-1, 1, (2, 4)),)),
        "angle": (angle, (rng.uniform(-1, 1, (2, 4)),)),
        "strong": (strong, (rng.uniform(-1, 1, (2, 4, 3)),)),
    }


@pytest.mark.parametrize("kind", ["iqp", "angle", "strong"])
def test_pennylane_qnodes_match_default_qubit(kind) -> None:
    from qmltest.interop import from_pennylane
    from qmltest.model import readout

    qnode, weights = _qnodes()[kind]
    model = from_pennylane(qnode, weights, num_features=4)
    x = np.random.default_rng(5).uniform(-np.pi, np.pi, (30, 4))
    ref = np.array([np.atleast_1d(np.asarray(qnode(row, *weights), dtype=float)) for row in x])
    spec = model.manifest["readout"]
    probs = model_probabilities(model, x)
    ours = readout.expectation_values(probs, spec["observables"], spec["qubits"]) if kind != "iqp" else probs
    assert np.max(np.abs(ours - ref.reshape(ours.shape))) < 1e-9
    expected = np.argmax(ref, axis=1) if ref.shape[1] > 1 else (ref[:, 0] > 0).astype(int)
    assert np.array_equal(model.predict(probs), expected)


def test_linear_tanh_linear_before_the_circuit_matches_numpy() -> None:
    """A hybrid's classical layers (linear -> tanh -> linear) as manifest steps: the model's
    probabilities equal the circuit run on the numpy forward pass of those layers."""
    from qiskit.quantum_info import Statevector

    rng = np.random.default_rng(1)
    w1, b1, w2, b2 = rng.normal(size=(5, 6)), rng.normal(size=5), rng.normal(size=(2, 5)), rng.normal(size=2)
    steps = [
        {"op": "linear", "weight": w1.tolist(), "bias": b1.tolist()},
        {"op": "activation", "fn": "tanh"},
        {"op": "linear", "weight": w2.tolist(), "bias": b2.tolist()},
    ]
    x = ParameterVector("x", 2)
    qc = QuantumCircuit(2)
    qc.ry(x[0], 0)
    qc.ry(x[1], 1)
    qc.cx(0, 1)
    model = from_circuit(qc, None, list(x), readout="basis", classes=[0, 1, 2, 3], preprocessing=steps)
    raw = rng.normal(size=(7, 6))
    hidden = np.tanh(raw @ w1.T + b1) @ w2.T + b2
    ref = np.array([Statevector(qc.assign_parameters(dict(zip(x, h)))).probabilities() for h in hidden])
    assert np.max(np.abs(model_probabilities(model, raw) - ref)) < 1e-12


def test_torch_layers_match_torch_forward() -> None:
    torch = pytest.importorskip("torch")
    from qmltest.interop.preprocessing import to_steps

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
    steps = to_steps(net)
    from qmltest.data.preprocess import preprocess

    raw = np.random.default_rng(2).normal(size=(9, 6))
    ref = net(torch.from_numpy(raw)).detach().numpy()
    assert np.max(np.abs(preprocess(steps, raw) - ref)) < 1e-12
