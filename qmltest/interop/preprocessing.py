"""Classical preprocessing for imported models, as manifest steps (see `qmltest.data.preprocess`).

Fitted scikit-learn objects become numbers in the manifest, so that raw data flows in exactly as
in training: MinMaxScaler, StandardScaler, MaxAbsScaler and PCA (no whitening) are affine maps;
a Pipeline is its steps in order. CLI specs: ``scale=LO:HI`` and ``standard`` (fitted on a data
set), ``pca=FILE.npz`` (arrays mean, components), ``steps=FILE.json`` (a manifest step list).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qmltest.data.preprocess import apply_step
from qmltest.errors import InputError


def _floats(a: object) -> list:
    return np.asarray(a, dtype=float).tolist()


def _array(t: object) -> np.ndarray:
    """A torch tensor (or anything array-like) as a float numpy array, without importing torch."""
    if hasattr(t, "detach"):
        t = t.detach().cpu().numpy()  # type: ignore[attr-defined]
    return np.asarray(t, dtype=float)


TORCH_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu", "Sigmoid": "sigmoid"}


def torch_steps(obj: object) -> list[dict] | None:
    """Steps from torch layers before the circuit: Linear, the usual activations, Sequential of
    them (Identity, Flatten and Dropout in eval are no-ops); None for anything else."""
    kind = type(obj).__name__
    if kind == "Sequential":
        return [s for layer in obj for s in (torch_steps(layer) or _refuse(layer))]  # type: ignore[attr-defined]
    if kind == "Linear" and hasattr(obj, "weight"):
        w = _array(obj.weight)  # type: ignore[attr-defined]
        b = _array(obj.bias) if getattr(obj, "bias", None) is not None else np.zeros(len(w))  # type: ignore[attr-defined]
        return [{"op": "linear", "weight": _floats(w), "bias": _floats(b)}]
    if kind in TORCH_ACTIVATIONS:
        return [{"op": "activation", "fn": TORCH_ACTIVATIONS[kind]}]
    if kind in ("Identity", "Flatten", "Dropout"):
        return []
    return None


def _refuse(layer: object) -> list[dict]:
    raise InputError(
        f"torch layer '{type(layer).__name__}' is not supported before the circuit "
        f"(Linear, {', '.join(TORCH_ACTIVATIONS)}, Identity, Flatten, Dropout)"
    )


def sklearn_steps(obj: object) -> list[dict]:
    """Steps from a fitted scikit-learn transformer or Pipeline, or torch layers (`torch_steps`)."""
    kind = type(obj).__name__
    from_torch = torch_steps(obj) if type(obj).__module__.startswith("torch") else None
    if from_torch is not None:
        return from_torch
    if kind == "Pipeline":
        return [s for _, est in obj.steps for s in sklearn_steps(est)]  # type: ignore[attr-defined]
    if kind == "MinMaxScaler":
        return [{"op": "affine", "scale": _floats(obj.scale_), "offset": _floats(obj.min_)}]  # type: ignore[attr-defined]
    if kind == "StandardScaler":
        mean = obj.mean_ if obj.mean_ is not None else 0.0  # type: ignore[attr-defined]
        scale = obj.scale_ if obj.scale_ is not None else np.ones(obj.n_features_in_)  # type: ignore[attr-defined]
        mean = np.broadcast_to(mean, np.shape(scale))
        return [{"op": "affine", "scale": _floats(1.0 / scale), "offset": _floats(-mean / scale)}]
    if kind == "MaxAbsScaler":
        scale = obj.scale_  # type: ignore[attr-defined]
        return [{"op": "affine", "scale": _floats(1.0 / scale), "offset": [0.0] * len(scale)}]
    if kind == "PCA":
        if getattr(obj, "whiten", False):
            raise InputError("PCA with whiten=True is not supported: refit without whitening")
        return [{"op": "pca", "mean": _floats(obj.mean_), "components": _floats(obj.components_)}]  # type: ignore[attr-defined]
    raise InputError(
        f"preprocessing '{kind}' is not supported (MinMaxScaler, StandardScaler, MaxAbsScaler, PCA, Pipeline, "
        "torch Linear / Tanh / ReLU / Sigmoid / Sequential)"
    )


def to_head(obj: object) -> dict | None:
    """A linear head after the readout: None, {'weight', 'bias'}, a one-step list [{'op': 'linear',
    ...}] or a torch ``nn.Linear`` (any object with weight and bias) -> the manifest's readout head."""
    if obj is None:
        return None
    if isinstance(obj, list) and len(obj) == 1 and isinstance(obj[0], dict) and obj[0].get("op") == "linear":
        obj = obj[0]
    if isinstance(obj, dict):
        if set(obj) - {"op", "weight", "bias"} or not {"weight", "bias"} <= set(obj):
            raise InputError("a readout head is {'weight': [[...]], 'bias': [...]}: one linear layer")
        w, b = obj["weight"], obj["bias"]
    else:
        steps = torch_steps(obj) if type(obj).__module__.startswith("torch") else None
        if not steps or len(steps) != 1 or steps[0]["op"] != "linear":
            raise InputError(
                f"a readout head must be one linear layer (nn.Linear or {{'weight', 'bias'}}), got {type(obj).__name__}"
            )
        w, b = steps[0]["weight"], steps[0]["bias"]
    try:
        return {"weight": _floats(w), "bias": _floats(b)}
    except (TypeError, ValueError):
        raise InputError("a readout head's weight and bias must be numbers") from None


