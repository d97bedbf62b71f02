"""Fault kinds in the readout: the state -> class table or the measured qubits changed, the
circuit's gates untouched (catalogue stage "readout"). They apply to table readouts (basis,
parity, modulo, map); an expectation readout has no table to misread."""

from __future__ import annotations

from dataclasses import replace

from qmltest.faults.transforms import Context, transform
from qmltest.model.artifact import Model


def _table(model: Model) -> list[int] | None:
    ro = model.manifest["readout"]
    return None if "map" not in ro or model.is_kernel else [int(v) for v in ro["map"]]


def _with_table(model: Model, table: list[int]) -> Model | None:
    if table == _table(model):
        return None  # the fault changes nothing on this model's readout
    return model.with_manifest(readout=dict(model.manifest["readout"], kind="map", map=table))


def _reversed_bits(s: int, m: int) -> int:
    return int(format(s, f"0{m}b")[::-1], 2)


@transform("bit-order-reversed")
def bit_order_reversed(model: Model, ctx: Context) -> Model | None:
    table = _table(model)
    m = len(model.ir.measured)
    if table is None or m < 2:
        return None
    return _with_table(model, [table[_reversed_bits(s, m)] for s in range(len(table))])


@transform("parity-for-modulo")
def parity_for_modulo(model: Model, ctx: Context) -> Model | None:
    table = _table(model)
    if table is None or model.num_classes != 2 or len(model.ir.measured) < 2:
        return None
    return _with_table(model, [bin(s).count("1") % 2 for s in range(len(table))])


@transform("classes-reordered")
def classes_reordered(model: Model, ctx: Context) -> Model | None:
    table = _table(model)
    c = model.num_classes
    if table is None or c < 2:
        return None
    return _with_table(model, [c - 1 - v if v >= 0 else v for v in table])


def _measuring(model: Model, measured: tuple[int, ...]) -> Model:
    ir = replace(model.ir, measured=measured)
    ro = dict(model.manifest["readout"])
    if "qubits" in ro:
        ro["qubits"] = list(measured)
    return model.with_ir(ir, export=False, readout=ro)


@transform("layout-not-undone")
def layout_not_undone(model: Model, ctx: Context) -> Model | None:
    """Every measured qubit read one position further along a line (a SWAP chain's permutation)."""
    n = model.ir.num_qubits
    if _table(model) is None or n < 2:
        return None
    return _measuring(model, tuple((q + 1) % n for q in model.ir.measured))


@transform("observable-wrong-qubit")
def observable_wrong_qubit(model: Model, ctx: Context) -> Model | None:
    """The first read qubit replaced by the lowest qubit the model does not read."""
    free = [q for q in range(model.ir.num_qubits) if q not in model.ir.measured]
    if _table(model) is None or not free:
        return None
    return _measuring(model, (free[0], *model.ir.measured[1:]))
