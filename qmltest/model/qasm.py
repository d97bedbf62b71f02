"""OpenQASM 3 text <-> QuantumCircuit, with the source span of every quantum statement.

`qiskit.qasm3.loads` keeps no line numbers, while `openqasm3.parse` gives each statement a span;
for Qiskit-exported files quantum statements map one-to-one, in order, onto `circuit.data`
(DESIGN.md). Gates that Qiskit exports as `gate` definitions (rzz, rxx, ...) load back as opaque
gates; we map known names back to the standard classes.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import math
import re

import openqasm3
import qiskit_qasm3_import
from openqasm3 import ast
from qiskit import qasm3
from qiskit.circuit import Parameter, ParameterExpression, QuantumCircuit
from qiskit.circuit.library import get_standard_gate_name_mapping

from qmltest.errors import InputError
from qmltest.model.ir import Span

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


def _spans(program: ast.Program, count: int) -> list[Span | None]:
    """Spans of the quantum statements, one per instruction, or Nones when they cannot be aligned."""
    spans = [
        Span(s.span.start_line, s.span.start_column, s.span.end_line, s.span.end_column)
        for s in program.statements
        if isinstance(s, _QUANTUM) and s.span is not None
    ]
    return spans if len(spans) == count else [None] * count


CONTROL_FLOW = ("if_else", "while_loop", "for_loop", "switch_case", "box")
_CONTROL_AST = ("BranchingStatement", "WhileLoop", "ForInLoop", "SwitchStatement", "Box")


def _syntax_error(text: str) -> str | None:
    """'line:column: message' of the first syntax error, from ANTLR's own report (captured, so it
    never reaches the user's terminal as extra lines)."""
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        try:
            openqasm3.parse(text, permissive=True)
        except Exception as exc:  # the permissive parse may still fail: its message is the fallback
            located = re.search(r"L(\d+):C(\d+): (.*)", str(exc))
            if located and not buf.getvalue():
                return f"{located[1]}:{int(located[2]) + 1}: {located[3]}"
    m = re.search(r"line (\d+):(\d+) ([^\n]*)", buf.getvalue())
    return f"{m[1]}:{int(m[2]) + 1}: {m[3]}" if m else None


def _statement_line(program: ast.Program, kinds: tuple[str, ...]) -> int | None:
    """Line of the first top-level statement of one of the AST kinds (for control flow)."""
    for st in program.statements:
        if type(st).__name__ in kinds and st.span is not None:
            return st.span.start_line
    return None


UNSUPPORTED_NODES = {
    "ConstantDeclaration": "const declarations (bind the value into the gates, or declare an input)",
    "ClassicalDeclaration": "classical variables",
    "AliasStatement": "let aliases",
    "SubroutineDefinition": "def subroutines",
    "ExternDeclaration": "extern declarations",
    "DelayInstruction": "delay",
}
"""Words for the OpenQASM 3 statements the importer does not convert (its node type names)."""


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _unsupported(source: str, message: str) -> str:
    """One line for what the importer refuses: 'SOURCE:LINE: not supported: WHAT' for valid OpenQASM 3
    that qmltest does not take, 'malformed' for a program that is not valid (an undefined gate)."""
    located = re.match(r"(\d+),(\d+): (.*)", message)
    at, what = (f":{located[1]}", located[3]) if located else ("", message)
    if "supported" not in what:  # an undefined gate, a wrong arity: not a valid program
        return f"{source}{at}: malformed OpenQASM 3: {what}"
    what = re.sub(r"node of type (\w+) is not supported", lambda m: UNSUPPORTED_NODES.get(m[1], m[1]), what)
    if "inputs are supported" in what:
        what += " (an input array: declare one `input float[64]` per feature)"
    return f"{source}{at}: not supported: {what}"


LARGE = 20_000
"""Lines beyond which parsing announces itself: the ANTLR parser takes ~0.4 ms a line (linear)."""
PARSE_SECONDS_PER_LINE = 4e-4

MAX_ANGLE = 1e6
"""Largest |angle| accepted: beyond it cos/sin of float angles lose every significant digit (1e308
gave NaN probabilities); no trained weight is near it."""


