"""`from_circuit`: any Qiskit circuit + trained weights -> a qmltest Model (model.qasm + model.json).

The circuit is flattened to standard gates (library blocks appended as one instruction are
decomposed, and remembered as layers), the weights are bound as numbers, the data parameters are
renamed ``x_000, x_001, ...`` in feature order (QASM3 export mangles other names and the loader
sorts them as strings; DESIGN.md), final measurements are replaced by the readout's, and the
result is exported to OpenQASM 3 and loaded back, so the model is exactly what `qmltest` reads
from disk. Nothing here touches the file system.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from qiskit.circuit import (
    ClassicalRegister,
    Instruction,
    Parameter,
    ParameterExpression,
    ParameterVectorElement,
    QuantumCircuit,
)
from qiskit.circuit.library import get_standard_gate_name_mapping

from qmltest.errors import InputError
from qmltest.interop import layers as lay
from qmltest.interop import roundtrip
from qmltest.interop.preprocessing import to_head, to_steps
from qmltest.model import artifact, qasm
from qmltest.model import ir as irmod
from qmltest.model import readout as ro
from qmltest.simulate import statevector

_STANDARD = get_standard_gate_name_mapping()
_PLUMBING = ("barrier", "measure")
MAX_DECOMPOSE = 12


@dataclass
class Flat:
    """A circuit flattened to standard gates, with what the flattening saw."""

    num_qubits: int
    gates: list[tuple[Instruction, tuple[int, ...]]] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)  # top-level instruction index of a library block, or -1
    labels: dict[int, str] = field(default_factory=dict)
    barriers: list[int] = field(default_factory=list)  # gate positions where a barrier stood
    measures: list[tuple[int, int]] = field(default_factory=list)  # final (clbit, qubit)


def _is_standard(op: Instruction) -> bool:
    std = _STANDARD.get(op.name)
    return std is not None and std.num_qubits == op.num_qubits and len(std.params) == len(op.params)


def _expand(op: Instruction) -> list[tuple[Instruction, tuple[int, ...]]]:
    """Decompose a composite instruction into standard gates on its own qubits 0..k-1."""
    sub = QuantumCircuit(op.num_qubits, op.num_clbits)
    sub.append(op, range(op.num_qubits), range(op.num_clbits))
    for _ in range(MAX_DECOMPOSE):
        if all(_is_standard(i.operation) or i.operation.name in _PLUMBING for i in sub.data):
            break
        try:
            sub = sub.decompose()
        except Exception as exc:  # qiskit raises several types for gates it cannot expand
            raise InputError(f"gate '{op.name}' cannot be decomposed into standard gates: {exc}") from None
    else:
        bad = sorted({i.operation.name for i in sub.data if not _is_standard(i.operation)})
        raise InputError(f"gate(s) {bad} have no decomposition into standard gates")
    out = []
    for inst in sub.data:
        if inst.operation.name == "barrier":
            continue
        if inst.operation.name == "measure":
            raise InputError(f"block '{op.name}' measures inside: move measurements out of library blocks")
        out.append((inst.operation, tuple(sub.find_bit(q).index for q in inst.qubits)))
    return out


def flatten(circuit: QuantumCircuit) -> Flat:
    """Flatten to standard gates; final measurements, barriers and library blocks are recorded."""
    if circuit.num_qubits == 0:
        raise InputError("the circuit has no qubits")
    flat = Flat(circuit.num_qubits)
    pending: list[tuple[int, int, int]] = []  # (clbit, qubit, gate position) of measurements seen
    for top, inst in enumerate(circuit.data):
        op = inst.operation
        qubits = tuple(circuit.find_bit(q).index for q in inst.qubits)
        if op.name == "barrier":
            flat.barriers.append(len(flat.gates))
        elif op.name == "measure":
            pending.append((circuit.find_bit(inst.clbits[0]).index, qubits[0], len(flat.gates)))
        elif getattr(op, "condition", None) is not None or op.name in (
            "if_else",
            "while_loop",
            "for_loop",
            "switch_case",
        ):
            raise InputError(f"control flow ('{op.name}') is not supported in a QNN circuit")
        elif op.name == "reset":
            raise InputError("'reset' is not supported in a QNN circuit")
        elif _is_standard(op):
            flat.gates.append((op, qubits))
            flat.groups.append(-1)
        elif op.definition is not None:
            flat.labels[top] = op.label or op.name
            for sub_op, sub_q in _expand(op):
                flat.gates.append((sub_op, tuple(qubits[i] for i in sub_q)))
                flat.groups.append(top)
        else:
            raise InputError(f"unknown gate '{op.name}' (no definition): qmltest reads standard Qiskit gates")
    last: dict[int, int] = {}
    for pos, (_, qubits) in enumerate(flat.gates):
        for q in qubits:
            last[q] = pos
    for clbit, qubit, pos in pending:
        if last.get(qubit, -1) >= pos:  # a gate follows on this qubit: a mid-circuit measurement
            raise InputError(f"qubit {qubit} is measured mid-circuit: import circuits whose measurements are final")
        flat.measures.append((clbit, qubit))
    flat.measures.sort()
    return flat


def natural_order(params: Sequence[Parameter]) -> list[Parameter]:
    """Parameters in feature order: vector elements by index, plain names naturally (x_2 before x_10)."""

    def key(p: Parameter) -> tuple:
        if isinstance(p, ParameterVectorElement):
            return (p.vector.name, p.index)
        return tuple((0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", p.name) if t), 0

    return sorted(params, key=key)


def _looks_like_feature(p: Parameter) -> bool:
    """Qiskit's feature maps name their inputs `x` (exported to QASM3 as `_x_0_`, or `x_000`)."""
    if isinstance(p, ParameterVectorElement):
        return p.vector.name == "x"
    return re.fullmatch(r"_?x(\[\d+\]|_\d+_?|\d+)?", p.name) is not None


