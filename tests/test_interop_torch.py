"""Torch hybrids (issue 27): Linear -> Tanh -> TorchConnector(QNN) -> Linear head, imported and
checked against the library's own layers; the linear readout head alone, without torch."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit.circuit.library import real_amplitudes, zz_feature_map
from qiskit.quantum_info import SparsePauliOp
from qiskit_machine_learning.neural_networks import EstimatorQNN, SamplerQNN

from qmltest.errors import InputError
from qmltest.model import artifact, readout
from qmltest.simulate.runner import model_probabilities


def _qnn(observables) -> EstimatorQNN:
    fm, an = zz_feature_map(3), real_amplitudes(3, reps=2)
    return EstimatorQNN(
        circuit=fm.compose(an), input_params=fm.parameters, weight_params=an.parameters, observables=observables
    )


SUM_AND_PAIR = [SparsePauliOp.from_list([("ZZI", 0.5), ("IZZ", 0.5)]), SparsePauliOp("ZIZ")]


def _margin_agree(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Identical argmax wherever the library's float32 logits are not within 1e-5 of a tie."""
    top = np.sort(theirs, axis=1)
    clear = (top[:, -1] - top[:, -2]) > 1e-5 if theirs.shape[1] > 1 else np.abs(theirs[:, 0]) > 1e-5
    assert clear.mean() > 0.95
    pick = np.argmax(theirs, axis=1) if theirs.shape[1] > 1 else (theirs[:, 0] > 0).astype(int)
    assert np.array_equal(ours[clear], pick[clear])


def test_linear_tanh_qnn_linear_hybrid_matches_torch(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from qiskit_machine_learning.connectors import TorchConnector

    from qmltest.interop import from_torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(5, 3), torch.nn.Tanh(), TorchConnector(_qnn(SUM_AND_PAIR)), torch.nn.Linear(2, 3)
    )
    model = artifact.load(from_torch(net, classes=["a", "b", "c"]).save(tmp_path / "m"))
    info = model.manifest["import"]
    assert info["torch_roundtrip"]["max_abs_diff"] < 1e-9
    assert info["library_roundtrip"]["max_abs_diff"] < 1e-9
    assert 1e-9 < info["torch_roundtrip"]["max_abs_diff_float32_module"] < 1e-5  # the connector's float32
    x = np.random.default_rng(5).normal(size=(200, 5))
    with torch.no_grad():
        ref64 = (
            net[3]
            .double()(
                torch.from_numpy(
                    np.asarray(
                        net[2].neural_network.forward(
                            torch.tanh(net[0].double()(torch.from_numpy(x))).numpy(),
                            net[2].weight.detach().numpy().astype(float),
                        )
                    )
                )
            )
            .numpy()
        )
        net.float()
        ref32 = net(torch.from_numpy(x).float()).numpy()
    from qmltest.interop.roundtrip import model_outputs

    assert np.max(np.abs(model_outputs(model, model.encode(x)) - ref64)) < 1e-9
    _margin_agree(model.predict(model_probabilities(model, x)), ref32)


def test_qnn_with_a_one_logit_head_reads_two_classes_by_sign() -> None:
    torch = pytest.importorskip("torch")
    from qiskit_machine_learning.connectors import TorchConnector

    from qmltest.interop import from_torch

    torch.manual_seed(3)
    net = torch.nn.Sequential(TorchConnector(_qnn(SUM_AND_PAIR)), torch.nn.Linear(2, 1))
    model = from_torch(net)
    assert model.classes == [-1, 1]
    x = np.random.default_rng(1).uniform(-np.pi, np.pi, size=(200, 3))
    with torch.no_grad():
        ref = net(torch.from_numpy(x).float()).numpy()
    _margin_agree(model.predict(model_probabilities(model, x)), ref)


def test_sampler_qnn_in_a_connector_matches_its_class_probabilities() -> None:
    torch = pytest.importorskip("torch")
    from qiskit_machine_learning.connectors import TorchConnector

    from qmltest.interop import from_torch

    fm, an = zz_feature_map(2), real_amplitudes(2, reps=1)
    qnn = SamplerQNN(
        circuit=fm.compose(an),
        input_params=fm.parameters,
        weight_params=an.parameters,
        interpret=lambda s: bin(s).count("1") % 2,
        output_shape=2,
    )
    torch.manual_seed(1)
    model = from_torch(torch.nn.Sequential(torch.nn.Linear(4, 2), TorchConnector(qnn)))
    assert model.manifest["import"]["torch_roundtrip"]["max_abs_diff"] < 1e-9
    assert model.manifest["readout"]["kind"] == "map"


@pytest.mark.parametrize(
    "layers, message",
    [
        (lambda t, c: t.nn.Sequential(c, t.nn.Linear(2, 4), t.nn.Linear(4, 3)), "one Linear layer"),
        (lambda t, c: t.nn.Sequential(t.nn.Linear(3, 3), t.nn.ReLU6(), c), "ReLU6"),
        (lambda t, c: t.nn.Sequential(t.nn.Linear(3, 3)), "exactly one TorchConnector"),
        (lambda t, c: t.nn.Sequential(c, t.nn.Tanh()), "one Linear layer"),
    ],
)
def test_unsupported_hybrids_are_refused_in_one_line(layers, message) -> None:
    torch = pytest.importorskip("torch")
    from qiskit_machine_learning.connectors import TorchConnector

    from qmltest.interop import from_torch

    with pytest.raises(InputError, match=message) as err:
        from_torch(layers(torch, TorchConnector(_qnn(SUM_AND_PAIR))))
    assert "\n" not in str(err.value)


def test_head_is_one_score_matrix_under_shots() -> None:
    """Counts @ W gives S times the head's logits of the estimated expectation values, so argmax
    under shots is the head's argmax of the sampled <O_j> (readout module docstring)."""
    head = {"weight": [[1.0, -2.0], [0.5, 0.3], [-1.0, 0.0]], "bias": [0.1, -0.2, 0.05]}
    obs = ["0.5*ZZI+0.5*IZZ", "ZIZ"]
    w = readout.expectation_matrix(obs, [0, 1, 2], head=head)
    rng = np.random.default_rng(0)
    counts = rng.multinomial(1000, rng.dirichlet(np.ones(8)), size=20).astype(float)
    values = readout.expectation_values(counts / 1000, obs, [0, 1, 2])
    assert np.allclose(counts @ w, 1000 * readout.head_outputs(values, head), atol=1e-9)


def test_bare_qnn_head_is_checked_against_forward_and_shape_errors_are_refused() -> None:
    from qmltest.interop import from_qiskit_ml

    qnn = _qnn(SUM_AND_PAIR)
    w = np.linspace(-1, 1, qnn.num_weights)
    model = from_qiskit_ml(qnn, w, head={"weight": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], "bias": [0, 0, 0.1]})
    assert model.num_classes == 3 and model.manifest["import"]["library_roundtrip"]["max_abs_diff"] < 1e-9
    with pytest.raises(InputError, match=r"weight must be \(classes, 2\)"):
        from_qiskit_ml(qnn, w, head={"weight": [[1.0, 0.0, 2.0]], "bias": [0.0]})
    with pytest.raises(InputError, match="own bias"):
        from_qiskit_ml(qnn, w, head={"weight": [[1.0, 0.0]], "bias": [0.0]}, threshold=0.1)
