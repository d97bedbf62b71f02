"""The zoo's catalogue: architectures and the pretrained models shipped under data/models/."""

from __future__ import annotations

import json
from pathlib import Path

from qmltest.zoo.architectures import ARCHS

MODELS_DIR = Path(__file__).resolve().parents[2] / "data" / "models"


def architectures() -> list[dict]:
    return [{"name": a.name, "description": a.description} for a in ARCHS.values()]


def shipped_models(folder: Path = MODELS_DIR) -> list[dict]:
    """One row per model folder, read from its manifest (no circuit parsing)."""
    rows = []
    for manifest in sorted(folder.glob("*/model.json")):
        m = json.loads(manifest.read_text())
        tr = m.get("training", {})
        rows.append(
            {
                "path": str(manifest.parent.relative_to(folder.parents[1])),
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
