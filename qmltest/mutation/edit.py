"""Pure IR edits shared by the operators: flatten to (layer, gate) rows, change them, rebuild."""

from __future__ import annotations

from dataclasses import dataclass, replace

from qmltest.ir import Gate, Layer, ModelIR, Param, blocks_of
from qmltest.mutation.gates import make


@dataclass(frozen=True)
class Row:
    layer: int
    gate: Gate


_ROWS: dict[int, tuple[ModelIR, list[Row]]] = {}


def flatten(ir: ModelIR) -> list[Row]:
    """(layer, gate) rows of an IR: a fresh list each call, its rows made once per IR object (every
    site of a generation run flattens the same original)."""
    hit = _ROWS.get(id(ir))
    if hit is None or hit[0] is not ir:
        if len(_ROWS) >= 64:
            _ROWS.clear()
        hit = _ROWS[id(ir)] = (ir, [Row(i, g) for i, layer in enumerate(ir.layers) for g in layer.gates])
    return list(hit[1])


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


def gate(name: str, qubits: tuple[int, ...], params: list, kinds: list[str] | None = None) -> Gate:
    """A new IR gate (no source span: it is not in the original text)."""
    op = make(name, params)
    kinds = kinds or ["weight"] * len(params)
    ir_params = tuple(Param(str(p), k) if k == "data" else Param(float(p), k) for p, k in zip(params, kinds))
    return Gate(name, qubits, ir_params, op)


def with_params(g: Gate, values: list) -> Gate:
    """The same gate with new parameter values (numbers or expressions)."""
    return gate(g.name, g.qubits, values, [p.kind for p in g.params])


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
