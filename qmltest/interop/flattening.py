"""From a Qiskit circuit to the gates and parameters an import needs: the circuit flattened to
standard gates (library blocks expanded, their names kept for the layer table), its parameters
split into features and weights in natural order, and the weights bound from an array, a dict
or a Qiskit ParameterVector's values."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from qiskit.circuit import (
    Instruction,
    Parameter,
    ParameterVectorElement,
    QuantumCircuit,
)
from qiskit.circuit.library import get_standard_gate_name_mapping

from qmltest.errors import InputError

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

    def natural(name: str) -> tuple:
        return tuple((0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", name) if t)

    def key(p: Parameter) -> tuple:  # one shape for both kinds: a circuit may mix them (x with w[0..k])
        if isinstance(p, ParameterVectorElement):
            return (natural(p.vector.name), p.index)
        return (natural(p.name), -1)

    return sorted(params, key=key)


def _looks_like_feature(p: Parameter) -> bool:
    """Qiskit's feature maps name their inputs `x` (exported to QASM3 as `_x_0_`, or `x_000`)."""
    if isinstance(p, ParameterVectorElement):
        return p.vector.name == "x"
    return re.fullmatch(r"_?x(\[\d+\]|_\d+_?|\d+)?", p.name) is not None


_WEIGHT_NAME = re.compile(r"_?(w|wt|weights?|theta|θ|params?|phi|φ)(\[\d+\]|_?\d+_?)?", re.IGNORECASE)


def _looks_like_weight(p: Parameter) -> bool:
    """Names trained weights usually carry (w0, θ[3], weights_2, theta): with none given, a
    circuit holding them would silently take them as features."""
    name = p.vector.name if isinstance(p, ParameterVectorElement) else p.name
    return _WEIGHT_NAME.fullmatch(name) is not None


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
    else:  # no weights: every parameter is a feature, unless some are named as weights are
        weightish = [p.name for p in every if _looks_like_weight(p)]
        if weightish:
            rest = [p.name for p in every if p.name not in set(weightish)]
            raise InputError(
                f"parameters {weightish[:6]} look like weights but no weights were given: give them "
                f"(--weights FILE) or name the features (--features {','.join(rest[:6]) or 'NAMES'})"
            )
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
