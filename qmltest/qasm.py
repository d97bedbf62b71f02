"""OpenQASM 3 text <-> QuantumCircuit, with the source span of every quantum statement.

`qiskit.qasm3.loads` keeps no line numbers, while `openqasm3.parse` gives each statement a span;
for Qiskit-exported files quantum statements map one-to-one, in order, onto `circuit.data`
(DESIGN.md). Gates that Qiskit exports as `gate` definitions (rzz, rxx, ...) load back as opaque
gates; we map known names back to the standard classes.
"""

from __future__ import annotations

import hashlib
import re

import openqasm3
from openqasm3 import ast
from qiskit import qasm3
from qiskit.circuit import Parameter, QuantumCircuit
from qiskit.circuit.library import get_standard_gate_name_mapping

from qmltest.errors import InputError
from qmltest.ir import Span

_STANDARD = get_standard_gate_name_mapping()
_QUANTUM = (ast.QuantumGate, ast.QuantumMeasurementStatement, ast.QuantumBarrier, ast.QuantumReset)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _standardize(circuit: QuantumCircuit) -> QuantumCircuit:
    """Replace opaque gates whose name is a standard gate by the standard class (same params)."""
    out = circuit.copy_empty_like()
    for inst in circuit.data:
        op = inst.operation
        std = _STANDARD.get(op.name)
        if std is not None and type(op) is not type(std) and std.num_qubits == op.num_qubits:
            try:
                op = type(std)(*op.params)
            except TypeError:
                pass
        out.append(op, inst.qubits, inst.clbits)
    return out


def _spans(text: str, count: int) -> list[Span | None]:
    """Spans of the quantum statements, one per instruction, or Nones when they cannot be aligned."""
    try:
        program = openqasm3.parse(text)
    except Exception:  # the Qiskit loader already accepted the text; spans are best effort
        return [None] * count
    spans = [
        Span(s.span.start_line, s.span.start_column, s.span.end_line, s.span.end_column)
        for s in program.statements
        if isinstance(s, _QUANTUM) and s.span is not None
    ]
    return spans if len(spans) == count else [None] * count


def loads(text: str, source: str = "<string>") -> tuple[QuantumCircuit, list[Span | None]]:
    """Parse QASM3 text; malformed text raises InputError naming the source."""
    if re.match(r"\s*(//[^\n]*\n\s*)*OPENQASM\s+2", text):
        raise InputError(f"{source}: is OpenQASM 2, not 3: bring it in with `qmltest import` (it reads both)")
    try:
        circuit = qasm3.loads(text)
    except Exception as exc:  # the importer raises several unrelated types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{source}: malformed OpenQASM 3: {first}") from None
    circuit = _standardize(circuit)
    return circuit, _spans(text, len(circuit.data))


def dumps(circuit: QuantumCircuit) -> str:
    return qasm3.dumps(circuit)


def inputs_by_name(circuit: QuantumCircuit, names: list[str], source: str) -> list[Parameter]:
    """Feature parameters in the manifest's order (never the loader's string-sorted order).

    A listed feature that no gate uses is not declared by Qiskit's exporter (a mutant that deleted
    every gate reading it): it gets a fresh parameter the circuit ignores.
    """
    by_name = {p.name: p for p in circuit.parameters}
    extra = sorted(set(by_name) - set(names))
    if extra:
        raise InputError(f"{source}: QASM3 inputs {extra[:3]} are not listed in the manifest's feature_names")
    return [by_name[n] if n in by_name else Parameter(n) for n in names]
