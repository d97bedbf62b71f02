"""Pure IR edits shared by the operators: flatten to (layer, gate) rows, change them, rebuild."""

from __future__ import annotations

from dataclasses import dataclass, replace

from qmltest.model.ir import Block, Gate, Layer, ModelIR, Param, blocks_of
from qmltest.mutation.operators.categories import make


@dataclass(frozen=True)
class Row:
    layer: int
    gate: Gate


def flatten(ir: ModelIR) -> list[Row]:
    """(layer, gate) rows of an IR: a fresh list each call, its rows made once per IR object (every
    site of a generation run flattens the same original)."""
    rows = ir.memo.get_or("edit.rows", lambda: [Row(i, g) for i, layer in enumerate(ir.layers) for g in layer.gates])
    return list(rows)


def rebuild(ir: ModelIR, rows: list[Row]) -> ModelIR:
    """New IR with each layer's gates taken from `rows` (order kept), blocks regrouped."""
    per_layer: list[list[Gate]] = [[] for _ in ir.layers]
    for r in rows:
        per_layer[r.layer].append(r.gate)
    layers = []
    for layer, gates in zip(ir.layers, per_layer):
        old = layer.gates
        if len(old) == len(gates) and all(a is b for a, b in zip(old, gates)):
            layers.append(layer)  # unchanged: blocks are always blocks_of(gates), so reuse it
        else:
            layers.append(Layer(layer.name, layer.kind, blocks_of(gates)))
    return replace(ir, layers=tuple(layers))


def replaced(ir: ModelIR, gates: dict[int, Gate]) -> ModelIR:
    """New IR with the gates at some flat indices replaced in place (same count and order): only
    their layers are rebuilt, the rest shared with `ir` (a quick `rebuild` for angle/name edits).

    When every new gate acts on its old gate's qubits, the result carries its `origin`, so a
    consumer that has digested `ir` can patch the few changed gates instead of rescanning."""
    layers, start = list(ir.layers), 0
    for li, layer in enumerate(ir.layers):
        stop = start + len(layer.gates)
        mine = [i for i in gates if start <= i < stop]
        if mine:
            layers[li] = _swapped(layer, {i - start: gates[i] for i in mine})
        start = stop
    out = replace(ir, layers=tuple(layers))
    if all(g.qubits == ir.gates[i].qubits for i, g in gates.items()):
        object.__setattr__(out, "origin", (ir, dict(gates)))  # frozen: set once, right after making it
    return out


def _swapped(layer: Layer, new: dict[int, Gate]) -> Layer:
    """`layer` with the gates at some of its indices replaced: blocks are swapped in place when each
    new gate keeps its old gate's qubit count (so the grouping stands), else regrouped."""
    old = layer.gates
    if any(len(g.qubits) != len(old[i].qubits) for i, g in new.items()):
        gates = list(old)
        for i, g in new.items():
            gates[i] = g
        return Layer(layer.name, layer.kind, blocks_of(gates))
    blocks, start = list(layer.blocks), 0
    for bi, block in enumerate(layer.blocks):
        stop = start + len(block.gates)
        mine = [i for i in new if start <= i < stop]
        if mine:
            gates = list(block.gates)
            for i in mine:
                gates[i - start] = new[i]
            blocks[bi] = Block(block.kind, tuple(gates))
        start = stop
    return Layer(layer.name, layer.kind, tuple(blocks))


def gate(name: str, qubits: tuple[int, ...], params: list, kinds: list[str] | None = None) -> Gate:
    """A new IR gate (no source span: it is not in the original text)."""
    op = make(name, params)
    kinds = kinds or ["weight"] * len(params)
    ir_params = tuple(Param(str(p), k) if k == "data" else Param(float(p), k) for p, k in zip(params, kinds))
    return Gate(name, qubits, ir_params, op)


def with_params(g: Gate, values: list) -> Gate:
    """The same gate with new parameter values (numbers or expressions)."""
    params = tuple(
        Param(str(v), p.kind) if p.kind == "data" else Param(float(v), p.kind) for v, p in zip(values, g.params)
    )
    return Gate(g.name, g.qubits, params, make(g.name, values))


def with_name(g: Gate, name: str, qubits: tuple[int, ...] | None = None) -> Gate:
    return gate(name, qubits or g.qubits, list(g.operation.params), [p.kind for p in g.params])


def moments(rows: list[Row]) -> list[int]:
    """ASAP time step of every gate (a gate starts after the last gate on any of its qubits)."""
    free: dict[int, int] = {}
    out = []
    for r in rows:
        t = max((free.get(q, 0) for q in r.gate.qubits), default=0)
        out.append(t)
        for q in r.gate.qubits:
            free[q] = t + 1
    return out
