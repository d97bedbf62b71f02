"""Training on the batched engine: cross-entropy over class probabilities, adjoint gradients, L-BFGS-B.

One forward and one backward sweep give the exact gradient for all weights (and, per input, for the
feature angles, which trains HQNN's classical linear layer by the chain rule).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from qmltest.data import datasets
from qmltest.data.preprocess import amplitude_states, preprocess
from qmltest.errors import InputError
from qmltest.model import artifact, qasm, readout
from qmltest.model import ir as irmod
from qmltest.simulate import statevector
from qmltest.simulate.runner import model_probabilities
from qmltest.zoo import architectures as archs

EPS = 1e-12
LINEAR_DECAY = 1e-2


@dataclass(frozen=True)
class Recipe:
    """How an architecture meets a dataset: preprocessing and sample counts."""

    arch: str
    dataset: str
    classes: tuple[int, ...]
    train_per_class: int = 200
    maxiter: int = 150


def fit_preprocessing(arch: str, dataset: str, x: np.ndarray, num_features: int, image: bool) -> list[dict]:
    """Preprocessing steps fitted on training data only."""
    if arch in ("qcl", "ccqc", "qcnn", "hcqc_so4", "hcqc_su4", "hcqc_ttn"):
        if not image:
            raise InputError(f"{arch} uses amplitude encoding of 16x16 images; '{dataset}' is not an image set")
        side = int(round(np.sqrt(x.shape[1])))
        return [{"op": "resize", "from": [side, side], "to": [16, 16]}]
    if arch == "drnn":
        side = int(round(np.sqrt(x.shape[1])))
        steps = [{"op": "resize", "from": [side, side], "to": [8, 8]}] if image and side != 8 else []
        z = preprocess(steps, x) if steps else x
        hi = float(z.max()) or 1.0
        return steps + [{"op": "affine", "scale": [float(np.pi / hi)] * z.shape[1], "offset": [0.0] * z.shape[1]}]
    if arch == "hqnn":
        hi = float(x.max()) or 1.0
        z = x / hi
        mean = z.mean(axis=0)
        _, _, vt = np.linalg.svd(z - mean, full_matrices=False)
        comps = vt[:num_features]
        proj = (z - mean) @ comps.T
        scale = np.pi / (np.abs(proj).max(axis=0) + EPS) / 2
        weight = comps * scale[:, None]
        bias = -mean @ weight.T + np.pi / 2
        width = x.shape[1]
        return [
            {"op": "affine", "scale": [1.0 / hi] * width, "offset": [0.0] * width},
            {"op": "linear", "weight": weight.tolist(), "bias": bias.tolist()},
        ]
    # Qiskit ML family: standardize, PCA to the qubit count when needed, scale to [0, pi].
    mean, std = x.mean(axis=0), x.std(axis=0) + EPS
    steps: list[dict] = [{"op": "affine", "scale": (1 / std).tolist(), "offset": (-mean / std).tolist()}]
    z = preprocess(steps, x)
    if z.shape[1] > num_features:
        _, _, vt = np.linalg.svd(z - z.mean(axis=0), full_matrices=False)
        steps.append({"op": "pca", "mean": z.mean(axis=0).tolist(), "components": vt[:num_features].tolist()})
        z = preprocess(steps[-1:], z)
    lo, hi = z.min(axis=0), z.max(axis=0)
    steps.append(
        {
            "op": "affine",
            "scale": (np.pi / (hi - lo + EPS)).tolist(),
            "offset": (-lo * np.pi / (hi - lo + EPS)).tolist(),
        }
    )
    return steps


def loss_and_lambda(
    psi: np.ndarray, y: np.ndarray, measured: list[int], n: int, cmat: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """Mean cross-entropy of class probabilities, dL/d(conj psi), and the class probabilities."""
    p = statevector.marginal_probabilities(psi, measured, n)
    pc = p @ cmat
    z = pc.sum(axis=1) + EPS
    py = pc[np.arange(len(y)), y] + EPS
    loss = float(np.mean(-np.log(py) + np.log(z)))
    dp = (-cmat[:, y].T / py[:, None] + cmat.sum(axis=1)[None, :] / z[:, None]) / len(y)
    lam = dp[:, statevector.state_index_map(measured, n)] * psi
    return loss, lam, pc / z[:, None]


def train(
    arch_name: str,
    dataset: str,
    classes: list[int],
    seed: int = 7,
    train_per_class: int = 200,
    maxiter: int = 150,
    progress: Callable[[int, float], None] | None = None,
    restarts: int = 1,
) -> artifact.Model:
    """Train an architecture on a dataset's train split; returns the model with weights bound."""
    ds = datasets.load(dataset)
    x_all, y_all = datasets.select(dataset, "train", classes, train_per_class, seed)
    label_index = {c: i for i, c in enumerate(classes)}
    y = np.array([label_index[c] for c in y_all])
    built = archs.get(arch_name).build(len(classes))
    num_features = len(built.features)
    steps = fit_preprocessing(arch_name, dataset, x_all, num_features, ds.image_shape is not None)
    n = built.num_qubits
    circuit = built.circuit()
    ops = statevector.compile_circuit(circuit)
    mapping = readout.table(built.readout, len(built.measured), len(classes))
    cmat = readout.class_matrix(mapping, len(classes))
    linear = steps[-1] if steps and steps[-1]["op"] == "linear" else None
    head = steps[:-1] if linear else steps
    z = preprocess(head, x_all)
    nw = len(built.weights)
    lin_shape = np.asarray(linear["weight"]).shape if linear else (0, 0)
    lin0 = [np.ravel(linear["weight"]), np.asarray(linear["bias"])] if linear else []
    starts = _starts(built.encoding, nw, lin0, seed, restarts)
    theta0 = starts[0]
    wrt = list(built.weights) + list(built.features)
    last_loss, iteration = [float("nan")], [0]

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        values = {p: np.asarray(v) for p, v in zip(built.weights, theta[:nw])}
        if built.encoding == "amplitude":
            psi0 = amplitude_states(z, n)
        else:
            feats = z
            if linear:
                wl = theta[nw : nw + lin_shape[0] * lin_shape[1]].reshape(lin_shape)
                feats = z @ wl.T + theta[nw + wl.size :]
            values.update({p: feats[:, i] for i, p in enumerate(built.features)})
            psi0 = statevector.zero_states(len(z), n)
        psi = statevector.run(ops, psi0, values, n, zero=built.encoding != "amplitude")
        loss, lam, _ = loss_and_lambda(psi, y, built.measured, n, cmat)
        per_input, total = statevector.adjoint_gradient(ops, psi, lam, values, n, wrt)
        grad = [total[:nw]]
        if linear:
            gfeat = per_input[:, nw:]
            # L2 pull towards the PCA initialization keeps the classical layer from memorizing
            drift = theta[nw : nw + wl.size] - theta0[nw : nw + wl.size]
            loss += 0.5 * LINEAR_DECAY * float(drift @ drift)
            grad += [(gfeat.T @ z).ravel() + LINEAR_DECAY * drift, gfeat.sum(axis=0)]
        last_loss[0] = loss
        return loss, np.concatenate(grad)

    def on_iteration(_: np.ndarray) -> None:
        iteration[0] += 1
        if progress:
            progress(iteration[0], last_loss[0])

    res = None
    for start in starts:  # multi-start: small circuits have many poor local minima
        iteration[0] = 0
        trial = minimize(
            objective, start, jac=True, method="L-BFGS-B", options={"maxiter": maxiter}, callback=on_iteration
        )
        if res is None or trial.fun < res.fun:
            res = trial
    assert res is not None
    theta = res.x
    if linear:  # the classical layer as trained
        steps[-1] = _linear_step(theta[nw:], lin_shape)
    bound = circuit.assign_parameters(dict(zip(built.weights, theta[:nw])))
    model = _to_model(arch_name, built, bound, steps, mapping, classes, dataset)
    training = _record(model, dataset, classes, seed, res, restarts, x_all, y_all)
    return model.__class__(model.qasm_text, model.ir, dict(model.manifest, training=training), model.source)


