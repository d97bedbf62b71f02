"""The zoo's catalogue: architectures and the pretrained models shipped under data/models/ (in a
checkout) or inside the installed package (`qmltest.zoo.shipped`, the same folders in the wheel)."""

from __future__ import annotations

import json
from pathlib import Path

from qmltest.zoo.architectures import ARCHS

CHECKOUT_MODELS = Path(__file__).resolve().parents[2] / "data" / "models"
INSTALLED_MODELS = Path(__file__).resolve().parent / "shipped"
MODELS_DIR = CHECKOUT_MODELS if CHECKOUT_MODELS.is_dir() else INSTALLED_MODELS


def shipped(path: Path) -> Path | None:
    """The shipped model a path names when it is not a folder here: 'zfm-ra-iris' or the
    checkout's 'data/models/zfm-ra-iris' from an installed qmltest (None when it names none)."""
    named = len(path.parts) == 1 or (len(path.parts) == 3 and path.parts[:2] == ("data", "models"))
    if path.exists() or not named:
        return None
    folder = MODELS_DIR / path.name
    return folder if (folder / "model.json").is_file() else None


def architectures() -> list[dict]:
    return [{"name": a.name, "description": a.description} for a in ARCHS.values()]


def shipped_models(folder: Path = MODELS_DIR) -> list[dict]:
    """One row per model folder, read from its manifest (no circuit parsing)."""
    rows, here = [], folder == CHECKOUT_MODELS  # a checkout's paths relative to it, an install's absolute
    for manifest in sorted(folder.glob("*/model.json")):
        m = json.loads(manifest.read_text())
        tr = m.get("training", {})
        rows.append(
            {
                "path": str(manifest.parent.relative_to(folder.parents[1]) if here else manifest.parent),
                "model": manifest.parent.name,
                "name": m["name"],
                "arch": m.get("arch", "unknown"),
                "dataset": tr.get("dataset"),
                "classes": m["classes"],
                "num_qubits": m["num_qubits"],
                "gates": m["layers"][-1]["stop"] if m["layers"] else 0,
                "test_accuracy": tr.get("test_accuracy"),
            }
        )
    return rows