def check_steps(steps: object) -> list[dict]:
    """A manifest step list: a list of objects with an 'op' that apply to some input."""
    if not isinstance(steps, list) or not all(isinstance(s, dict) and "op" in s for s in steps):
        raise InputError("preprocessing must be a list of steps, each an object with an 'op'")
    return steps


def to_steps(obj: object) -> list[dict]:
    """None, a step list, or fitted scikit-learn objects (one or a list) -> manifest steps."""
    if obj is None:
        return []
    if isinstance(obj, list) and all(isinstance(s, dict) for s in obj):
        return check_steps(obj)
    if isinstance(obj, (list, tuple)):
        return [s for o in obj for s in to_steps(o)]
    return sklearn_steps(obj)


def parse_cli(specs: list[str], data_x: np.ndarray | None) -> list[dict]:
    """CLI --preprocess specs, applied in order; scale/standard are fitted on `data_x` as transformed so far."""
    steps: list[dict] = []
    for spec in specs:
        key, _, value = spec.partition("=")
        key = key.strip()
        current = None if data_x is None else _apply(steps, data_x)
        if key in ("scale", "standard"):
            if current is None:
                raise InputError(f"--preprocess {spec}: fitting a scaler needs the training data (--data)")
            if key == "scale":
                lo, hi = _range(value, spec)
                mn, mx = current.min(axis=0), current.max(axis=0)
                span = np.where(mx > mn, mx - mn, 1.0)
                scale = (hi - lo) / span
                steps.append({"op": "affine", "scale": _floats(scale), "offset": _floats(lo - mn * scale)})
            else:
                mean, std = current.mean(axis=0), current.std(axis=0)
                std = np.where(std > 0, std, 1.0)
                steps.append({"op": "affine", "scale": _floats(1 / std), "offset": _floats(-mean / std)})
        elif key == "pca":
            steps.append(_pca_file(Path(value)))
        elif key == "steps":
            steps += _steps_file(Path(value))
        else:
            raise InputError(f"--preprocess '{spec}': use scale=LO:HI, standard, pca=FILE.npz or steps=FILE.json")
    return steps


def _apply(steps: list[dict], x: np.ndarray) -> np.ndarray:
    for step in steps:
        x = apply_step(step, x)
    return x


def _range(value: str, spec: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value.split(":"))
    except ValueError:
        raise InputError(f"--preprocess {spec}: expected scale=LO:HI, e.g. scale=0:1") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise InputError(f"--preprocess {spec}: need finite LO < HI")
    return lo, hi


def _pca_file(path: Path) -> dict:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        with np.load(path) as z:
            mean, comps = np.asarray(z["mean"], float), np.asarray(z["components"], float)
    except KeyError:
        raise InputError(f"{path}: a PCA file needs arrays 'mean' and 'components'") from None
    except (ValueError, OSError) as exc:
        raise InputError(f"{path}: not an NPZ file ({exc})") from None
    if comps.ndim != 2 or mean.shape != (comps.shape[1],) or not np.all(np.isfinite(comps)):
        raise InputError(f"{path}: 'components' must be (k, F) and 'mean' (F,), finite")
    return {"op": "pca", "mean": _floats(mean), "components": _floats(comps)}


def _steps_file(path: Path) -> list[dict]:
    from qmltest.interop.sources import load_json

    return check_steps(load_json(path))