def _linear_step(values: np.ndarray, shape: tuple[int, int]) -> dict:
    """A trained linear step from the optimizer's values past the circuit weights."""
    wl = values[: shape[0] * shape[1]].reshape(shape)
    return {"op": "linear", "weight": wl.tolist(), "bias": values[wl.size :].tolist()}


def _starts(encoding: str, nw: int, lin0: list, seed: int, restarts: int) -> list[np.ndarray]:
    """The optimizer's starting points: small random weights (amplitude) or half-range angles,
    then the classical layer's initial values; one per restart."""
    starts = []
    for r in range(max(1, restarts)):
        rng = np.random.default_rng(seed if r == 0 else [seed, r])
        w0 = rng.uniform(-0.1, 0.1, nw) if encoding == "amplitude" else rng.uniform(-np.pi, np.pi, nw) * 0.5
        starts.append(np.concatenate([w0, *lin0]))
    return starts


def _record(model: artifact.Model, dataset: str, classes: list[int], seed: int, res, restarts: int, x, y) -> dict:
    """The manifest's training record: optimizer, loss, train and test accuracy."""
    x_test, y_test = datasets.select(dataset, "test", classes)
    return {
        "dataset": dataset,
        "classes": classes,
        "seed": seed,
        "optimizer": "L-BFGS-B (adjoint gradient)",
        "iterations": int(res.nit),
        "restarts": max(1, restarts),
        "final_loss": float(res.fun),
        "train_samples": len(y),
        "train_accuracy": accuracy(model, x, y),
        "test_accuracy": accuracy(model, x_test, y_test),
        "test_samples": len(y_test),
    }


