"""Report writers: atomic files, JSON with sorted keys, CSV; formats return strings, callers place them."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path

import qmltest


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename: readers never see half a file."""
    write_bytes_atomic(path, text.encode())


def _file_mode() -> int:
    """0666 less the process umask: what open() would give (mkstemp alone gives 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Binary twin of write_text_atomic (NPZ suites, failure sets); readable by others as usual.

    Only a regular file (or a new path) is replaced by rename. A symlink is followed: its target
    is what gets replaced, the link stays. A character device or FIFO (`/dev/null`, `>(jq .)`) is
    written through, never renamed over: as root a rename would replace the system's /dev/null.
    A socket, block device or other special file is refused in one line.
    """
    from qmltest.util.files import destination

    path = Path(path)
    target = destination(path)
    if target is None:
        with open(path, "wb") as fh:  # a device or pipe: write through, keep the node
            fh.write(data)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: str | Path) -> object:
    """Parse a JSON file; a missing or malformed file is an InputError naming it."""
    from qmltest.errors import InputError
    from qmltest.util.files import readable

    path = readable(path, "a JSON file")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply") from None


def _default(obj: object) -> object:
    import numpy as np  # here, not at import: `qmltest --version` must not load numpy or qiskit

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def to_json(data: object) -> str:
    """Sorted, indented JSON that any reader takes: a NaN or infinite number is written as null
    (Python would write NaN/Infinity, which is not JSON: jq, browsers and our own schemas refuse it)."""
    return dumps(data, indent=1) + "\n"


def dumps(data: object, indent: int | None = None) -> str:
    """json.dumps with sorted keys, numpy values as plain ones and non-finite numbers as null."""
    try:
        return json.dumps(data, indent=indent, sort_keys=True, default=_default, allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere (rare): walk the value once, then write it
        return json.dumps(finite(data), indent=indent, sort_keys=True, default=_default, allow_nan=False)


def finite(data: object) -> object:
    """A JSON-like value with every NaN or infinite number (Python's or numpy's) replaced by None."""
    import math

    import numpy as np

    if isinstance(data, (float, np.floating)):
        return float(data) if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    if isinstance(data, np.ndarray):
        return finite(data.tolist())
    return data


def to_csv(rows: list[dict]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def versions() -> dict[str, str]:
    """Library versions every report records."""
    from importlib.metadata import version

    return {"qmltest": qmltest.__version__, "qiskit": version("qiskit"), "qiskit_aer": version("qiskit-aer")}
