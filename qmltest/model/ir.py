"""Layer/gate IR: Model -> Layer (feature_map | ansatz) -> Block (rotation | entangling | other) -> Gate.

The IR is frozen; transforms (mutation operators) build new IR objects. Each gate keeps the Qiskit
operation it came from, its qubits, its parameters marked data / weight / constant, and the source
span of its statement in the QASM3 text (1-based line, 0-based column, end inclusive, as
`openqasm3` reports it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from qiskit.circuit import ClassicalRegister, Instruction, Parameter, ParameterExpression, QuantumCircuit

from qmltest.errors import InputError
from qmltest.util.memo import Memo, memo_field

LAYER_KINDS = ("feature_map", "ansatz")
CATEGORY = {True: "rotation", False: "entangling"}
"""Block category by whether a gate acts on one qubit (`Gate.category`, `blocks_of`)."""


@dataclass(frozen=True)
class Span:
    start_line: int
    start_column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Param:
    """One gate parameter: its value (number or expression text) and its role."""

    value: float | str
    kind: str  # data | weight | constant


@dataclass(frozen=True)
class Gate:
    name: str
    qubits: tuple[int, ...]
    params: tuple[Param, ...]
    operation: Instruction
    span: Span | None = None
    memo: Memo = memo_field()
    """What is derived from this gate (its compiled op): `statevector.compile_gates`."""

    @property
    def category(self) -> str:
        """Block category: rotation (1 qubit), entangling (2+ qubits)."""
        return CATEGORY[len(self.qubits) == 1]


@dataclass(frozen=True)
class Block:
    kind: str  # rotation | entangling | other
    gates: tuple[Gate, ...]


@dataclass(frozen=True)
class Layer:
    name: str
    kind: str  # feature_map | ansatz
    blocks: tuple[Block, ...]

    @cached_property
    def gates(self) -> tuple[Gate, ...]:
        """Cached: generation and diffing read every layer's gates once per mutant."""
        return tuple(g for b in self.blocks for g in b.gates)


@dataclass(frozen=True)
class ModelIR:
    num_qubits: int
    layers: tuple[Layer, ...]
    measured: tuple[int, ...]
    inputs: tuple[Parameter, ...]  # feature parameters, in feature order
    origin: tuple | None = field(default=None, init=False, compare=False, repr=False)
    """(base IR, {flat index: new gate}) when `mutation.operators.edit.replaced` made this IR with every new
    gate on its old qubits (so the same time slots): canonical forms patch the base's instead of
    rescanning. Not copied by `replace`, not pickled."""
    memo: Memo = memo_field()
    """What the mutation room derives from this IR (flat rows, ansatz units, delta indices)."""

    @cached_property
    def gates(self) -> tuple[Gate, ...]:
        return tuple(g for layer in self.layers for g in layer.gates)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "origin"}

    def layer_table(self) -> list[dict]:
        """Layer boundaries as gate-index ranges [start, stop) (barriers and measures not counted)."""
        rows, start = [], 0
        for layer in self.layers:
            stop = start + len(layer.gates)
            rows.append({"name": layer.name, "kind": layer.kind, "start": start, "stop": stop})
            start = stop
        return rows


def _param(value: object, in_ansatz: bool) -> Param:
    if isinstance(value, ParameterExpression) and value.parameters:
        return Param(str(value), "data")
    number = float(value)  # type: ignore[arg-type]
    return Param(number, "weight" if in_ansatz else "constant")


def blocks_of(gates: list[Gate]) -> tuple[Block, ...]:
    """Group consecutive gates of one category into blocks."""
    out: list[Block] = []
    run: list[Gate] = []
    single = False
    for g in gates:  # `Gate.category` inlined: this runs for every changed layer of every mutant
        one = len(g.qubits) == 1
        if run and one is not single:
            out.append(Block(CATEGORY[single], tuple(run)))
            run = []
        single = one
        run.append(g)
    if run:
        out.append(Block(CATEGORY[single], tuple(run)))
    return tuple(out)


def infer_layers(gate_has_data: list[bool]) -> list[dict]:
    """No barriers and no manifest: runs of data-carrying gates are feature maps, the rest ansatz."""
    rows: list[dict] = []
    for i, has_data in enumerate(gate_has_data):
        kind = "feature_map" if has_data else "ansatz"
        if rows and rows[-1]["kind"] == kind:
            rows[-1]["stop"] = i + 1
        else:
            rows.append({"name": f"{kind}_{len(rows)}", "kind": kind, "start": i, "stop": i + 1})
    return rows


