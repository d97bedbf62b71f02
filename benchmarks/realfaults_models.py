"""The models of the real-fault study: shipped ones, and two imported the way a user imports them
(a qiskit-machine-learning VQC fit with COBYLA, a PennyLane QNode trained by gradient descent), so
the study does not rest on models qmltest made itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qmltest.data import datasets
from qmltest.model import artifact
from qmltest.model.artifact import Model

SHIPPED = ("zfm-ra-iris", "zfm-ra-breast_cancer", "zzfm-su2-iris", "qcl-mnist01", "hqnn-mnist01", "drnn-mnist01")
QUICK = ("zfm-ra-iris", "qcl-mnist01")
IMPORTED = ("qiskit-ml-vqc-iris", "pennylane-qnode-breast_cancer")


def _train(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    ds = datasets.load(dataset)
    idx = datasets.split_indices(ds.y, "train")
    return ds.x[idx], ds.y[idx]


def qiskit_ml_vqc() -> Model:
    """VQC(z_feature_map(4), real_amplitudes(4, reps=2)) on iris, MinMaxScaler, COBYLA(60)."""
    from qiskit.circuit.library import real_amplitudes, z_feature_map
    from qiskit_machine_learning.algorithms import VQC
    from qiskit_machine_learning.optimizers import COBYLA
    from qiskit_machine_learning.utils import algorithm_globals
    from sklearn.preprocessing import MinMaxScaler

    from qmltest.interop.qiskit_ml import from_qiskit_ml

    algorithm_globals.random_seed = 7
    x, y = _train("iris")
    scaler = MinMaxScaler().fit(x)
    vqc = VQC(
        feature_map=z_feature_map(4),
        ansatz=real_amplitudes(4, reps=2),
        optimizer=COBYLA(maxiter=60),
        output_shape=3,
        initial_point=np.random.default_rng(7).uniform(-np.pi, np.pi, 12),
    )
    vqc.fit(scaler.transform(x), y)
    model = from_qiskit_ml(vqc, preprocessing=scaler, name="qiskit-ml-vqc-iris")
    return model.with_manifest(training={"dataset": "iris", "classes": [0, 1, 2]})


def pennylane_qnode() -> Model:
    """AngleEmbedding(rotation='Y') + StronglyEntanglingLayers(2) on breast_cancer (StandardScaler,
    PCA to 4), probs of wires 0 and 1 read as x % 2; 40 Adam steps on a seeded sample."""
    import pennylane as qml
    from pennylane import numpy as pnp
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    from qmltest.interop.pennylane import from_pennylane

    x, y = _train("breast_cancer")
    prep = make_pipeline(StandardScaler(), PCA(4), MinMaxScaler((0, np.pi))).fit(x)
    dev = qml.device("default.qubit", wires=4)

    @qml.qnode(dev)
    def circuit(features, weights):
        qml.AngleEmbedding(features, wires=range(4), rotation="Y")
        qml.StronglyEntanglingLayers(weights, wires=range(4))
        return qml.probs(wires=[0, 1])

    rng = np.random.default_rng(7)
    weights = pnp.array(rng.uniform(0, 2 * np.pi, (2, 4, 3)), requires_grad=True)
    sample = rng.choice(len(x), 60, replace=False)
    feats, labels = prep.transform(x[sample]), y[sample]

    def loss(w):
        p = circuit(feats, w)  # broadcast over the batch: one tape
        p1 = p[:, 1] + p[:, 3]  # x % 2: class 1 when qubit 0 reads 1 (wire 0 is the first index bit)
        return pnp.mean((p1 - labels) ** 2)

    opt = qml.AdamOptimizer(0.1)
    for _ in range(40):
        weights = opt.step(loss, weights)
    model = from_pennylane(
        circuit,
        [np.asarray(weights)],
        num_features=4,
        classes=[0, 1],
        readout="map",
        readout_map=[0, 1, 0, 1],
        preprocessing=prep,
        name="pennylane-qnode-breast_cancer",
    )
    return model.with_manifest(training={"dataset": "breast_cancer", "classes": [0, 1]})


def load(name: str, cache: Path | None = None) -> Model:
    """A shipped model, or an imported one (trained once, then read from `cache`/NAME)."""
    builders = {"qiskit-ml-vqc-iris": qiskit_ml_vqc, "pennylane-qnode-breast_cancer": pennylane_qnode}
    if name not in builders:
        return artifact.load(f"data/models/{name}")
    if cache is not None and (cache / name / "model.json").is_file():
        return artifact.load(cache / name)
    model = builders[name]()
    if cache is not None:
        model.save(cache / name)
        return artifact.load(cache / name)
    return model
