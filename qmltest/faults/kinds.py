"""The fault catalogue: kinds read from data/faults/catalogue.toml, each bound to its transform.

A transform takes (model, context) and returns the faulty model, or None where the kind does not
apply to that model (no feature map to drop a layer of, fewer than eleven features to misorder).
One registry (`transforms.TRANSFORMS`, filled by `@transform`); `catalogue()` refuses a TOML entry without a
transform and a transform without an entry, so the two never drift apart.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from qmltest.errors import InputError
from qmltest.faults.transforms import TRANSFORMS, Context, Transform, string_order  # noqa: F401
from qmltest.model.artifact import Model

CHECKOUT = Path(__file__).resolve().parents[2] / "data" / "faults"
INSTALLED = Path(__file__).resolve().parent / "known"
FOLDER = CHECKOUT if CHECKOUT.is_dir() else INSTALLED
STAGES = ("inputs", "circuit", "readout")


@dataclass(frozen=True)
class Fault:
    id: str
    stage: str
    title: str
    source: str
    wrong: str
    apply: Transform = field(repr=False, compare=False)

    def on(self, model: Model, context: Context | None = None) -> Model | None:
        """The faulty model, or None where this kind does not apply to `model`."""
        return self.apply(model, context or Context())


def catalogue(folder: Path = FOLDER) -> list[Fault]:
    """Every fault kind, in catalogue order."""
    from qmltest.faults import feeding, reading, wiring  # noqa: F401  (importing them registers the transforms)

    path = folder / "catalogue.toml"
    try:
        entries = tomllib.loads(path.read_text())["fault"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: not a fault catalogue ({exc})") from None
    ids = [e["id"] for e in entries]
    if set(ids) != set(TRANSFORMS) or len(ids) != len(set(ids)):
        raise InputError(f"{path}: kinds {sorted(set(ids) ^ set(TRANSFORMS))} lack a transform or an entry")
    faults = []
    for e in entries:
        if e.get("stage") not in STAGES or not str(e.get("source", "")).startswith("https://"):
            raise InputError(f"{path}: fault '{e['id']}' needs a stage ({', '.join(STAGES)}) and an https source")
        faults.append(Fault(e["id"], e["stage"], e["title"], e["source"], e["wrong"], TRANSFORMS[e["id"]]))
    return faults


def get(kind: str) -> Fault:
    for f in catalogue():
        if f.id == kind:
            return f
    raise InputError(f"unknown fault kind '{kind}' (choose from {', '.join(f.id for f in catalogue())})")