def split_parameters(
    circuit: QuantumCircuit, input_params: Sequence[Parameter | str] | None, weights: object
) -> tuple[list[Parameter], list[Parameter]]:
    """(inputs, weight parameters), each in order; ambiguous circuits raise one clear error."""
    every = natural_order(list(circuit.parameters))
    by_name = {p.name: p for p in every}
    if input_params is not None:
        inputs = []
        for p in input_params:
            name = p if isinstance(p, str) else p.name
            if name not in by_name:
                raise InputError(f"feature parameter '{name}' is not in the circuit (it has {sorted(by_name)[:6]})")
            inputs.append(by_name[name])
    elif isinstance(weights, dict):
        keyed = set(weights) | {mangled(k) for k in weights}
        inputs = [p for p in every if p.name not in keyed]
    elif weights is not None:
        inputs = [p for p in every if _looks_like_feature(p)]
        if not inputs and every:
            raise InputError(
                f"cannot split the circuit's parameters {[p.name for p in every][:6]} into features and weights: "
                "name the features (--features / input_params)"
            )
    else:
        inputs = list(every)
    chosen = {p.name for p in inputs}
    return inputs, [p for p in every if p.name not in chosen]


def bind_weights(weight_params: list[Parameter], weights: object) -> dict[Parameter, float]:
    """Weight values by parameter: a vector in parameter order, or a {name: value} mapping."""
    if isinstance(weights, dict):
        weights = _by_circuit_names(weights, weight_params)
        unknown = sorted(set(weights) - {p.name for p in weight_params})
        if unknown:
            raise InputError(
                f"weights name parameter(s) {unknown[:4]} that are not weights of the circuit "
                f"(its weights: {', '.join(p.name for p in weight_params[:4])}...)"
            )
    if not weight_params:
        given = len(weights) if isinstance(weights, dict) else (0 if weights is None else int(np.size(weights)))
        if given:
            raise InputError(f"the circuit has no weight parameters but {given} weights were given")
        return {}
    if weights is None:
        raise InputError(
            f"the circuit has {len(weight_params)} unbound weight parameters "
            f"({', '.join(p.name for p in weight_params[:4])}...): give the trained weights (--weights)"
        )
    if isinstance(weights, dict):
        missing = [p.name for p in weight_params if p.name not in weights]
        if missing:
            raise InputError(f"no weight value for parameter(s) {missing[:4]}")
        values = [weights[p.name] for p in weight_params]
    else:
        values = list(np.asarray(weights, dtype=float).ravel())
        if len(values) != len(weight_params):
            raise InputError(
                f"the circuit has {len(weight_params)} weight parameters but {len(values)} weights were given"
            )
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise InputError("the weights contain NaN or infinite values")
    return {p: float(v) for p, v in zip(weight_params, arr)}


