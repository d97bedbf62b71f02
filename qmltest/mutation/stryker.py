"""The open Stryker mutation-testing-report schema (schemaVersion 2) for site-based runs, so the
mutation-testing-elements HTML viewer shows every mutant inline in the QASM3 source.

Status map: killed -> Killed, survived -> Survived, equivalent -> Ignored, incompetent -> CompileError.
Locations are 1-based lines and columns, end exclusive; openqasm3 spans have 0-based columns and an
inclusive end, hence the shifts.
"""

from __future__ import annotations

from qmltest.artifact import Model
from qmltest.ir import Span
from qmltest.mutation.qml import units

STATUS = {"killed": "Killed", "survived": "Survived", "equivalent": "Ignored"}


def _location(span: Span | None, last_line: int) -> dict:
    if span is None:
        return {"start": {"line": last_line, "column": 1}, "end": {"line": last_line, "column": 2}}
    return {
        "start": {"line": span.start_line, "column": span.start_column + 1},
        "end": {"line": span.end_line, "column": span.end_column + 2},
    }


def _merge(a: Span | None, b: Span | None) -> Span | None:
    if a is None or b is None:
        return a or b
    return Span(a.start_line, a.start_column, b.end_line, b.end_column)


def site_span(model: Model, operator: str, args: tuple) -> Span | None:
    """The statement(s) of the original QASM3 text a site mutates."""
    gates = model.ir.gates
    if operator in ("APGC", "remove-gate", "replace-gate"):
        return gates[args[0]].span
    if operator in ("add-gate", "add-measure"):
        pos = args[-1]
        return gates[min(pos, len(gates) - 1)].span if gates else None
    if operator in ("APC", "ILS", "ALD", "LS", "ALA"):
        us = units(model.ir)
        index = args[1] if operator == "LS" else args[0]
        u = us[index] if isinstance(index, int) and index < len(us) else None
        return None if u is None else _merge(gates[u.start].span, gates[u.stop - 1].span)
    if operator == "DFC" and gates:
        return gates[0].span
    return None


def report(model: Model, qasm_path: str, mutants: list[dict], sites: dict[str, tuple]) -> dict:
    """`mutants`: rows of a site-based run (id, operator, status, site); `sites`: id -> site args."""
    last_line = max(1, model.qasm_text.count("\n"))
    rows = []
    for m in mutants:
        status = m["status"]
        entry = {
            "id": m["id"],
            "mutatorName": m["operator"],
            "location": _location(site_span(model, m["operator"], sites.get(m["id"], ())), last_line),
            "status": "CompileError" if status.startswith("incompetent") else STATUS.get(status, "Pending"),
            "description": m["site"],
        }
        if status == "equivalent":
            entry["statusReason"] = "equivalent: identical outputs on every test input"
        elif status.startswith("incompetent"):
            entry["statusReason"] = status
        rows.append(entry)
    return {
        "schemaVersion": "2",
        "thresholds": {"high": 80, "low": 60},
        "files": {qasm_path: {"language": "qasm", "source": model.qasm_text, "mutants": rows}},
    }