def accuracy(model: artifact.Model, x: np.ndarray, labels: np.ndarray) -> float:
    idx = {c: i for i, c in enumerate(model.classes)}
    y = np.array([idx[c] for c in labels])
    return float(np.mean(model.predict(model_probabilities(model, x)) == y))


def _to_model(arch_name, built, bound, steps, mapping, classes, dataset) -> artifact.Model:
    qc = bound.copy()
    qc.barrier()
    from qiskit.circuit import ClassicalRegister

    creg = ClassicalRegister(len(built.measured), "meas")
    qc.add_register(creg)
    for c, q in enumerate(built.measured):
        qc.measure(q, creg[c])
    text = qasm.dumps(qc)
    circuit, spans = qasm.loads(text)
    names = [p.name for p in built.features]
    inputs = qasm.inputs_by_name(circuit, names, "exported model")
    table, start = [], 0
    for name, kind, frag in built.layers:
        size = sum(1 for inst in frag.data if inst.operation.name != "barrier")
        table.append({"name": name, "kind": kind, "start": start, "stop": start + size})
        start += size
    model_ir, table = irmod.build(circuit, inputs, table, spans)
    manifest = {
        "format_version": artifact.FORMAT_VERSION,
        "name": f"{arch_name}-{dataset}{''.join(str(c) for c in classes)}",
        "arch": arch_name,
        "num_qubits": built.num_qubits,
        "feature_names": names,
        "encoding": {"kind": "amplitude", "dim": 2**built.num_qubits, "padding": 0.0}
        if built.encoding == "amplitude"
        else {"kind": "angle"},
        "preprocessing": steps,
        "readout": {"kind": built.readout, "qubits": built.measured, "map": mapping},
        "classes": list(classes),
        "layers": table,
        "training": {},
        "qasm_sha256": qasm.sha256(text),
    }
    return artifact.Model(text, model_ir, manifest, manifest["name"])
