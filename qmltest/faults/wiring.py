"""Fault kinds in the circuit: trained weights misbound, layers dropped or repeated, gates
rewired (catalogue stage "circuit"). Pure IR edits (`mutation.operators.edit`)."""

from __future__ import annotations

from dataclasses import replace

from qmltest.faults.transforms import Context, string_order, transform
from qmltest.model.artifact import Model
from qmltest.model.ir import Layer, ModelIR
from qmltest.mutation.operators import edit

SYMMETRIC = frozenset({"cz", "rzz", "rxx", "ryy", "swap", "iswap", "cp", "cu1", "ecr_sym"})
AXIS = {"rx": "ry", "ry": "rx", "rz": "rx", "p": "rx"}


def _weights(ir: ModelIR) -> list[tuple[int, int]]:
    """(flat gate index, parameter index) of every trained weight, in circuit order."""
    return [(i, k) for i, g in enumerate(ir.gates) for k, p in enumerate(g.params) if p.kind == "weight"]


def _rebound(model: Model, order: list[int]) -> Model | None:
    """Weight j of the trained vector bound to weight slot order[j]."""
    slots = _weights(model.ir)
    values = [model.ir.gates[i].params[k].value for i, k in slots]
    moved = [0.0] * len(values)
    for j, slot in enumerate(order):
        moved[slot] = values[j]
    if moved == values:
        return None
    new: dict[int, list] = {}
    for (i, k), v in zip(slots, moved):
        new.setdefault(i, list(model.ir.gates[i].operation.params))[k] = v
    gates = {i: edit.with_params(model.ir.gates[i], params) for i, params in new.items()}
    return model.with_ir(edit.replaced(model.ir, gates), export=False)


@transform("weights-shifted")
def weights_shifted(model: Model, ctx: Context) -> Model | None:
    n = len(_weights(model.ir))
    return None if n < 2 else _rebound(model, [(j + 1) % n for j in range(n)])


@transform("weights-string-order")
def weights_string_order(model: Model, ctx: Context) -> Model | None:
    n = len(_weights(model.ir))
    return None if n < 11 else _rebound(model, string_order(n))


def _layers(model: Model, layers: list[Layer]) -> Model:
    return model.with_ir(replace(model.ir, layers=tuple(layers)), export=False)


@transform("reupload-dropped")
def reupload_dropped(model: Model, ctx: Context) -> Model | None:
    maps = [i for i, layer in enumerate(model.ir.layers) if layer.kind == "feature_map"]
    if len(maps) < 2:
        return None
    return _layers(model, [layer for i, layer in enumerate(model.ir.layers) if i != maps[0]])  # range(1, L)


@transform("feature-map-reps")
def feature_map_reps(model: Model, ctx: Context) -> Model | None:
    maps = [i for i, layer in enumerate(model.ir.layers) if layer.kind == "feature_map"]
    if not maps:
        return None
    layers = list(model.ir.layers)
    first = layers[maps[0]]
    layers.insert(maps[0] + 1, Layer(f"{first.name}_again", first.kind, first.blocks))
    return _layers(model, layers)


def _edited(model: Model, pick, change) -> Model | None:
    rows = edit.flatten(model.ir)
    out, changed = [], False
    for r in rows:
        layer = model.ir.layers[r.layer]
        g = change(r.gate) if pick(layer, r.gate) else r.gate
        changed |= g is not r.gate
        if g is not None:
            out.append(edit.Row(r.layer, g))
        else:
            changed = True
    return model.with_ir(edit.rebuild(model.ir, out), export=False) if changed else None


@transform("entanglement-reversed")
def entanglement_reversed(model: Model, ctx: Context) -> Model | None:
    return _edited(
        model,
        lambda layer, g: layer.kind == "ansatz" and len(g.qubits) == 2 and g.name not in SYMMETRIC,
        lambda g: edit.with_name(g, g.name, (g.qubits[1], g.qubits[0])),
    )


@transform("embedding-axis")
def embedding_axis(model: Model, ctx: Context) -> Model | None:
    return _edited(
        model,
        lambda layer, g: len(g.qubits) == 1 and g.name in AXIS and any(p.kind == "data" for p in g.params),
        lambda g: edit.with_name(g, AXIS[g.name]),
    )


@transform("hadamard-dropped")
def hadamard_dropped(model: Model, ctx: Context) -> Model | None:
    return _edited(model, lambda layer, g: layer.kind == "feature_map" and g.name == "h", lambda g: None)
