"""Published JSON Schemas of every file qmltest reads or writes, and the one validation helper.

Files read are validated at load time with `jsonschema` (a well-kept library instead of
hand-written field checks); the semantic checks a schema cannot express (map length 2^m, every
class reachable, finite numbers, preprocessing shapes chaining) stay beside their loaders. An
error names the file, the field path and what was expected, in one line.
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources

from qmltest.errors import InputError

NAMES = (
    "manifest",
    "profile",
    "noise",
    "suite",
    "mutation-report",
    "coverage-report",
    "fuzz-report",
    "mutant-record",
)


@cache
def schema(name: str) -> dict:
    if name not in NAMES:
        raise KeyError(name)
    return json.loads(resources.files(__package__).joinpath(f"{name}.schema.json").read_text())


@cache
def _validator(name: str):  # noqa: ANN202 - a jsonschema validator
    import jsonschema

    cls = jsonschema.validators.validator_for(schema(name))
    return cls(schema(name))


def _path(parts) -> str:  # noqa: ANN001
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def validate(name: str, data: object, source: str) -> None:
    """Raise one InputError for the first schema violation (the deepest, most specific one)."""
    errors = sorted(_validator(name).iter_errors(data), key=lambda e: (-len(e.absolute_path), str(e.absolute_path)))
    if errors:
        best = errors[0]
        path, message = list(best.absolute_path), best.message
        if best.validator == "additionalProperties" and isinstance(best.instance, dict):
            known = sorted(best.schema.get("properties", {}))
            extra = sorted(k for k in best.instance if k not in known)
            path.append(extra[0])  # name the unknown key itself, with the keys that are allowed there
            message = f"is not a known key (known: {', '.join(known)})"
        message = message if len(message) <= 160 else message[:157] + "..."
        raise InputError(f"{source}: field '{_path(path)}': {message}")
    bad = first_non_finite(data)
    if bad is not None:
        raise InputError(f"{source}: field '{bad}': NaN or infinite number")


def first_non_finite(data: object, path: tuple = ()) -> str | None:
    """The path of the first NaN or infinite number inside a JSON-like value, or None."""
    if isinstance(data, float):
        return None if math.isfinite(data) else _path(path)
    if isinstance(data, dict):
        for k, v in data.items():
            hit = first_non_finite(v, (*path, k))
            if hit:
                return hit
    elif isinstance(data, list):
        for i, v in enumerate(data):
            hit = first_non_finite(v, (*path, i))
            if hit:
                return hit
    return None


def is_valid(name: str, data: object) -> bool:
    """Whether `data` matches the schema and holds finite numbers only (`validate` without the message)."""
    return _validator(name).is_valid(data) and first_non_finite(data) is None