_ALPHA = "a-zA-Z\u0370-\u03ff"  # Qiskit's exporter: ASCII and Greek letters (qasm3/exporter.py _ALPHA)
_VALID = re.compile(rf"[{_ALPHA}_][{_ALPHA}_0-9]*")
_BAD = re.compile(rf"[^{_ALPHA}_0-9]")


def mangled(name: str) -> str:
    """The name Qiskit's OpenQASM 3 exporter gives a parameter: 'c1[0]' -> '_c1_0_', 'θ[0]' ->
    '_θ_0_', 'x' stays (its escaped_declarable_name rule)."""
    return name if _VALID.fullmatch(name) else "_" + _BAD.sub("_", name)


def _by_circuit_names(weights: dict, weight_params: list[Parameter]) -> dict:
    """A {name: value} mapping keyed by the user's names (Qiskit's 'c1[0]') read against a circuit
    that carries the exported ones ('_c1_0_'); unmatched keys stay as they are (and are refused)."""
    names = {p.name for p in weight_params}
    return {k if k in names or mangled(k) not in names else mangled(k): v for k, v in weights.items()}


def _role(op: Instruction, inputs: set[Parameter], weights: set[Parameter]) -> str:
    role = "C"
    for p in op.params:
        if isinstance(p, ParameterExpression) and p.parameters:
            if p.parameters & inputs:
                return "D"
            if p.parameters & weights:
                role = "W"
        elif isinstance(p, (int, float)) and not isinstance(p, bool):
            if lay.angle_role(float(p)) == "W":
                role = "W"
    return role


def readout_spec(
    kind: str,
    measured: list[int],
    classes: list | None,
    readout_map: Sequence[int] | None,
    interpret: Callable[[int], int] | None,
    observables: Sequence[str] | None,
    threshold: float,
    num_qubits: int,
    warnings: list[str] | None = None,
    head: dict | None = None,
) -> tuple[dict, list]:
    """(manifest readout, class labels) for one of the readout kinds.

    A class the readout never predicts is an error, or, when `warnings` is a list (mirroring a
    library model as it is), a note appended to it.
    """
    if kind == "expectation":
        obs = [ro.canonical(o) for o in observables or []]
        outputs = len(obs) if head is None else len(head["bias"])
        count = len(classes) if classes is not None else (2 if outputs == 1 else outputs)
        ro.check_observables(obs, num_qubits, count, head)
        if head is not None and threshold:
            raise InputError("a linear head carries its own bias: give no threshold")
        bound = max(sum(abs(c) for c, p in ro.terms(o) if set(p) != {"I"}) for o in obs)
        if not -bound < threshold < bound:
            raise InputError(f"threshold must lie in (-{bound:g}, {bound:g}), the observable's range, got {threshold}")
        labels = list(classes) if classes is not None else ([-1, 1] if outputs == 1 else list(range(outputs)))
        spec = {"kind": "expectation", "qubits": ro.support(obs), "observables": obs}
        if threshold:
            spec["threshold"] = float(threshold)
        if head is not None:
            spec["head"] = head
        return spec, labels
    if head is not None:
        raise InputError("a linear head reads expectation values: use readout 'expectation'")
    if observables:
        raise InputError("observables are read only by --readout expectation")
    m = len(measured)
    if kind == "map" or interpret is not None:
        if interpret is not None:
            try:
                mapping = [interpret(s) for s in range(2**m)]
            except Exception as exc:
                raise InputError(f"the interpret function failed: {type(exc).__name__}: {exc}") from None
            if any(not isinstance(c, (int, np.integer)) for c in mapping):
                raise InputError("the interpret function must return one integer class index per bitstring")
        elif readout_map is None:
            raise InputError("readout 'map' needs the table (--map c0,c1,...: one class index per basis state)")
        else:
            mapping = list(readout_map)
        mapping = [int(c) for c in mapping]
        if len(mapping) != 2**m:
            raise InputError(f"the readout map has {len(mapping)} entries but {m} measured qubits have {2**m} states")
        count = len(classes) if classes is not None else max(mapping) + 1
        kind = "map"
    else:
        if classes is None:
            raise InputError(f"readout '{kind}' needs the class labels (--classes)")
        count = len(classes)
        mapping = ro.table(kind, m, count)
    labels = list(classes) if classes is not None else list(range(count))
    if len(set(map(repr, labels))) != len(labels):
        raise InputError(f"class labels must be distinct, got {labels}")
    if len(labels) < 2:
        raise InputError("a classifier needs at least two classes")
    bad = [c for c in mapping if not -1 <= c < count]
    if bad:
        raise InputError(f"readout map entry {bad[0]} is not a class index of {count} classes")
    never = [labels[c] for c in range(count) if c not in mapping]
    if never:
        msg = f"readout '{kind}' over {m} measured qubit(s) never predicts class(es) {never}"
        if warnings is None:
            raise InputError(f"{msg}: measure more qubits (--measure) or change the readout")
        warnings.append(msg)
        return {"kind": kind, "qubits": list(measured), "map": mapping, "allow_unreachable": True}, labels
    return {"kind": kind, "qubits": list(measured), "map": mapping}, labels