def build(
    circuit: QuantumCircuit,
    inputs: list[Parameter],
    layer_table: list[dict] | None,
    spans: list[Span | None] | None = None,
) -> tuple[ModelIR, list[dict]]:
    """Build the IR of a loaded circuit. Returns the IR and the layer table actually used."""
    raw: list[tuple[Instruction, tuple[int, ...], Span | None]] = []
    measured: dict[int, int] = {}
    barrier_after: list[int] = []
    # a measurement is final (readout) when no later gate touches its qubit; an earlier one stays in the
    # gate list as a mid-circuit measurement (its outcome unused: the engine treats it as dephasing)
    last_gate: dict[int, int] = {}
    for pos, inst in enumerate(circuit.data):
        if inst.operation.name not in ("barrier", "measure"):
            for q in inst.qubits:
                last_gate[circuit.find_bit(q).index] = pos
    for pos, inst in enumerate(circuit.data):
        name = inst.operation.name
        qubits = tuple(circuit.find_bit(q).index for q in inst.qubits)
        span = spans[pos] if spans else None
        if name == "barrier":
            barrier_after.append(len(raw))
            continue
        if name == "measure" and pos > last_gate.get(qubits[0], -1):
            measured[circuit.find_bit(inst.clbits[0]).index] = qubits[0]
            continue
        raw.append((inst.operation, qubits, span))
    if not measured:
        raise InputError("the circuit measures no qubit: nothing to read out")
    has_data = [any(isinstance(p, ParameterExpression) and p.parameters for p in op.params) for op, _, _ in raw]
    if layer_table is None:
        cuts = sorted({0, len(raw), *[b for b in barrier_after if 0 < b < len(raw)]})
        if len(cuts) > 2:
            layer_table = []
            for a, b in zip(cuts, cuts[1:]):
                kind = "feature_map" if all(has_data[a:b]) or (any(has_data[a:b]) and a == 0) else "ansatz"
                layer_table.append({"name": f"layer_{len(layer_table)}", "kind": kind, "start": a, "stop": b})
        else:
            layer_table = infer_layers(has_data)
    _check_table(layer_table, len(raw))
    layers = []
    for row in layer_table:
        in_ansatz = row["kind"] == "ansatz"
        gates = [
            Gate(op.name, qubits, tuple(_param(p, in_ansatz) for p in op.params), op, span)
            for op, qubits, span in raw[row["start"] : row["stop"]]
        ]
        layers.append(Layer(row["name"], row["kind"], blocks_of(gates)))
    order = tuple(measured[c] for c in sorted(measured))
    ir = ModelIR(circuit.num_qubits, tuple(layers), order, tuple(inputs))
    return ir, [dict(r) for r in layer_table]


def _check_table(table: list[dict], num_gates: int) -> None:
    expect = 0
    for row in table:
        if row.get("kind") not in LAYER_KINDS:
            raise InputError(f"layer '{row.get('name')}': kind must be one of {LAYER_KINDS}")
        if row.get("start") != expect or not isinstance(row.get("stop"), int) or row["stop"] < row["start"]:
            raise InputError(f"layer table: layer '{row.get('name')}' does not continue at gate {expect}")
        expect = row["stop"]
    if expect != num_gates:
        raise InputError(f"layer table covers {expect} gates but the circuit has {num_gates}")


def to_circuit(ir: ModelIR, measure: bool = True, barriers: bool = True) -> QuantumCircuit:
    """Rebuild a QuantumCircuit: layers separated by barriers, final measurements in readout order."""
    qc = QuantumCircuit(ir.num_qubits)
    mids = [g for g in ir.gates if g.name == "measure"]
    mid = ClassicalRegister(len(mids), "mid") if mids else None
    if mid is not None:
        qc.add_register(mid)
    k = 0
    for i, layer in enumerate(ir.layers):
        if i and barriers:
            qc.barrier()
        for g in layer.gates:
            if g.name == "measure":
                qc.measure(g.qubits[0], mid[k])  # type: ignore[index]
                k += 1
            else:
                qc.append(g.operation, list(g.qubits))
    if measure:
        creg = ClassicalRegister(len(ir.measured), "meas")
        qc.add_register(creg)
        if barriers:
            qc.barrier()
        for c, q in enumerate(ir.measured):
            qc.measure(q, creg[c])
    return qc


def unitary_part(ir: ModelIR) -> QuantumCircuit:
    """The circuit without barriers or measurements: what the engine simulates."""
    return to_circuit(ir, measure=False, barriers=False)