def loads(text: str, source: str = "<string>") -> tuple[QuantumCircuit, list[Span | None]]:
    """Parse QASM3 text; malformed text raises one InputError naming the source, line and column."""
    if re.match(r"\s*(//[^\n]*\n\s*)*OPENQASM\s+2", text):
        raise InputError(f"{source}: is OpenQASM 2, not 3: bring it in with `qmltest import` (it reads both)")
    header = re.match(r"\s*(?://[^\n]*\n\s*)*OPENQASM\s+([^;\s]+)\s*;", text)
    if header and not re.fullmatch(r"3(\.\d+)?", header.group(1)):
        raise InputError(f"{source}: OpenQASM version {header.group(1)} is not supported (3)")
    lines = text.count("\n")
    if lines > LARGE:
        import warnings

        from qmltest.errors import Notice

        seconds = lines * PARSE_SECONDS_PER_LINE
        warnings.warn(f"parsing {source}: {lines:,} lines (about {seconds:.0f} s)", Notice, stacklevel=2)
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):  # the ANTLR runtime prints its own lines otherwise
            program = openqasm3.parse(text)  # once: the circuit and every statement's span come from it
    except Exception as exc:  # the parser raises several unrelated types
        where = _syntax_error(text)
        if where:
            raise InputError(f"{source}:{where}") from None
        raise InputError(f"{source}: malformed OpenQASM 3: {_first_line(exc)}") from None
    try:
        with contextlib.redirect_stderr(buf):
            circuit = qiskit_qasm3_import.convert(program)
    except Exception as exc:  # valid OpenQASM 3 that a QNN circuit here cannot hold
        raise InputError(_unsupported(source, _first_line(exc))) from None
    for inst in circuit.data:
        op = inst.operation
        if op.name in CONTROL_FLOW or getattr(op, "condition", None) is not None:
            line = _statement_line(program, _CONTROL_AST)
            at = f":{line}" if line else ""
            raise InputError(f"{source}{at}: control flow ('{op.name}') is not supported in a QNN circuit")
    circuit = _standardize(circuit)
    spans = _spans(program, len(circuit.data))
    for pos, inst in enumerate(circuit.data):
        if inst.operation.name == "unitary":  # what the importer makes of pow(k) @ / inv @ modifiers
            span = spans[pos]
            at = f":{span.start_line}" if span else ""
            raise InputError(
                f"{source}{at}: a gate modifier (pow, inv) is not supported in a QNN circuit: write its gates"
            )
    for pos, inst in enumerate(circuit.data):
        for p in inst.operation.params:
            bad = _bad_number(p)
            if bad is not None:
                span = spans[pos]
                at = f":{span.start_line}" if span else ""
                what = "a non-finite" if not math.isfinite(bad) else "an out-of-range (beyond 1e6)"
                where = "angle" if isinstance(p, (int, float)) else "number in its feature expression"
                raise InputError(f"{source}{at}: gate '{inst.operation.name}' has {what} {where} ({bad:g})")
    return circuit, spans


def _bad_number(param: object) -> float | None:
    """The first number of a gate parameter beyond MAX_ANGLE or not finite: the angle itself, or a
    constant of a feature expression (1e308*x_003 overflows on every input but zero)."""
    if isinstance(param, (int, float)):
        values = [float(param)]
    elif isinstance(param, ParameterExpression):
        try:  # the constant term (all features 0), the value at 1 and each feature's coefficient there
            ones = {x: 1.0 for x in param.parameters}
            values = [
                float(param.bind({x: 0.0 for x in param.parameters}).numeric()),
                float(param.bind(ones).numeric()),
            ]
            for x in param.parameters:
                grad = param.gradient(x)
                values.append(float(grad.bind(ones).numeric() if isinstance(grad, ParameterExpression) else grad))
        except (TypeError, ValueError, ZeroDivisionError, OverflowError, RuntimeError):  # complex, 1/x at 0
            return None
    else:
        return None
    return next((v for v in values if not (math.isfinite(v) and abs(v) <= MAX_ANGLE)), None)


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
