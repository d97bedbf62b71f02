"""Accuracy of a model on labelled inputs: exact probabilities or shot-based majority predictions."""

from __future__ import annotations

import numpy as np

from qmltest import targets
from qmltest.data import labels as labels_mod
from qmltest.errors import InputError
from qmltest.model import readout
from qmltest.model.artifact import Model
from qmltest.simulate import engine, program
from qmltest.simulate import fake_device as device
from qmltest.simulate.backends import REGISTRY
from qmltest.simulate.runner import model_probabilities
from qmltest.util import budget as budget_mod
from qmltest.util import intervals
from qmltest.util.defaults import SHOTS  # noqa: F401  (the evaluate default)


def label_indices(model: Model, labels: np.ndarray) -> np.ndarray:
    """Dataset labels (whole numbers or names) -> the model's class indices; unknown labels are an
    input error (`qmltest.data.labels`)."""
    return labels_mod.indices(model.classes, labels)


def evaluate(
    model: Model,
    x: np.ndarray,
    labels: np.ndarray,
    shots: int | None,
    seed: int = 0,
    backend: str | None = None,
    noise: object = None,
    where: object = None,
    budget: int | None = None,
) -> dict:
    """Accuracy and per-class accuracy; with `shots`, predictions are majorities of sampled counts;
    with `budget`, shots are spent sequentially on undecided inputs (`qmltest.util.budget`). An ibm:
    target (`targets.Hardware`) takes its counts from the device. A regressor reports MSE, MAE
    and R^2 instead (`regression`)."""
    if model.is_regressor:
        if budget is not None or isinstance(noise, targets.Hardware):
            raise InputError("a regressor is evaluated exactly or with fixed --shots (no shot budget, no ibm: target)")
        return regression(model, x, labels, shots, seed, backend, noise, where)
    y = label_indices(model, labels)
    spent: dict = {}
    register, matrix = _read(model, noise is None and budget is None)
    if isinstance(noise, targets.Hardware):
        if shots is None and budget is None:
            raise InputError(f"{noise.name} gives shots, not exact probabilities: drop --exact")
        pred, spent = _on_device(model, x, noise.device, shots, budget, seed)
    elif budget is not None:
        probs = model_probabilities(model, x, backend, noise=noise, where=where)
        rng = np.random.default_rng(seed)
        g = model.measurement_bases
        outcome = budget_mod.predict(
            lambda idx, per: engine.sample_counts(probs[idx], per * g, rng), len(x), model.readout_matrix, budget, g
        )
        pred, spent = outcome.predictions, outcome.to_dict(budget, budget_mod.ALPHA)
    else:
        probs = model_probabilities(model, x, backend, register, noise=noise, where=where)
        if shots is not None:  # counts over the outcomes simulated: the same class distribution
            probs = engine.sample_counts(probs, shots, np.random.default_rng(seed))
        pred = readout.predict(probs, matrix, model.num_classes)
    per_class = {}
    for i, c in enumerate(model.classes):
        mask = y == i
        per_class[str(c)] = {
            "samples": int(mask.sum()),
            "accuracy": float(np.mean(pred[mask] == i)) if mask.any() else None,
            "accuracy_interval": intervals.wilson(int(np.sum(pred[mask] == i)), int(mask.sum())),
        }
    return {
        "samples": int(len(y)),
        "accuracy": float(np.mean(pred == y)) if len(y) else None,
        "accuracy_interval": intervals.wilson(int(np.sum(pred == y)), int(len(y))),
        "per_class": per_class,
        "shots": None if budget is not None else shots,
        "exact": shots is None and budget is None,
        **({"sequential": spent} if spent else {}),
        "seed": seed,
        "backend": "ibm" if isinstance(noise, targets.Hardware) else _backend(model, backend, register),
        "model_sha256": model.sha256,
        "noise": None
        if noise is None or isinstance(noise, targets.Hardware)
        else {"name": noise.name, "sha256": noise.sha256},  # type: ignore[attr-defined]
        "device": _device(model, noise, seed),
        **_bases(model, None if budget is not None else shots),
    }


def outputs(
    model: Model, x: np.ndarray, shots: int | None, seed: int, backend: str | None, noise: object, where: object = None
) -> np.ndarray:
    """A regressor's output per input: exact, or the plug-in estimate from `shots` shots (the
    shot frequencies read through the output column, as Estimator's sampled <O> is)."""
    probs = model_probabilities(model, x, backend, "readout", noise=noise, where=where)
    return model.outputs(engine.estimate(probs, shots, np.random.default_rng(seed)))


def regression(
    model: Model,
    x: np.ndarray,
    targets_: np.ndarray,
    shots: int | None,
    seed: int = 0,
    backend: str | None = None,
    noise: object = None,
    where: object = None,
) -> dict:
    """A regressor on real targets: MSE, MAE and R^2 with 95% bootstrap intervals
    (`model.regression.metrics`), exact or from shot estimates."""
    from qmltest.data import labels as labels_mod
    from qmltest.model import regression as reg

    t = labels_mod.targets(targets_, "targets")
    out = outputs(model, x, shots, seed, backend, noise, where)
    return {
        "task": "regression",
        "samples": int(len(t)),
        **reg.metrics(out, t, seed),
        "shots": shots,
        "exact": shots is None,
        "seed": seed,
        "backend": _backend(model, backend, "readout"),
        "model_sha256": model.sha256,
        "noise": None if noise is None else {"name": noise.name, "sha256": noise.sha256},  # type: ignore[attr-defined]
        "device": _device(model, noise, seed),
        **_bases(model, shots),
    }


