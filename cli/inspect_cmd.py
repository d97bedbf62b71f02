"""`qmltest inspect`: layers, blocks, gates, parameters and readout of a model."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import err, handle_errors, out, write_output
from rich.table import Table

from qmltest import api
from qmltest.interop.layers import angle_role
from qmltest.model import artifact
from qmltest.model.artifact import Model
from qmltest.util import writers as report


def describe(model: Model) -> dict:
    """A JSON-ready summary of the model's IR and manifest."""
    layers = []
    start = 0
    for layer in model.ir.layers:
        gates = layer.gates
        kinds: dict[str, int] = {}
        for g in gates:
            for p in g.params:
                kinds[p.kind] = kinds.get(p.kind, 0) + 1
        layers.append(
            {
                "name": layer.name,
                "kind": layer.kind,
                "start": start,
                "stop": start + len(gates),
                "blocks": [{"kind": b.kind, "gates": len(b.gates)} for b in layer.blocks],
                "gate_counts": {
                    name: sum(1 for g in gates if g.name == name) for name in sorted({g.name for g in gates})
                },
                "parameters": kinds,
            }
        )
        start += len(gates)
    m = model.manifest
    return {
        "source": model.source,
        "name": m["name"],
        "arch": m.get("arch"),
        "num_qubits": model.ir.num_qubits,
        "num_gates": len(model.ir.gates),
        "num_weights": _weights(model),
        "encoding": m["encoding"],
        "features": m["feature_names"],
        "preprocessing": [s["op"] for s in m["preprocessing"]],
        "readout": dict(m["readout"], measurement_bases=model.measurement_bases),
        "task": model.task,
        "classes": m["classes"],
        "layers": layers,
        "training": m.get("training", {}),
        "qasm_sha256": model.sha256,
        "inferred": list(model.inferred),
        "mutable": {k: v for k, v in MUTABLE.items() if k in ("feature_map", "preprocessing")}
        if model.is_kernel  # a kernel model: its feature map and the data it reads (the SVM's numbers stay)
        else MUTABLE,
    }


def _weights(model: artifact.Model) -> int:
    """Trained weights: the source's own parameter count when imported (a trained weight may be 0
    or pi/2 exactly), else the bound angles that are not multiples of pi/4 (constants)."""
    count = model.manifest.get("import", {}).get("weights")
    if isinstance(count, int):
        return count
    return sum(1 for g in model.ir.gates for p in g.params if p.kind == "weight" and angle_role(float(p.value)) == "W")


MUTABLE = {
    "feature_map": "gate operators (quanforge RGA RGD GR GPM GSM GRT; classic add/remove/replace-gate); "
    "never its data angles",
    "ansatz": "every operator: weights (quanforge PF PSF PS; qml APC), gates, units (qml APGC LS ILS ALA ALD)",
    "preprocessing": "qml DFC (feature and image changes, as a preprocessing step)",
    "readout": "classic add-measure and remove-measure; a linear head after it is never mutated",
}
"""What the mutation operators may touch, by part of the model (README, mutation sections)."""


SHOWN_BLOCKS = 24
"""Blocks listed per layer in the table; the rest are counted (a 30,000-gate layer has 20,000)."""


def _blocks(blocks: list[dict]) -> str:
    """'e1 r2 e1 ...' (kind initial and gate count), cut after SHOWN_BLOCKS with the count left out."""
    text = " ".join(f"{b['kind'][0]}{b['gates']}" for b in blocks[:SHOWN_BLOCKS])
    return text if len(blocks) <= SHOWN_BLOCKS else f"{text} ... ({len(blocks) - SHOWN_BLOCKS:,} more)"


@handle_errors
def inspect(
    model_path: Path = typer.Argument(..., help="Model folder (model.qasm + model.json) or a .qasm file."),
    manifest: Path = typer.Option(None, help="Manifest for a bare .qasm file."),
    json_out: Path = typer.Option(None, "--json", help="Write the description as JSON ('-' for stdout)."),
    gates: bool = typer.Option(False, "--gates", help="List every gate with its parameters and source line."),
) -> None:
    """Show the layer/block/gate structure, parameters and readout of a model."""
    model = api.load(model_path, manifest)
    info = describe(model)
    if gates:
        info["gates"] = [
            {
                "name": g.name,
                "qubits": list(g.qubits),
                "params": [[p.value, p.kind] for p in g.params],
                "line": g.span.start_line if g.span else None,
            }
            for g in model.ir.gates
        ]
    write_output(json_out, report.to_json(info))
    if str(json_out) == "-":
        return
    for note in model.inferred:
        err.print(f"inferred: {note}", markup=False)
    render(info)


def render(info: dict) -> None:
    """The human view of `describe`: header, readout, layer table, gates when listed, training."""
    out.print(
        f"[bold]{info['name']}[/] ({info['arch']}): {info['num_qubits']} qubits, {info['num_gates']} gates, "
        f"{info['num_weights']} weights, {info['encoding']['kind']} encoding, {len(info['features'])} features"
    )
    ro = info["readout"]
    detail = f" observables {ro['observables']}" if ro.get("kind") == "expectation" else ""
    if ro.get("measurement_bases", 1) > 1:
        detail += f" in {ro['measurement_bases']} measurement bases"
    head = f" -> linear head {len(ro['head']['weight'][0])}x{len(ro['head']['bias'])}" if "head" in ro else ""
    reads = "one real output (regressor)" if info.get("task") == "regression" else f"classes {info['classes']}"
    out.print(f"readout: {ro['kind']}{detail} over qubits {ro['qubits']}{head} -> {reads}", markup=False)
    if info["preprocessing"]:
        out.print(f"preprocessing: {' -> '.join(info['preprocessing'])}", markup=False)
    t = Table(title="layers")
    for col in ("layer", "kind", "gates", "blocks", "gate types", "params"):
        t.add_column(col)
    for row in info["layers"]:
        t.add_row(
            row["name"],
            row["kind"],
            f"{row['start']}-{row['stop']}",
            _blocks(row["blocks"]),
            ", ".join(f"{k}:{v}" for k, v in row["gate_counts"].items()),
            ", ".join(f"{k}:{v}" for k, v in row["parameters"].items()),
        )
    out.print(t)
    if "gates" in info:
        g = Table(title="gates")
        for col in ("#", "gate", "qubits", "params", "line"):
            g.add_column(col)
        for i, row in enumerate(info["gates"]):
            g.add_row(
                str(i),
                row["name"],
                str(row["qubits"]),
                ", ".join(f"{v if isinstance(v, str) else round(v, 4)} ({k})" for v, k in row["params"]),
                str(row["line"]),
            )
        out.print(g)
    for part, what in info["mutable"].items():
        out.print(f"mutated: {part}: {what}", markup=False)
    tr = info["training"]
    if tr:
        out.print(f"trained on {tr.get('dataset')} {tr.get('classes')}: test accuracy {tr.get('test_accuracy')}")
