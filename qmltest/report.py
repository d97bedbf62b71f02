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
    """Binary twin of write_text_atomic (NPZ suites, failure sets); readable by others as usual."""
    path = Path(path)
    if path.is_dir():
        from qmltest.errors import InputError

        raise InputError(f"{path}: is a directory, not a file to write")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: str | Path) -> object:
    """Parse a JSON file; a missing or malformed file is an InputError naming it."""
    from qmltest.errors import InputError

    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a JSON file")
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
    return json.dumps(data, indent=1, sort_keys=True, default=_default) + "\n"


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
