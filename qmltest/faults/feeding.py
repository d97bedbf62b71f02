"""Fault kinds on the features' way into the circuit: preprocessing steps added, dropped or
re-fitted in the manifest, the circuit untouched (catalogue stage "inputs")."""

from __future__ import annotations

import numpy as np

from qmltest.data.preprocess import input_width, preprocess
from qmltest.faults.transforms import Context, string_order, transform
from qmltest.model.artifact import Model

IMAGES = {"mnist": (28, 28), "mnist_0vr": (28, 28), "digits": (8, 8)}
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081  # torchvision's MNIST Normalize, as in pytorch/examples


def _steps(model: Model) -> list[dict]:
    return [dict(s) for s in model.manifest.get("preprocessing", [])]


def _with(model: Model, steps: list[dict]) -> Model:
    return model.with_manifest(preprocessing=steps)


def _raw_width(model: Model) -> int | None:
    steps = _steps(model)
    return input_width(steps[0]) if steps else None


def _image(model: Model) -> tuple[int, int] | None:
    """The raw image shape a model reads, or None for tabular inputs."""
    steps = _steps(model)
    if steps and steps[0]["op"] == "resize":
        return tuple(steps[0]["from"])  # type: ignore[return-value]
    shape = IMAGES.get(str(model.manifest.get("training", {}).get("dataset")))
    width = _raw_width(model)
    return shape if shape and width == shape[0] * shape[1] else None


def _permutation(order: list[int]) -> dict:
    """A linear step sending feature j to position order[j]."""
    n = len(order)
    w = np.zeros((n, n))
    w[order, np.arange(n)] = 1.0
    return {"op": "linear", "weight": w.tolist(), "bias": [0.0] * n}


def _scale(width: int, factor: float, offset: float = 0.0) -> dict:
    return {"op": "affine", "scale": [factor] * width, "offset": [offset] * width}


def _first_affine(steps: list[dict]) -> int | None:
    return next((i for i, s in enumerate(steps) if s["op"] == "affine"), None)


@transform("string-order-binding")
def string_order_binding(model: Model, ctx: Context) -> Model | None:
    n = len(model.ir.inputs)
    if model.amplitude or n < 11:
        return None
    return _with(model, [*_steps(model), _permutation(string_order(n))])


@transform("scaling-missing")
def scaling_missing(model: Model, ctx: Context) -> Model | None:
    steps = _steps(model)
    i = _first_affine(steps)
    return None if i is None else _with(model, steps[:i] + steps[i + 1 :])


@transform("scaling-doubled")
def scaling_doubled(model: Model, ctx: Context) -> Model | None:
    steps = _steps(model)
    i = _first_affine(steps)
    return None if i is None else _with(model, steps[: i + 1] + [dict(steps[i])] + steps[i + 1 :])


@transform("scaler-fit-on-test")
def scaler_fit_on_test(model: Model, ctx: Context) -> Model | None:
    """The first affine step (a standardisation of tabular features) re-fitted on ctx.raw."""
    steps = _steps(model)
    i = _first_affine(steps)
    if i is None or _image(model) is not None or ctx.raw is None or len(ctx.raw) < 2:
        return None
    before = preprocess(steps[:i], np.asarray(ctx.raw, float)) if i else np.asarray(ctx.raw, float)
    mean, std = before.mean(axis=0), before.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    refit = {"op": "affine", "scale": (1.0 / std).tolist(), "offset": (-mean / std).tolist()}
    return _with(model, steps[:i] + [refit] + steps[i + 1 :])


def _angles(model: Model, factor: float) -> Model | None:
    if model.amplitude:
        return None
    return _with(model, [*_steps(model), _scale(len(model.ir.inputs), factor)])


@transform("angle-range-doubled")
def angle_range_doubled(model: Model, ctx: Context) -> Model | None:
    return _angles(model, 2.0)


@transform("angle-half")
def angle_half(model: Model, ctx: Context) -> Model | None:
    return _angles(model, 0.5)


@transform("flatten-column-major")
def flatten_column_major(model: Model, ctx: Context) -> Model | None:
    shape = _image(model)
    if shape is None:
        return None
    h, w = shape
    column_major = np.arange(h * w).reshape(h, w).T.ravel()  # feature k of the faulty vector is pixel column_major[k]
    order = np.empty(h * w, dtype=int)
    order[column_major] = np.arange(h * w)  # pixel j lands at position order[j]
    return _with(model, [_permutation(order.tolist()), *_steps(model)])


@transform("torch-normalize-at-inference")
def torch_normalize(model: Model, ctx: Context) -> Model | None:
    shape = _image(model)
    if shape is None:
        return None
    step = _scale(shape[0] * shape[1], 1.0 / (255.0 * MNIST_STD), -MNIST_MEAN / MNIST_STD)
    return _with(model, [step, *_steps(model)])


@transform("pixels-rescaled")
def pixels_rescaled(model: Model, ctx: Context) -> Model | None:
    shape = _image(model)
    if shape is None or model.amplitude:  # amplitude encoding normalises: a scale is no fault there
        return None
    return _with(model, [_scale(shape[0] * shape[1], 1.0 / 255.0), *_steps(model)])
