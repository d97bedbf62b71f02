"""The open Stryker mutation-testing-report schema (schemaVersion 2) for every mutation run, so the
mutation-testing-elements HTML viewer shows every mutant inline in the QASM3 source.

Built from a `qmltest.mutation/3` report and the original model: the file key is the model's QASM3
path (relative), its source the QASM3 text; a mutant's location spans the original statements it
changes (1-based lines and columns, end exclusive; openqasm3 spans have 0-based columns and an
inclusive end, hence the shifts). Status map: killed -> Killed, survived -> Survived, equivalent and
not-effective (dropped by QuanForge's Algorithm 1) and undecided (the sequential design's shot budget
ran out before a verdict: counted apart from the score) -> Ignored, incompetent -> CompileError.
`killedBy` names the test suites that killed the mutant; `testFiles` describes them.

With the run folder at hand (its `mutants/<id>/` artifacts), every mutant carries its
`replacement`: the mutant's own lines for the first block where its QASM3 differs from the
original's (difflib), located on the original lines it replaces, so the viewer's diff shows the
mutated statement; a mutant whose circuit is unchanged (DFC's preprocessing step, a readout change)
is anchored in `model.json`, the second file, on the manifest lines it changes.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from qmltest.model.artifact import Model
from qmltest.model.ir import Span

STATUS = {
    "killed": "Killed",
    "survived": "Survived",
    "undecided": "Ignored",
    "equivalent": "Ignored",
    "not-effective": "Ignored",
}
REASONS = {
    "undecided": "undecided: the shot budget ran out before the sequential test decided killed or survived",
    "equivalent": "equivalent: identical outputs on every test input",
    "not-effective": "not effective: QuanForge's Algorithm 1 kept only killable, non-trivial mutants",
}


def _location(span: Span | None, last_line: int) -> dict:
    if span is None:
        return {"start": {"line": last_line, "column": 1}, "end": {"line": last_line, "column": 2}}
    return {
        "start": {"line": span.start_line, "column": span.start_column + 1},
        "end": {"line": span.end_line, "column": span.end_column + 2},
    }


def span_of(model: Model, touched: list[int]) -> Span | None:
    """From the first to the last changed statement of the original (first gate when none changed)."""
    gates = model.ir.gates
    spans = [gates[i].span for i in touched if i < len(gates) and gates[i].span is not None]
    if not spans:
        return gates[0].span if gates else None
    first, last = (
        min(spans, key=lambda s: (s.start_line, s.start_column)),
        max(spans, key=lambda s: (s.end_line, s.end_column)),
    )
    return Span(first.start_line, first.start_column, last.end_line, last.end_column)


def _overall(regression: bool) -> str:
    return "squared errors (Wilcoxon signed-rank)" if regression else "overall accuracy"


def _suite_note(s: dict) -> str:
    """What a suite's inputs say of the original: how many it classifies, or a regressor's error."""
    if "original_mse" in s:
        return f"original MSE {s['original_mse']:.4g}"
    return f"{s['correctly_classified']} correctly classified"


def _reason(row: dict, regression: bool = False) -> str | None:
    status = row["status"]
    if status.startswith("incompetent"):
        return status
    if status == "killed":
        parts = []
        for suite, v in sorted(row["verdicts"].items()):
            if v["killed"]:
                what = f"classes {v['killed_classes']}" if v["killed_classes"] else _overall(regression)
                if v["killed_by"]:
                    what = f"inputs {v['killed_by'][:10]}" + (" ..." if len(v["killed_by"]) > 10 else "")
                parts.append(f"{suite}: {what}")
        return "; ".join(parts)
    return REASONS.get(status)


def manifest_text(manifest: dict) -> str:
    """The manifest as the viewer's second file shows it (sorted keys, one value per line)."""
    return json.dumps(manifest, indent=1, sort_keys=True) + "\n"


def replaced(original: str, mutant: str) -> tuple[dict, str] | None:
    """(location on the original, replacement text) of the first block where `mutant` differs from
    `original`, line-wise; None when they are equal. An insertion is shown as a replacement of the
    original line it precedes (the new lines, then that line)."""
    a, b = original.splitlines(keepends=True), mutant.splitlines(keepends=True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        new = "".join(b[j1:j2])
        if i1 == i2 and i1 < len(a):  # pure insertion: anchored on the original line it precedes
            new, i2 = new + a[i1], i1 + 1
        elif i1 == i2:  # appended at the end: anchored on the last line
            new, i1, i2 = a[-1] + new, len(a) - 1, len(a)
        end_line = a[i2 - 1]
        end = {"line": i2, "column": len(end_line.rstrip("\n")) + 1}
        return {"start": {"line": i1 + 1, "column": 1}, "end": end}, new.rstrip("\n")
    return None


def report(model: Model, qasm_key: str, result: dict, run_dir: Path | None = None) -> dict:
    """The Stryker report of a `qmltest.mutation/3` result (`model`: the original); with the run
    folder, each mutant's `replacement` (module docstring)."""
    last_line = max(1, model.qasm_text.count("\n"))
    manifest_key = str(Path(qasm_key).with_name("model.json"))
    original_manifest = manifest_text(model.manifest)
    rows, manifest_rows = [], []
    for m in result["mutants"]:
        status = m["status"]
        entry = {
            "id": m["id"],
            "mutatorName": m["operator"],
            "location": _location(span_of(model, m["touched"]), last_line),
            "status": "CompileError" if status.startswith("incompetent") else STATUS.get(status, "Pending"),
            "description": m["site"] or m["operator"],
            "coveredBy": sorted(m["verdicts"]),
            "killedBy": sorted(s for s, v in m["verdicts"].items() if v["killed"]),
        }
        reason = _reason(m, result["meta"].get("task") == "regression")
        if reason:
            entry["statusReason"] = reason
        folder = None if run_dir is None else Path(run_dir) / "mutants" / m["id"]
        if folder is not None and (folder / "model.qasm").exists():
            change = replaced(model.qasm_text, (folder / "model.qasm").read_text())
            if change is not None:
                entry["location"], entry["replacement"] = change
            elif (folder / "model.json").exists():
                mutant_manifest = json.loads((folder / "model.json").read_text())
                change = replaced(original_manifest, manifest_text(mutant_manifest))
                if change is not None:
                    entry["location"], entry["replacement"] = change
                    manifest_rows.append(entry)
                    continue
        rows.append(entry)
    test_files = {
        name: {"tests": [{"id": name, "name": f"{name}: {s['inputs']} inputs ({_suite_note(s)})"}]}
        for name, s in result["suites"].items()
    }
    files = {qasm_key: {"language": "qasm", "source": model.qasm_text, "mutants": rows}}
    if manifest_rows:
        files[manifest_key] = {"language": "json", "source": original_manifest, "mutants": manifest_rows}
    return {
        "schemaVersion": "2",
        "thresholds": {"high": 80, "low": 60},
        "files": files,
        "testFiles": test_files,
        "framework": {"name": "qmltest", "version": result["meta"]["versions"]["qmltest"]},
        "config": {k: result["meta"][k] for k in ("criterion", "correction", "scoring", "seed")},
    }
