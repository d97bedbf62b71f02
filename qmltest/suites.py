"""Test suites of varying quality from correctly classified inputs (QuanForge Sec. 4.3.1).

Ori: random correctly classified inputs per class; HConf / LConf: the most / least confident of
them (class probability of the true class); Small: half of Ori; Skewed: 10:1 (or 10:1:1) classes.
"""

from __future__ import annotations

import zipfile

import numpy as np

from qmltest.errors import InputError
from qmltest.evaluate import label_indices
from qmltest.model import readout
from qmltest.model.artifact import Model
from qmltest.simulate.runner import model_probabilities

KINDS = ("ori", "hconf", "lconf", "small", "skewed")
DERIVED = ("ood", "aug", "adv")


def build(
    model: Model,
    x: np.ndarray,
    labels: np.ndarray,
    kind: str,
    per_class: int,
    seed: int,
    probs: np.ndarray | None = None,
    backend: str = "auto",
) -> np.ndarray:
    """Indices into x of the suite (sorted), chosen among inputs the model classifies correctly;
    `probs`, if given, are the model's probabilities of x (computed here otherwise)."""
    if kind not in KINDS:
        raise InputError(f"unknown suite kind '{kind}' (choose from {', '.join(KINDS)})")
    y = label_indices(model, labels)
    probs = model_probabilities(model, x, backend) if probs is None else probs
    cprobs = readout.class_probabilities(probs, model.readout_matrix, model.num_classes)
    correct = np.argmax(cprobs, axis=1) == y
    confidence = cprobs[np.arange(len(y)), y]
    rng = np.random.default_rng(seed)
    chosen = []
    for c in range(model.num_classes):
        pool = np.flatnonzero(correct & (y == c))
        want = per_class
        if kind == "small":
            want = per_class // 2
        elif kind == "skewed" and c > 0:
            want = max(1, per_class // 10)
        if len(pool) < want:
            raise InputError(f"only {len(pool)} correctly classified inputs of class {model.classes[c]}, {want} needed")
        if kind == "hconf":
            pick = pool[np.argsort(-confidence[pool], kind="stable")[:want]]
        elif kind == "lconf":
            pick = pool[np.argsort(confidence[pool], kind="stable")[:want]]
        else:
            pick = rng.choice(pool, size=want, replace=False)
        chosen.append(pick)
    return np.sort(np.concatenate(chosen))


def confidence(model: Model, x: np.ndarray, labels: np.ndarray, backend: str = "auto") -> np.ndarray:
    """Class probability of each input's true class (exact)."""
    y = label_indices(model, labels)
    cprobs = readout.class_probabilities(
        model_probabilities(model, x, backend), model.readout_matrix, model.num_classes
    )
    return cprobs[np.arange(len(y)), y]


def augment(
    x: np.ndarray, image_shape: tuple[int, int] | None, low: float, high: float, rng: np.random.Generator
) -> np.ndarray:
    """One random augmentation per input: affine, crop, brightness, blur, sharpen, Gaussian or
    salt-and-pepper noise (images); bounded Gaussian noise (tabular)."""
    from scipy import ndimage

    span = high - low
    if image_shape is None:
        return x + rng.normal(0.0, 0.05 * np.ptp(x, axis=0) + 1e-12, x.shape)
    out = np.empty_like(x)
    for i, row in enumerate(x):
        img = row.reshape(image_shape)
        kind = rng.integers(7)
        if kind == 0:
            img = ndimage.rotate(img, rng.uniform(-10, 10), reshape=False, order=1, cval=low)
        elif kind == 1:
            b = max(1, image_shape[0] // 14)
            crop = np.full_like(img, low)
            crop[b:-b, b:-b] = img[b:-b, b:-b]
            img = crop
        elif kind == 2:
            img = img + rng.uniform(-0.1, 0.1) * span
        elif kind == 3:
            img = ndimage.gaussian_filter(img, 0.7)
        elif kind == 4:
            img = img + 0.5 * (img - ndimage.gaussian_filter(img, 1.0))
        elif kind == 5:
            img = img + rng.normal(0.0, 0.05 * span, img.shape)
        else:
            mask = rng.random(img.shape)
            img = np.where(mask < 0.02, low, np.where(mask > 0.98, high, img))
        out[i] = np.clip(img, low, high).ravel()
    return out


def derive(
    model: Model,
    x: np.ndarray,
    labels: np.ndarray,
    kind: str,
    per_class: int,
    seed: int,
    bounds: tuple[float, float],
    others: np.ndarray | None = None,
    image_shape: tuple[int, int] | None = None,
    epsilon: float = 64 / 255,
    backend: str = "auto",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """A suite of any kind (QuanForge Sec. 4.3.1) as (inputs, labels, source index into x or -1,
    parameters). `x` holds inputs of the model's classes, `others` those of unseen classes (OOD).

    Aug: augmented inputs (affine, crop, brightness, blur, sharpen, Gaussian and salt-and-pepper
    noise) that the model still classifies correctly. OOD / Adv: half of Ori replaced by inputs of
    unseen classes (labelled by the model's prediction) / by FGSM inputs the attack failed on."""
    from qmltest import attacks

    if kind not in KINDS + DERIVED:
        raise InputError(f"unknown suite kind '{kind}' (choose from {', '.join(KINDS + DERIVED)})")
    rng = np.random.default_rng(seed)
    low, high = bounds
    probs = model_probabilities(model, x, backend)  # once: every build and the Aug pool size read it
    chosen = build(model, x, labels, kind if kind in KINDS else "ori", per_class, seed, probs, backend=backend)
    sx, sy, source = x[chosen], labels[chosen], chosen.copy()
    params: dict = {"per_class": per_class}
    if kind == "aug":
        pool = build(model, x, labels, "ori", min(per_class * 2, _largest_pool(model, probs, labels)), seed + 1, probs)
        aug = augment(x[pool], image_shape, low, high, rng)
        ok = model.predict(model_probabilities(model, aug, backend)) == label_indices(model, labels[pool])
        keep = _first_per_class(labels[pool][ok], per_class)
        return aug[ok][keep], labels[pool][ok][keep], np.full(len(keep), -1), params
    if kind in ("ood", "adv"):
        half = rng.choice(len(sx), size=len(sx) // 2, replace=False)
        if kind == "ood":
            have = 0 if others is None else len(others)
            if have < len(half):
                raise InputError(
                    f"an OOD suite needs {len(half)} inputs of classes the model does not classify; the data has {have}"
                )
            new_x = others[rng.choice(len(others), size=len(half), replace=False)]
            new_y = np.array(model.classes)[
                model.predict(model_probabilities(model, new_x, backend))
            ]  # labelled by the model
            params["ood_labels"] = "model prediction"
        else:
            y_idx = label_indices(model, sy[half])
            adv = attacks.attack(model, sx[half], y_idx, "fgsm", epsilon, low, high, rng, backend=backend)
            failed = model.predict(model_probabilities(model, adv, backend)) == y_idx  # QuanForge: the attack failed
            half = half[failed]
            new_x, new_y = adv[failed], sy[half]
            params.update(epsilon=epsilon, attack="fgsm", replaced=int(len(half)))
        sx, sy = sx.copy(), sy.copy()
        sx[half], sy[half], source[half] = new_x, new_y, -1
    return sx, sy, source, params


def _largest_pool(model: Model, probs: np.ndarray, labels: np.ndarray) -> int:
    """Correctly classified inputs of the scarcest class (`probs`: the model's probabilities)."""
    correct = model.predict(probs) == label_indices(model, labels)
    return int(min(np.bincount(label_indices(model, labels)[correct], minlength=model.num_classes)))


def _first_per_class(labels: np.ndarray, per_class: int) -> np.ndarray:
    keep: list[int] = []
    for c in np.unique(labels):
        keep += list(np.flatnonzero(labels == c)[:per_class])
    return np.array(sorted(keep), dtype=int)


def save(
    path, x: np.ndarray, y: np.ndarray, source: np.ndarray, kind: str, params: dict, model_sha: str, seed: int
) -> None:
    """The suite file: inputs, labels, source indices (-1 for generated), kind, parameters, model, seed."""
    import io
    import json

    from qmltest.util.writers import write_bytes_atomic

    buf = io.BytesIO()
    np.savez(
        buf,
        x=x,
        y=y,
        source_index=source,
        kind=np.array(kind),
        params=np.array(json.dumps(params, sort_keys=True)),
        model_sha256=np.array(model_sha),
        seed=np.array(seed),
    )
    write_bytes_atomic(path, buf.getvalue())


def _checked(path, x: np.ndarray, y: np.ndarray, source: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A suite's arrays as the commands need them, every problem one InputError naming the file:
    inputs a non-empty finite (N, F) array, labels one class each (`qmltest.data.labels.column`),
    source indices N integers (-1 for a generated input) when present."""
    from qmltest.data import labels

    if x.dtype.kind not in "iufb" or x.ndim < 2 or x.shape[0] == 0 or x.size == 0:
        raise InputError(
            f"{path}: 'x' must be a non-empty (inputs x features) array of numbers, got {x.dtype} {x.shape}"
        )
    x = x.reshape(len(x), -1).astype(float)
    if not np.all(np.isfinite(x)):
        raise InputError(f"{path}: input {int(np.argwhere(~np.isfinite(x))[0][0])} contains NaN or infinite values")
    y = labels.column(y, f"{path}: 'y'")
    if len(x) != len(y):
        raise InputError(f"{path}: {len(x)} inputs but {len(y)} labels")
    if source is not None:
        if source.dtype.kind not in "iu" or source.shape != (len(x),):
            raise InputError(
                f"{path}: 'source_index' must hold {len(x)} integers (-1 for a generated input), "
                f"got {source.dtype} {source.shape}"
            )
    return x, y


def read(path) -> tuple[str, dict, str, int | None, int, np.ndarray, np.ndarray]:
    """A suite NPZ: (kind, params, model sha, seed, generated count, x, y); its metadata checked
    against the published schema (suite.schema.json), every problem one InputError naming the file."""
    import json
    from pathlib import Path

    from qmltest import schemas
    from qmltest.errors import InputError
    from qmltest.util.files import readable

    path = Path(path)
    readable(path, "a suite file")
    try:
        with np.load(path, allow_pickle=False) as z:
            if "x" not in z or "y" not in z:
                raise InputError(f"{path}: a suite needs arrays 'x' and 'y' (it has {list(z.files)})")
            x, y = np.asarray(z["x"]), np.asarray(z["y"])
            meta = {k: z[k] for k in ("kind", "params", "model_sha256", "seed") if k in z}
            source = np.asarray(z["source_index"]) if "source_index" in z else None
    except InputError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:  # truncated or not a zip
        raise InputError(f"{path}: not a readable NPZ file ({exc})") from None
    doc: dict = {}
    for key, value in meta.items():
        if value.ndim != 0:
            raise InputError(f"{path}: field '{key}': must be a scalar, got shape {value.shape}")
        doc[key] = value.item()
    if isinstance(doc.get("params"), str):
        try:
            doc["params"] = json.loads(doc["params"])
        except json.JSONDecodeError:
            raise InputError(f"{path}: field 'params': not JSON") from None
    doc = {"kind": "unknown", "params": {}, "model_sha256": "-", "seed": 0, **doc}
    schemas.validate("suite", doc, str(path))
    x, y = _checked(path, x, y, source)
    generated = 0 if source is None else int(np.sum(source < 0))
    return doc["kind"], doc["params"], doc["model_sha256"], int(doc["seed"]), generated, x, y
