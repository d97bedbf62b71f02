"""Classical preprocessing stored in the manifest as numbers, and the two encodings.

Steps (applied in order to raw dataset features):
  resize  {"from": [h, w], "to": [h2, w2]}     area-averaging image downsampling (linear)
  affine  {"scale": [...], "offset": [...]}     x * scale + offset per feature (scalers)
  pca     {"mean": [...], "components": [[...]]} (x - mean) @ components.T
  linear  {"weight": [[...]], "bias": [...]}     x @ weight.T + bias (HQNN's classical layer)
  activation {"fn": tanh|relu|sigmoid}           elementwise, between linear layers (torch hybrids)
  image   {"transform": crop|rotate|hflip|vflip, "shape": [h, w]}   data mutations (DFC)
  feature_change {"indices": [i, j], "ops": [add|mul|sign|one_minus, ...], "value": v}   (DFC)
"""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError


def area_matrix(src: int, dst: int) -> np.ndarray:
    """(dst, src) matrix averaging the source cells that overlap each destination cell."""
    m = np.zeros((dst, src))
    scale = src / dst
    for i in range(dst):
        lo, hi = i * scale, (i + 1) * scale
        for j in range(int(np.floor(lo)), int(np.ceil(hi))):
            m[i, j] = min(hi, j + 1) - max(lo, j)
    return m / m.sum(axis=1, keepdims=True)


def resize(x: np.ndarray, src: tuple[int, int], dst: tuple[int, int]) -> np.ndarray:
    rows, cols = area_matrix(src[0], dst[0]), area_matrix(src[1], dst[1])
    imgs = x.reshape(-1, src[0], src[1])
    # two batched matmuls: a three-operand einsum contracts naively (31 ms for 200 MNIST images,
    # which every DFC mutant pays; 1.2 ms this way), equal to rounding
    return (rows @ imgs @ cols.T).reshape(len(x), -1)


ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda a: np.maximum(a, 0.0),
    "sigmoid": lambda a: 1.0 / (1.0 + np.exp(-a)),
}


def apply_step(step: dict, x: np.ndarray) -> np.ndarray:
    op = step.get("op")
    if op == "resize":
        return resize(x, tuple(step["from"]), tuple(step["to"]))
    if op == "affine":
        return x * np.asarray(step["scale"]) + np.asarray(step["offset"])
    if op == "pca":
        return (x - np.asarray(step["mean"])) @ np.asarray(step["components"]).T
    if op == "linear":
        return x @ np.asarray(step["weight"]).T + np.asarray(step["bias"])
    if op == "activation":
        fn = ACTIVATIONS.get(step.get("fn"))  # type: ignore[arg-type]
        if fn is None:
            raise InputError(f"unknown activation '{step.get('fn')}' ({', '.join(ACTIVATIONS)})")
        return fn(x)
    if op == "image":
        return image_transform(x, step["transform"], step.get("shape"))
    if op == "feature_change":
        out = x.copy()
        for i, kind in zip(step["indices"], step["ops"]):
            out[:, i] = feature_op(out[:, i], kind, float(step["value"]))
        return out
    raise InputError(f"unknown preprocessing step '{op}' (resize, affine, pca, linear, activation)")


def feature_op(v: np.ndarray, kind: str, value: float) -> np.ndarray:
    ops = {"add": lambda a: a + value, "mul": lambda a: a * value, "sign": lambda a: -a, "one_minus": lambda a: 1 - a}
    if kind not in ops:
        raise InputError(f"unknown feature change '{kind}' ({', '.join(ops)})")
    return ops[kind](v)


def image_transform(x: np.ndarray, transform: str, shape: list[int] | None) -> np.ndarray:
    """Crop (zero a border of 1/8 of the side), rotate by 15 degrees, or flip every image of the batch."""
    from scipy import ndimage

    h, w = shape if shape else (int(round(np.sqrt(x.shape[1]))),) * 2
    imgs = x.reshape(len(x), h, w)
    if transform == "hflip":
        out = imgs[:, :, ::-1]
    elif transform == "vflip":
        out = imgs[:, ::-1, :]
    elif transform == "rotate":
        out = ndimage.rotate(imgs, 15.0, axes=(1, 2), reshape=False, order=1, mode="constant", cval=0.0)
    elif transform == "crop":
        b = max(1, h // 8)
        out = np.zeros_like(imgs)
        out[:, b : h - b, b : w - b] = imgs[:, b : h - b, b : w - b]
    else:
        raise InputError(f"unknown image transform '{transform}' (crop, rotate, hflip, vflip)")
    return np.ascontiguousarray(out).reshape(len(x), -1)


def vjp(steps: list[dict], x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Gradient with respect to the raw features given the gradient g after the (linear) steps."""
    inputs = [np.asarray(x, dtype=float)]
    for step in steps[:-1]:
        inputs.append(apply_step(step, inputs[-1]))
    for step, _ in zip(reversed(steps), reversed(inputs)):
        op = step["op"]
        if op == "resize":
            (h, w), (h2, w2) = step["from"], step["to"]
            rows, cols = area_matrix(h, h2), area_matrix(w, w2)
            g = np.einsum("ij,nil,lk->njk", rows, g.reshape(-1, h2, w2), cols).reshape(len(g), -1)
        elif op == "affine":
            g = g * np.asarray(step["scale"])
        elif op == "pca":
            g = g @ np.asarray(step["components"])
        elif op == "linear":
            g = g @ np.asarray(step["weight"])
        else:
            raise InputError(f"no gradient through preprocessing step '{op}'")
    return g


def input_width(step: dict) -> int | None:
    """Number of features a step expects, when it says."""
    op = step.get("op")
    if op == "resize":
        return int(step["from"][0] * step["from"][1])
    if op == "affine":
        return len(step["scale"]) if np.ndim(step["scale"]) else None
    if op == "pca":
        return len(step["mean"])
    if op == "linear":
        return len(step["weight"][0])
    return None


def preprocess(steps: list[dict], x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        raise InputError(f"inputs must be a 2-D array (samples x features), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        bad = int(np.argwhere(~np.isfinite(x))[0][0])
        raise InputError(f"input {bad} contains NaN or infinite values")
    if steps:
        width = input_width(steps[0])
        if width is not None and x.shape[1] != width:
            raise InputError(f"wrong feature count: the model expects {width} raw features, got {x.shape[1]}")
    with np.errstate(all="ignore"):  # overflow is reported below as a bad input, not as a warning
        for step in steps:
            x = apply_step(step, x)
    if not np.all(np.isfinite(x)):
        bad = int(np.argwhere(~np.isfinite(x))[0][0])
        raise InputError(f"input {bad}: the model's preprocessing gives NaN or infinite values (overflow)")
    return x


def amplitude_states(x: np.ndarray, num_qubits: int, padding: float = 0.0) -> np.ndarray:
    """Normalized states (N, 2^n) from feature vectors padded with `padding` to 2^n entries."""
    dim = 2**num_qubits
    if x.shape[1] > dim:
        raise InputError(f"amplitude encoding: {x.shape[1]} features do not fit {num_qubits} qubits")
    padded = np.full((len(x), dim), padding, dtype=float)
    padded[:, : x.shape[1]] = x
    peak = np.max(np.abs(padded), axis=1)
    if np.any(peak == 0):
        raise InputError(f"amplitude encoding: input {int(np.argmin(peak))} is all zeros")
    padded /= peak[:, None]  # scale first: the state is scale-free, and |1e308|^2 would overflow the norm
    return (padded / np.linalg.norm(padded, axis=1)[:, None]).astype(complex)
