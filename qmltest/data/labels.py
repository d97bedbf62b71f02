"""Class labels as datasets and manifests write them: whole numbers or names ("setosa", "cat").

A label is matched to a model's class by value: numbers as integers (a CSV's 1.0 is the class 1),
names as text. Qiskit ML classifiers fitted on strings keep their names in the manifest's
``classes`` and every report names classes as the manifest does.
"""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError

Label = int | str


def key(value: object) -> Label:
    """The matching key of one label or class: an int for a whole number, else the text itself."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value)


def column(values: np.ndarray | list, where: str) -> np.ndarray:
    """A label column from a file: integers when every cell is a whole number, else names (text).

    Refused in one line: a fraction or non-finite number, a label beyond 2^31, an empty name, or a
    column that mixes numbers and names (so a stray '1' in a column of names is never a class)."""
    y = np.asarray(values)
    if y.ndim != 1:
        raise InputError(f"{where}: labels 'y' must be a 1-D array, got shape {y.shape}")
    if y.dtype.kind in "US" or y.dtype == object:
        text = [k.strip() if isinstance(k := key(v), str) else k for v in y]
        numeric = [number(t) if isinstance(t, str) else t for t in text]
        if all(n is not None for n in numeric) and len(numeric):
            return column(np.asarray(numeric, dtype=float), where)
        if any(n is not None for n in numeric):
            row = next(i for i, n in enumerate(numeric) if n is not None)
            raise InputError(f"{where}: label column mixes names and numbers (row {row} is {text[row]!r})")
        empty = [i for i, t in enumerate(text) if t == ""]
        if empty:
            raise InputError(f"{where}: label of row {empty[0]} is empty")
        return np.asarray(text, dtype=str)
    if y.dtype.kind not in "iufb" or (y.dtype.kind == "f" and not np.all(np.isfinite(y))):
        raise InputError(f"{where}: labels must be whole numbers or names, got dtype {y.dtype}")
    if y.dtype.kind == "f":
        bad = np.flatnonzero((y != np.round(y)) | (np.abs(y) > 2**31))
        if len(bad):
            raise InputError(f"{where}: label of row {int(bad[0])} is {y[bad[0]]}, not a whole number")
    elif len(y) and np.abs(y.astype(np.int64, copy=False)).max() > 2**31:
        raise InputError(f"{where}: labels beyond 2^31 are not class labels")
    return y.astype(int)


def targets(values: np.ndarray | list, where: str) -> np.ndarray:
    """A regressor's target column: one finite real number per row (names and NaN refused)."""
    y = np.asarray(values)
    if y.ndim != 1:
        raise InputError(f"{where}: targets 'y' must be a 1-D array, got shape {y.shape}")
    if y.dtype.kind in "US" or y.dtype == object:
        cells = [str(key(v)).strip() for v in y]
        nums = [number(c) for c in cells]
        if any(n is None for n in nums):
            row = next(i for i, n in enumerate(nums) if n is None)
            raise InputError(f"{where}: target of row {row} is {cells[row]!r}, not a number (a regressor's targets)")
        y = np.asarray(nums, dtype=float)
    if y.dtype.kind not in "iufb":
        raise InputError(f"{where}: targets must be numbers, got dtype {y.dtype}")
    y = y.astype(float)
    bad = np.flatnonzero(~np.isfinite(y))
    if len(bad):
        raise InputError(f"{where}: target of row {int(bad[0])} is {y[bad[0]]}")
    return y


def number(text: str) -> float | None:
    """The cell as a float, or None when it is not a number (a name, a header field). Python's
    float() takes digit separators ('5_1' is 51); a data cell with one is not a number."""
    if "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def indices(classes: list, labels: np.ndarray | list) -> np.ndarray:
    """Labels -> indices into `classes`; labels that are no class are one InputError naming them."""
    index = {key(c): i for i, c in enumerate(classes)}
    keys = [key(v) for v in labels]
    unknown = sorted({k for k in keys if k not in index}, key=lambda k: (isinstance(k, str), k))
    if unknown:
        shown = ", ".join(repr(k) if isinstance(k, str) else str(k) for k in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise InputError(f"labels {shown}{more} are not classes of the model ({list(classes)})")
    return np.array([index[k] for k in keys], dtype=int)


def contains(classes: list, labels: np.ndarray) -> np.ndarray:
    """Boolean mask: which labels are classes of the model."""
    known = {key(c) for c in classes}
    return np.array([key(v) in known for v in labels], dtype=bool)
