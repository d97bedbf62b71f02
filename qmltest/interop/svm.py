"""`from_qiskit_ml` for kernel models: QSVC, PegasosQSVC and QSVR over a FidelityQuantumKernel
become a qmltest kernel model (`qmltest.model.kernel`): the feature map as the circuit, the SVM's
support vectors, dual coefficients and intercept in the readout. The model is checked against the
library's own decision function (QSVR: predict) to 1e-9, as every import is.

For the CLI the SVM's numbers travel as an NPZ (`export`, `load_npz`): arrays support_vectors
(m, F), dual_coef (m,), intercept (), and classes (2,) for a classifier; never a pickle.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from qmltest.errors import InputError
from qmltest.model import artifact
from qmltest.util.files import readable

ESTIMATORS = ("QSVC", "PegasosQSVC", "QSVR")


def is_kernel_object(obj: object) -> bool:
    """A kernel estimator or a bare quantum kernel."""
    return (
        getattr(obj, "quantum_kernel", None) is not None
        or hasattr(obj, "evaluate_duplicates")  # a bare FidelityQuantumKernel
        or type(obj).__name__ in ESTIMATORS
    )


def arrays(obj: object, x_train: np.ndarray | None = None) -> dict:
    """The SVM's numbers of a fitted QSVC, PegasosQSVC or QSVR: support vectors (the feature map's
    inputs), dual coefficients, intercept, classes (None for QSVR), and the estimator's name.
    Pegasos's decision sum_j a_j y_j (k_j + 1) is written as coefficients a_j y_j and intercept
    sum_j a_j y_j (its kernel offset of 1 folded in)."""
    name = type(obj).__name__
    if name not in ESTIMATORS:
        what = (
            "a quantum kernel alone is no model"
            if hasattr(obj, "evaluate_duplicates")
            else f"{name} is no kernel estimator"
        )
        raise InputError(f"{what}: import the QSVC, PegasosQSVC or QSVR fitted with it")
    if name == "PegasosQSVC":
        if getattr(obj, "_alphas", None) is None:
            raise InputError("PegasosQSVC is not trained: fit it first")
        idx = list(obj._alphas.keys())  # type: ignore[attr-defined]
        y = np.array([obj._label_map[v] for v in obj._y_train[idx]], dtype=float)  # type: ignore[attr-defined]
        coef = np.array(list(obj._alphas.values()), dtype=float) * y  # type: ignore[attr-defined]
        offset = float(getattr(obj, "_kernel_offset", 1))
        classes = [obj._label_neg, obj._label_pos]  # type: ignore[attr-defined]
        return _checked_arrays(obj._x_train[idx], coef, offset * coef.sum(), classes, name)  # type: ignore[attr-defined]
    if not hasattr(obj, "support_"):
        raise InputError(f"{name} is not trained: fit it first")
    fit_x = getattr(obj, "_BaseLibSVM__Xfit", None) if x_train is None else np.asarray(x_train, dtype=float)
    if fit_x is None:
        raise InputError(f"{name}: give the training inputs (x_train=) to recover its support vectors")
    classes = None if name == "QSVR" else [c.item() if isinstance(c, np.generic) else c for c in obj.classes_]  # type: ignore[attr-defined]
    sv = np.asarray(fit_x, dtype=float)[obj.support_]  # type: ignore[attr-defined]
    return _checked_arrays(sv, obj.dual_coef_[0], float(obj.intercept_[0]), classes, name)  # type: ignore[attr-defined]


def _checked_arrays(sv, coef, intercept: float, classes, name: str) -> dict:
    if classes is not None and len(classes) != 2:
        raise InputError(
            f"{name} over {len(classes)} classes decides by one-vs-one votes, which qmltest does not read: "
            "import a binary kernel classifier (or QSVR)"
        )
    return {
        "support_vectors": np.asarray(sv, dtype=float),
        "dual_coef": np.asarray(coef, dtype=float).ravel(),
        "intercept": float(intercept),
        "classes": classes,
        "estimator": name,
    }


def export(obj: object, path: str | Path, x_train: np.ndarray | None = None) -> Path:
    """Write a fitted kernel estimator's numbers as the NPZ `qmltest import --kernel` reads."""
    a = arrays(obj, x_train)
    extra = {} if a["classes"] is None else {"classes": np.asarray(a["classes"])}
    np.savez(path, support_vectors=a["support_vectors"], dual_coef=a["dual_coef"], intercept=a["intercept"], **extra)
    return Path(path)


def load_npz(path: str | Path) -> dict:
    """The SVM's numbers from an NPZ (pickle-free); classes None when the file has none (QSVR)."""
    path = readable(path, "an NPZ of a kernel SVM")
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: np.asarray(z[k]) for k in z.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:  # as datasets reads an NPZ
        raise InputError(f"{path}: not a readable NPZ file ({exc})") from None
    missing = [k for k in ("support_vectors", "dual_coef", "intercept") if k not in data]
    if missing:
        raise InputError(f"{path}: a kernel SVM needs arrays {', '.join(missing)} (it has {sorted(data)})")
    classes = data.get("classes")
    labels = None if classes is None else [c.item() if isinstance(c, np.generic) else c for c in classes.tolist()]
    return _checked_arrays(
        np.atleast_2d(data["support_vectors"].astype(float)),
        data["dual_coef"].astype(float),
        float(np.asarray(data["intercept"], dtype=float).ravel()[0]),
        labels,
        "kernel SVM",
    )


def from_kernel(
    obj: object,
    *,
    x_train: np.ndarray | None = None,
    preprocessing: object = None,
    name: str = "imported",
) -> artifact.Model:
    """A fitted QSVC, PegasosQSVC or QSVR as a kernel model, checked against its own decision
    function (QSVR: predict) on random inputs."""
    from qmltest.interop import roundtrip
    from qmltest.interop.circuit import from_circuit

    qk = getattr(obj, "quantum_kernel", None)
    a = arrays(obj, x_train)
    if qk is None or type(qk).__name__ != "FidelityQuantumKernel":
        raise InputError(
            f"{type(qk).__name__}: qmltest reads a FidelityQuantumKernel (trainable kernels: bind them first)"
        )
    fm = qk.feature_map
    provenance = {"library": "qiskit-machine-learning", "object": a["estimator"], "kernel": type(qk).__name__}
    model = from_circuit(
        fm, {}, list(fm.parameters), readout="kernel", kernel=a, preprocessing=preprocessing, name=name,
        provenance=provenance, task="regression" if a["classes"] is None else "classification",
    )  # fmt: skip
    library = obj.predict if a["classes"] is None else obj.decision_function  # type: ignore[attr-defined]
    diff = roundtrip.check(
        model,
        lambda x: np.asarray(library(x), dtype=float).reshape(-1, 1),
        f"{a['estimator']}'s decision",
        seed=1,
        decision=True,
    )
    model.manifest["import"]["library_roundtrip"] = {
        "against": f"qiskit_machine_learning {a['estimator']}.{library.__name__}",
        "inputs": roundtrip.inputs_for(model.ir.num_qubits),
        "max_abs_diff": diff,
    }
    return model
