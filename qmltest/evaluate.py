"""Accuracy of a model on labelled inputs: exact probabilities or shot-based majority predictions."""

from __future__ import annotations

import numpy as np

from qmltest import intervals
from qmltest.artifact import Model
from qmltest.errors import InputError
from qmltest.simulate import backend as backend_mod
from qmltest.simulate import engine


def label_indices(model: Model, labels: np.ndarray) -> np.ndarray:
    """Dataset labels -> the model's class indices; unknown labels are an input error."""
    index = {c: i for i, c in enumerate(model.classes)}
    unknown = sorted({int(v) for v in labels} - set(index))
    if unknown:
        raise InputError(f"labels {unknown[:5]} are not classes of the model ({model.classes})")
    return np.array([index[int(v)] for v in labels], dtype=int)


def evaluate(
    model: Model,
    x: np.ndarray,
    labels: np.ndarray,
    shots: int | None,
    seed: int = 0,
    backend: str | None = None,
    noise: object = None,
    where: object = None,
) -> dict:
    """Accuracy and per-class accuracy; with `shots`, predictions are majorities of sampled counts."""
    y = label_indices(model, labels)
    probs = model.probabilities(x, backend, noise=noise, where=where)
    if shots is None:
        pred = model.predict(probs)
    else:
        counts = engine.sample_counts(probs, shots, np.random.default_rng(seed))
        pred = model.predict(counts)
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
        "shots": shots,
        "exact": shots is None,
        "seed": seed,
        "backend": backend_mod.resolve(backend, model.ir.num_qubits),
        "model_sha256": model.sha256,
        "noise": None if noise is None else {"name": noise.name, "sha256": noise.sha256},  # type: ignore[attr-defined]
        "device": _device(model, noise),
    }


def _device(model: Model, noise: object) -> dict | None:
    if noise is None or not noise.has("backend"):  # type: ignore[attr-defined]
        return None
    from qmltest.simulate import device

    return device.describe(model, noise)
