"""Readout specs of an imported circuit: the manifest readout and class labels of each readout
kind (basis, parity, modulo, map, expectation), of a regressor (one expectation value) and of a
kernel SVM over the circuit as its feature map (`qmltest.model.kernel`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from qmltest.errors import InputError
from qmltest.model import readout as ro


def readout_spec(
    kind: str,
    measured: list[int],
    classes: list | None,
    readout_map: Sequence[int] | None,
    interpret: Callable[[int], int] | None,
    observables: Sequence[str] | None,
    threshold: float,
    num_qubits: int,
    warnings: list[str] | None = None,
    head: dict | None = None,
    task: str = "classification",
    kernel: dict | None = None,
) -> tuple[dict, list]:
    """(manifest readout, class labels) for one of the readout kinds.

    A class the readout never predicts is an error, or, when `warnings` is a list (mirroring a
    library model as it is), a note appended to it. A regressor (`task`) reads one expectation
    value (or a one-row head over several) and has no classes.
    """
    if task not in TASKS:
        raise InputError(f"task must be one of {', '.join(TASKS)}, got '{task}'")
    if (kind == "kernel") != (kernel is not None):
        raise InputError("a kernel readout needs the SVM's numbers (--kernel FILE.npz), and they need readout 'kernel'")
    if kernel is not None:
        return _kernel_spec(kernel, classes, task, num_qubits)
    if task == "regression":
        return _regression_spec(kind, classes, observables, threshold, num_qubits, head), []
    if kind == "expectation":
        return _expectation_spec(classes, observables, threshold, num_qubits, head)
    if head is not None:
        raise InputError("a linear head reads expectation values: use readout 'expectation'")
    if observables:
        raise InputError("observables are read only by --readout expectation")
    m = len(measured)
    if kind == "map" or interpret is not None:
        if interpret is not None:
            try:
                mapping = [interpret(s) for s in range(2**m)]
            except Exception as exc:
                raise InputError(f"the interpret function failed: {type(exc).__name__}: {exc}") from None
            if any(not isinstance(c, (int, np.integer)) for c in mapping):
                raise InputError("the interpret function must return one integer class index per bitstring")
        elif readout_map is None:
            raise InputError("readout 'map' needs the table (--map c0,c1,...: one class index per basis state)")
        else:
            mapping = list(readout_map)
        mapping = [int(c) for c in mapping]
        if len(mapping) != 2**m:
            raise InputError(f"the readout map has {len(mapping)} entries but {m} measured qubits have {2**m} states")
        count = len(classes) if classes is not None else max(mapping) + 1
        kind = "map"
    else:
        if classes is None:
            raise InputError(f"readout '{kind}' needs the class labels (--classes)")
        count = len(classes)
        mapping = ro.table(kind, m, count)
    labels = list(classes) if classes is not None else list(range(count))
    if len(set(map(repr, labels))) != len(labels):
        raise InputError(f"class labels must be distinct, got {labels}")
    if len(labels) < 2:
        raise InputError("a classifier needs at least two classes")
    bad = [c for c in mapping if not -1 <= c < count]
    if bad:
        raise InputError(f"readout map entry {bad[0]} is not a class index of {count} classes")
    never = [labels[c] for c in range(count) if c not in mapping]
    if never:
        msg = f"readout '{kind}' over {m} measured qubit(s) never predicts class(es) {never}"
        if warnings is None:
            raise InputError(f"{msg}: measure more qubits (--measure) or change the readout")
        warnings.append(msg)
        return {"kind": kind, "qubits": list(measured), "map": mapping, "allow_unreachable": True}, labels
    return {"kind": kind, "qubits": list(measured), "map": mapping}, labels


def _expectation_spec(
    classes: list | None, observables: Sequence[str] | None, threshold: float, num_qubits: int, head: dict | None
) -> tuple[dict, list]:
    """A classifier's expectation readout: the sign (or threshold) of one observable, the argmax of
    several, or a linear head's logits."""
    obs = [ro.canonical(o) for o in observables or []]
    outputs = len(obs) if head is None else len(head["bias"])
    count = len(classes) if classes is not None else (2 if outputs == 1 else outputs)
    ro.check_observables(obs, num_qubits, count, head)
    if head is not None and threshold:
        raise InputError("a linear head carries its own bias: give no threshold")
    bound = max(sum(abs(c) for c, p in ro.terms(o) if set(p) != {"I"}) for o in obs)
    if not -bound < threshold < bound:
        raise InputError(f"threshold must lie in (-{bound:g}, {bound:g}), the observable's range, got {threshold}")
    labels = list(classes) if classes is not None else ([-1, 1] if outputs == 1 else list(range(outputs)))
    spec = {"kind": "expectation", "qubits": ro.support(obs), "observables": obs}
    if threshold:
        spec["threshold"] = float(threshold)
    if head is not None:
        spec["head"] = head
    return spec, labels


TASKS = ("classification", "regression")
UNTRAINED = (
    "the circuit has no trained weight (no weight parameter, no angle off a multiple of pi/4): it is read as an "
    "untrained classifier; a kernel's feature map (QSVC) is a model only with its SVM (--kernel SVM.npz)"
)


def _kernel_spec(a: dict, classes: list | None, task: str, n: int) -> tuple[dict, list]:
    """A kernel SVM's readout (`qmltest.model.kernel`) and its class labels (none for a regressor)."""
    from qmltest.model import kernel as kernel_model

    labels = list(classes) if classes is not None else a.get("classes")
    if task == "regression":
        if classes:
            raise InputError("a kernel regressor (QSVR) has no classes: give no class labels")
        labels = []
    elif labels is None or len(labels) != 2:
        raise InputError("a kernel classifier needs its two class labels (the NPZ's classes, or --classes)")
    spec = kernel_model.spec_of(a["support_vectors"], a["dual_coef"], a["intercept"], n, a.get("estimator", "SVM"))
    return spec, labels


def _regression_spec(
    kind: str, classes: list | None, observables: Sequence[str] | None, threshold: float, n: int, head: dict | None
) -> dict:
    """A regressor's readout: the expectation value of one observable, or a one-row linear head
    over several (EstimatorQNN + NeuralNetworkRegressor / VQR, or a torch head with one output)."""
    if kind != "expectation":
        raise InputError(f"a regressor reads an expectation value: use readout 'expectation', not '{kind}'")
    if classes:
        raise InputError("a regressor has no classes: give no class labels")
    if threshold:
        raise InputError("a regressor outputs its value: a threshold reads classes")
    obs = [ro.canonical(o) for o in observables or []]
    ro.check_observables(obs, n, 0, head)
    spec = {"kind": "expectation", "qubits": ro.support(obs), "observables": obs}
    if head is not None:
        spec["head"] = head
    return spec