def _json_label(c: object) -> object:
    if isinstance(c, (np.integer,)):
        return int(c)
    if isinstance(c, (np.floating,)):
        return float(c)
    if isinstance(c, np.str_):
        return str(c)
    if isinstance(c, (int, float, str)) and not isinstance(c, bool):
        return c
    raise InputError(f"class label {c!r} must be an integer, number or string")


def from_circuit(
    circuit: QuantumCircuit,
    weights: object = None,
    input_params: Sequence[Parameter | str] | None = None,
    *,
    readout: str = "modulo",
    classes: Sequence | None = None,
    measure: Sequence[int] | None = None,
    readout_map: Sequence[int] | None = None,
    interpret: Callable[[int], int] | None = None,
    observables: Sequence[str] | None = None,
    threshold: float = 0.0,
    preprocessing: object = None,
    head: object = None,
    layers: str = "auto",
    encoding: str = "angle",
    name: str = "imported",
    provenance: dict | None = None,
    lenient: bool = False,
) -> artifact.Model:
    """Build a qmltest Model from a Qiskit circuit and its trained weights (module docstring).

    readout: basis | parity | modulo (Qiskit ML VQC's ``x % C``) | map (readout_map or interpret)
    | expectation (observables: Pauli strings, Qiskit order). layers: auto | barriers | a spec
    ``0-24:feature_map,24-44:ansatz``. preprocessing: manifest steps or fitted scikit-learn
    scalers / PCA / a Pipeline of them / torch layers. head: a linear layer over the expectation
    values (torch ``nn.Linear`` or {'weight', 'bias'}; `to_head`). lenient: a class the readout
    never predicts is recorded in the manifest's ``import.warnings`` instead of refused (to mirror
    a library model as it is).
    """
    if readout not in ro.KINDS:
        raise InputError(f"unknown readout '{readout}' (choose from {', '.join(ro.KINDS)})")
    if encoding not in ("angle", "amplitude"):
        raise InputError(f"encoding must be 'angle' or 'amplitude', got '{encoding}'")
    flat = flatten(circuit)
    inputs, weight_params = split_parameters(circuit, input_params, weights)
    if encoding == "amplitude" and inputs:
        raise InputError("amplitude encoding prepares the state outside the circuit: it must have no data parameters")
    if encoding == "angle" and not inputs:
        raise InputError("the circuit has no data parameters: nothing to feed the inputs into (angle encoding)")
    binding: dict[Parameter, object] = dict(bind_weights(weight_params, weights))
    features = [Parameter(f"x_{i:03d}") for i in range(len(inputs))]
    binding.update(zip(inputs, features))
    roles = [_role(op, set(inputs), set(weight_params)) for op, _ in flat.gates]
    n = circuit.num_qubits
    warnings: list[str] | None = [] if lenient else None

    if readout == "expectation":
        measured = ro.support(list(observables or [])) if observables else []
        if measure is not None and sorted(measure) != measured:
            raise InputError(f"--measure {list(measure)} does not fit the observables' support {measured}")
    elif measure is not None:
        measured = [int(q) for q in measure]
    elif flat.measures:
        measured = [q for _, q in flat.measures]
    else:
        measured = list(range(n))
    if any(not 0 <= q < n for q in measured) or len(set(measured)) != len(measured):
        raise InputError(f"measured qubits {measured} must be distinct qubits of the {n}-qubit circuit")
    spec, labels = readout_spec(
        readout,
        measured,
        None if classes is None else list(classes),
        readout_map,
        interpret,
        observables,
        threshold,
        n,
        warnings,
        to_head(head),
    )
    labels = [_json_label(c) for c in labels]

    if layers == "auto":
        table = lay.from_groups(flat.groups, flat.labels, roles)
        if table is None:  # no library blocks: infer, on an order with the feature maps first
            order = lay.feature_first(roles, [q for _, q in flat.gates])
            flat.gates, roles = [flat.gates[i] for i in order], [roles[i] for i in order]
            table = lay.infer(roles, [q for _, q in flat.gates], [op.name for op, _ in flat.gates])
    elif layers == "barriers":
        table = lay.from_barriers(flat.barriers, roles)
    else:
        table = lay.parse_spec(layers, len(flat.gates))

    qc = QuantumCircuit(n)
    cuts = {row["start"] for row in table[1:]}
    for pos, (op, qubits) in enumerate(flat.gates):
        if pos in cuts:
            qc.barrier()
        qc.append(op, list(qubits))
    qc.assign_parameters({p: v for p, v in binding.items() if p in qc.parameters}, inplace=True)
    qc.barrier()
    creg = ClassicalRegister(len(spec["qubits"]), "meas")
    qc.add_register(creg)
    for c, q in enumerate(spec["qubits"]):
        qc.measure(q, creg[c])
    text = qasm.dumps(qc)
    loaded, spans = qasm.loads(text, "exported model")
    feature_names = [p.name for p in features]
    model_inputs = qasm.inputs_by_name(loaded, feature_names, "exported model")
    model_ir, table = irmod.build(
        loaded, model_inputs, [{k: r[k] for k in ("name", "kind", "start", "stop")} for r in table], spans
    )
    statevector.compile_circuit(irmod.unitary_part(model_ir))  # unsupported symbolic gates fail here, not later

    steps = to_steps(preprocessing)
    manifest = {
        "format_version": artifact.FORMAT_VERSION,
        "name": name,
        "arch": "imported",
        "num_qubits": n,
        "feature_names": feature_names,
        "encoding": {"kind": "amplitude", "dim": 2**n, "padding": 0.0}
        if encoding == "amplitude"
        else {"kind": "angle"},
        "preprocessing": steps,
        "readout": spec,
        "classes": labels,
        "layers": table,
        "training": {},
        "import": dict(
            provenance or {},
            source_features=[p.name for p in inputs],
            weights=len(weight_params),
            warnings=warnings or [],
        ),
        "qasm_sha256": qasm.sha256(text),
    }
    artifact.validate_manifest(manifest, name)
    model = artifact.Model(text, model_ir, manifest, name)
    _check_preprocessing(model, steps)
    weight_set = set(weight_params)
    bound = {p: v for p, v in binding.items() if p in weight_set}

    def source(x: np.ndarray) -> np.ndarray | None:
        return roundtrip.circuit_outputs(circuit, bound, inputs, spec, x, encoding == "amplitude")

    diff = roundtrip.check(model, source, "its source circuit (Qiskit Statevector)")
    manifest["import"]["roundtrip"] = (
        {"against": "qiskit.quantum_info.Statevector", "inputs": roundtrip.INPUTS, "max_abs_diff": diff}
        if diff is not None
        else {"against": None, "reason": "mid-circuit measurement or reset: no statevector reference"}
    )
    return model


def _check_preprocessing(model: artifact.Model, steps: list[dict]) -> None:
    """The preprocessing must end in as many values as the circuit has features."""
    from qmltest.data.preprocess import input_width, preprocess

    if not steps:
        return
    width = input_width(steps[0])
    if width is None:
        return
    out = preprocess(steps, np.zeros((1, width)))
    need = 2**model.ir.num_qubits if model.amplitude else len(model.ir.inputs)
    if (model.amplitude and out.shape[1] > need) or (not model.amplitude and out.shape[1] != need):
        raise InputError(f"the preprocessing yields {out.shape[1]} features but the circuit takes {need}")