def _backend(model: Model, backend: str | None, register: str) -> str:
    """The backend a run used: auto's pick for the model's program, or numpy for a kernel model
    (its kernel is a Gram product of numpy states, whatever --backend says)."""
    if model.is_kernel:
        return "numpy"
    return REGISTRY.for_job(backend, program.of_model(model, register)).name


def _read(model: Model, marginal: bool) -> tuple[str, np.ndarray]:
    """(register, readout matrix) a run simulates: the class marginal of a wide readout where it
    may (`marginal`: noise-free, no shot budget), else every readout outcome."""
    if marginal and program.wide(model):
        return "classes", program.class_view(model)[1]
    return "readout", model.readout_matrix


def _bases(model: Model, shots: int | None) -> dict:
    """Observables read in several measurement bases: how many, and how the shots were split
    (each shot's basis drawn uniformly, so a basis gets shots / G on average; `engine.sample_counts`)."""
    g = model.measurement_bases
    if g == 1:
        return {}
    per = None if shots is None else {"allocation": "uniform random per shot", "mean": shots / g}
    return {"measurement_bases": g, "shots_per_basis": per}


def _device(model: Model, noise: object, seed: int) -> dict | None:
    if isinstance(noise, targets.Hardware):
        from qmltest.simulate import runtime

        return runtime.describe(model, noise.device, seed)
    return device.describe(model, noise)


def _on_device(
    model: Model, x: np.ndarray, name: str, shots: int | None, budget: int | None, seed: int
) -> tuple[np.ndarray, dict]:
    """Predictions from device counts: one job of `shots` per input (split over the measurement
    bases), or rounds of jobs under a shot budget."""
    from qmltest.simulate import runtime

    encoded = model.encode(x)
    g = model.measurement_bases
    if budget is None:
        per = max(1, int(shots or 1) // g)
        counts = runtime.counts(model, encoded, name, per, seed)
        return model.predict(counts), {}
    jobs = iter(range(seed, seed + budget_mod.MAX_ROUNDS))  # a fresh simulator seed per round (fake devices)

    def draw(idx: np.ndarray, per: int) -> np.ndarray:
        return runtime.counts(model, encoded[idx], name, per, next(jobs))

    outcome = budget_mod.predict(draw, len(x), model.readout_matrix, budget, g)
    return outcome.predictions, outcome.to_dict(budget, budget_mod.ALPHA)


PREDICTIONS_FORMAT = "qmltest.predictions/1"


def per_input(
    model: Model,
    x: np.ndarray,
    labels: np.ndarray | None,
    shots: int | None,
    seed: int = 0,
    backend: str | None = None,
    noise: object = None,
) -> dict:
    """One row per input: its index, label (None for bare inputs), prediction and class scores:
    the exact class probabilities, or with `shots` the classes' shot frequencies (an expectation
    readout's scores are its class scores, not probabilities). Predictions are `Model.predict`'s
    (ties to the lower class), so they match `evaluate`'s exact run. A regressor's rows carry its
    output and, with targets, the error (output - target)."""
    if model.is_regressor:
        return _per_input_values(model, x, labels, shots, seed, backend, noise)
    y = None if labels is None else label_indices(model, labels)
    register, matrix = _read(model, noise is None)
    probs = model_probabilities(model, x, backend, register, noise=noise)
    probs = engine.estimate(probs, shots, np.random.default_rng(seed))
    kind = model.manifest["readout"].get("kind")
    raw = kind in ("expectation", "kernel")  # class scores that are no probabilities
    scores = probs @ matrix if raw else readout.class_probabilities(probs, matrix, model.num_classes)
    pred = readout.predict(probs, matrix, model.num_classes)
    names = [str(c) for c in model.classes]
    rows = [
        {
            "index": i,
            "label": None if y is None else names[int(y[i])],
            "prediction": names[int(pred[i])],
            "correct": None if y is None else bool(pred[i] == y[i]),
            "scores": {c: float(s) for c, s in zip(names, scores[i])},
        }
        for i in range(len(x))
    ]
    return {
        "format": PREDICTIONS_FORMAT,
        "model_sha256": model.sha256,
        "classes": names,
        "score": {"expectation": "expectation", "kernel": "decision"}.get(kind, "probability"),
        "exact": shots is None,
        "shots": shots,
        "seed": seed,
        "backend": _backend(model, backend, register),
        "rows": rows,
    }


def _per_input_values(
    model: Model, x: np.ndarray, labels: np.ndarray | None, shots: int | None, seed: int, backend, noise
) -> dict:
    """A regressor's per-input rows: index, target, output, error."""
    from qmltest.data import labels as labels_mod

    t = None if labels is None else labels_mod.targets(labels, "targets")
    out = outputs(model, x, shots, seed, backend, noise)
    rows = [
        {
            "index": i,
            "target": None if t is None else float(t[i]),
            "output": float(out[i]),
            "error": None if t is None else float(out[i] - t[i]),
        }
        for i in range(len(x))
    ]
    return {
        "format": PREDICTIONS_FORMAT,
        "task": "regression",
        "model_sha256": model.sha256,
        "exact": shots is None,
        "shots": shots,
        "seed": seed,
        "backend": _backend(model, backend, "readout"),
        "rows": rows,
    }
