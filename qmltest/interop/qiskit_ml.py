"""`from_qiskit_ml`: a trained Qiskit Machine Learning classifier or QNN -> a qmltest Model.

Supported: `VQC` (readout ``x % C`` over all qubits, its default interpret), `NeuralNetworkClassifier`
around a `SamplerQNN` (its interpret function tabulated over the bitstrings) or an `EstimatorQNN`
(its observables: one -> sign, the binary classifier's labels -1/+1; several -> argmax), and bare
QNNs with weights given. Class labels come from the classifier's fitted target encoder.

The model mirrors the library's forward pass as it is: qiskit-machine-learning 0.9.1's VQC binds
its default interpret as ``x % 2`` at construction and keeps it when fit on more classes (pass
``output_shape=C`` to get ``x % C``); such a model never predicts class 2 and later, and the import
records that in ``import.warnings`` instead of silently "fixing" it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from qmltest.errors import InputError
from qmltest.interop import roundtrip
from qmltest.interop.circuit import from_circuit
from qmltest.interop.preprocessing import to_head
from qmltest.model import artifact, readout


def _labels(clf: object, count: int) -> list | None:
    enc = getattr(clf, "_target_encoder", None)
    for attr in ("categories_", "classes_"):
        cats = getattr(enc, attr, None)
        if cats is not None:
            cats = cats[0] if attr == "categories_" else cats
            return [c.item() if isinstance(c, np.generic) else c for c in cats]
    return None


def pauli_strings(observables: object) -> list[str]:
    """EstimatorQNN observables -> one readout observable each: a Pauli string, or a weighted sum of
    Pauli strings ('0.5*ZZII+0.5*IIZZ') for a SparsePauliOp of several terms with real coefficients."""
    out = []
    for obs in observables if isinstance(observables, (list, tuple)) else [observables]:
        paulis = getattr(obs, "paulis", None)
        coeffs = getattr(obs, "coeffs", None)
        if paulis is None or coeffs is None:
            raise InputError(f"observable {obs!r} is not a SparsePauliOp")
        parts = []
        for pauli, coef in zip(paulis, coeffs):
            label = pauli.to_label()
            phase = {"": 1, "-": -1, "i": 1j, "-i": -1j}[label[: len(label) - len(label.lstrip("-i"))]]
            c = complex(coef) * phase
            if abs(c.imag) > 1e-12:
                raise InputError(f"observable term {label} has the complex coefficient {c}: only real weights read out")
            parts.append((float(c.real), label.lstrip("-i")))
        out.append(readout.written(parts))
    return out


def from_qiskit_ml(
    obj: object,
    weights: Sequence[float] | np.ndarray | None = None,
    *,
    classes: Sequence | None = None,
    preprocessing: object = None,
    head: object = None,
    name: str = "imported",
    threshold: float = 0.0,
    task: str | None = None,
) -> artifact.Model:
    """Convert a VQC, a NeuralNetworkClassifier(SamplerQNN | EstimatorQNN), a VQR or a
    NeuralNetworkRegressor(EstimatorQNN), or a bare QNN (weights given), with classical layers
    before it (`preprocessing`) and a linear `head` after an EstimatorQNN. The model is checked
    against the QNN's own `forward` (plus the head) to 1e-9.

    `task`: a regressor's model outputs <O> itself (manifest task 'regression'); VQR and
    NeuralNetworkRegressor are regressors, classifiers are classifiers, and a bare EstimatorQNN is
    read as a sign classifier unless task='regression' is given (the import records which).
    QSVC, PegasosQSVC and QSVR become kernel models (`interop.svm.from_kernel`)."""
    from qmltest.interop import svm

    if svm.is_kernel_object(obj):
        return svm.from_kernel(obj, preprocessing=preprocessing, name=name)
    task = _task(obj, task)
    qnn = getattr(obj, "neural_network", None)
    clf = obj if qnn is not None else None
    qnn = qnn if qnn is not None else obj
    kind = type(qnn).__name__
    if kind not in ("SamplerQNN", "EstimatorQNN"):
        raise InputError(f"{type(obj).__name__}: expected a VQC, a NeuralNetworkClassifier or a Sampler/EstimatorQNN")
    if weights is None:
        fit = getattr(clf, "_fit_result", None)
        if fit is None:
            raise InputError(f"{type(obj).__name__} is not trained: fit it first or pass the weights")
        weights = np.asarray(fit.x, dtype=float)
    circuit = qnn.circuit
    inputs = list(qnn.input_params)
    weight_params = list(qnn.weight_params)
    values = np.asarray(weights, dtype=float).ravel()
    if len(values) != len(weight_params):
        raise InputError(f"the QNN has {len(weight_params)} weights but {len(values)} were given")
    by_name = {p.name: float(v) for p, v in zip(weight_params, values)}  # the QNN's own weight order
    provenance = {"library": "qiskit-machine-learning", "object": type(obj).__name__, "qnn": kind}
    if task == "regression":
        return _regressor(qnn, circuit, by_name, inputs, values, preprocessing, head, name, provenance)
    if kind == "SamplerQNN":
        return _sampler(qnn, clf, circuit, by_name, inputs, values, classes, preprocessing, head, name, provenance)
    observables = pauli_strings(qnn.observables)
    head = to_head(head)
    bare_sign = clf is None and head is None and len(observables) == 1 and classes is None
    if head is not None:
        labels = list(classes) if classes is not None else None
    elif len(observables) == 1:
        labels = list(classes) if classes is not None else [-1, 1]  # NeuralNetworkClassifier: np.sign
    else:
        labels = list(classes) if classes is not None else (_labels(clf, len(observables)) if clf else None)
        labels = labels if labels is not None else list(range(len(observables)))
    model = from_circuit(
        circuit,
        by_name,
        inputs,
        readout="expectation",
        observables=observables,
        classes=labels,
        threshold=threshold,
        preprocessing=preprocessing,
        head=head,
        name=name,
        provenance=provenance,
        lenient=True,
    )
    if bare_sign:
        model.manifest["import"]["warnings"].append(
            "a bare EstimatorQNN is read as a classifier by the sign of <O> (labels -1, 1), as "
            "NeuralNetworkClassifier reads it; pass task='regression' (qmltest import --task regression) for its values"
        )
    return _checked(model, qnn, values, head)


def _sampler(qnn, clf, circuit, by_name: dict, inputs: list, values, classes, preprocessing, head, name, provenance):
    """A SamplerQNN classifier: its interpret function tabulated over the bitstrings."""
    if head is not None:
        raise InputError("a linear head reads expectation values: it follows an EstimatorQNN, not a SamplerQNN")
    count = int(np.prod(qnn.output_shape))
    labels = list(classes) if classes is not None else (_labels(clf, count) if clf is not None else None)
    interpret = getattr(qnn, "_interpret", None) or getattr(qnn, "interpret", None)
    if interpret is None:
        raise InputError("SamplerQNN without an interpret function outputs 2^n probabilities: give one to classify")
    model = from_circuit(
        circuit,
        by_name,
        inputs,
        readout="map",
        interpret=interpret,
        classes=labels if labels is not None else list(range(count)),
        preprocessing=preprocessing,
        name=name,
        provenance=provenance,
        lenient=True,
    )
    return _checked(model, qnn, values, None, per_class=True)


REGRESSORS = ("VQR", "NeuralNetworkRegressor")


def _task(obj: object, task: str | None) -> str:
    """The model's task: given, or the library object's own (a regressor class is a regressor)."""
    own = "regression" if type(obj).__name__ in REGRESSORS else None
    if task is None:
        return own or "classification"
    if own and task != own:
        raise InputError(f"{type(obj).__name__} is a regressor: it outputs values, it cannot be read as a {task}")
    if task not in ("classification", "regression"):
        raise InputError(f"task must be 'classification' or 'regression', got '{task}'")
    return task


def _regressor(qnn, circuit, by_name: dict, inputs: list, values: np.ndarray, preprocessing, head, name, provenance):
    """A regressor: the EstimatorQNN's one output <O> (or a one-row head over its outputs)."""
    if type(qnn).__name__ != "EstimatorQNN":
        raise InputError(
            f"a regressor around a {type(qnn).__name__} outputs probabilities: qmltest reads a regressor's "
            "value from an EstimatorQNN's observable"
        )
    head = to_head(head)
    model = from_circuit(
        circuit,
        by_name,
        inputs,
        readout="expectation",
        observables=pauli_strings(qnn.observables),
        preprocessing=preprocessing,
        head=head,
        name=name,
        provenance=provenance,
        lenient=True,
        task="regression",
    )
    return _checked(model, qnn, values, head)


def _checked(model: artifact.Model, qnn: object, weights: np.ndarray, head: dict | None, per_class: bool = False):
    """The model against the QNN's own forward pass on random inputs (roundtrip.check), recorded."""

    def forward(x: np.ndarray) -> np.ndarray:
        out = np.asarray(qnn.forward(x, weights), dtype=float).reshape(len(x), -1)  # type: ignore[attr-defined]
        return readout.head_outputs(out, head)

    diff = roundtrip.check(model, forward, f"{type(qnn).__name__}.forward", seed=1, per_class=per_class)
    model.manifest["import"]["library_roundtrip"] = {
        "against": f"qiskit_machine_learning {type(qnn).__name__}.forward",
        "inputs": roundtrip.inputs_for(model.ir.num_qubits),
        "max_abs_diff": diff,
    }
    return model
