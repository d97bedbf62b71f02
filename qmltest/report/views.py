"""Every view of a mutation report, in one table: JSON, CSV, JUnit, Stryker and HTML, each a
function of the report and its run folder, so `mutate` and `qmltest report RUN` write the same files.

A view is `make(report, run_dir) -> text` (a file) or `make(report, run_dir, folder) -> path` (a
folder, HTML). A new format is one entry in `VIEWS` (and, from another package, the
`qmltest.formats` entry point); the CLI offers each as `--NAME PATH`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qmltest.util import plugins, writers

if TYPE_CHECKING:
    from qmltest.model.artifact import Model


@dataclass(frozen=True)
class View:
    """One report format: its name (the CLI option `--NAME`), what it is, and how it is made."""

    name: str
    help: str
    make: Callable[..., object]
    folder: bool = False
    stryker: bool = False  # make also takes the run's Stryker document (built once per write)


def _json(result: dict, run_dir: Path | None) -> str:
    return writers.to_json(result)


def csv_row(m: dict) -> dict:
    """One flat CSV row per mutant: identity, status, and per suite killed (1/0) and killed classes."""
    row = {k: m[k] for k in ("id", "operator", "cell", "status", "percentage")}
    row["site"] = m["site"]
    row["mean_accuracy"] = m["search"].get("mean_accuracy") if m["search"] else None
    row["kills"] = ";".join(
        f"{s}={'|'.join(map(str, v['killed_classes'])) if v['killed'] or v['killed_classes'] else ''}"
        for s, v in sorted(m["verdicts"].items())
    )
    return row


def _csv(result: dict, run_dir: Path | None) -> str:
    return writers.to_csv([csv_row(m) for m in result["mutants"]])


def _junit(result: dict, run_dir: Path | None) -> str:
    from qmltest.report import junit

    return junit.mutation(result)


def stryker_doc(result: dict, run_dir: Path | None, original: Model | None = None) -> dict | None:
    """The Stryker report (schemaVersion 2) of a run: the original model (`original`, or as the
    run folder saved it, or as the report names it), the QASM file keyed by the path the user gave."""
    from qmltest.model import artifact
    from qmltest.report import stryker

    source = str(result["meta"]["model"])
    saved = None if run_dir is None else Path(run_dir) / "original"
    if original is None and saved is not None and (saved / "model.qasm").exists():
        original = artifact.load(saved)
    elif original is None and Path(source).exists():
        original = artifact.load(source)
    if original is None:
        return None
    key = os.path.relpath(source if Path(source).suffix == ".qasm" else str(Path(source) / "model.qasm"))
    return stryker.report(original, key, result, run_dir)


def _stryker(result: dict, run_dir: Path | None, doc: dict | None) -> str:
    if doc is None:
        from qmltest.errors import InputError

        raise InputError("--stryker needs the run folder's original model (mutate --out) or the model file")
    return writers.to_json(doc)


def _html(result: dict, run_dir: Path | None, folder: Path, doc: dict | None) -> Path:
    from qmltest.report.html import mutation

    return mutation.write(result, run_dir, folder, doc)


VIEWS: dict[str, View] = {
    v.name: v
    for v in (
        View("json", "The JSON report ('-' for stdout).", _json),
        View("csv", "One row per mutant: operator, site, status, kills per suite.", _csv),
        View("junit", "JUnit XML: a testcase per mutant, survived = failure.", _junit),
        View("stryker", "Stryker mutation-testing-report JSON (schema 2) for its HTML viewer.", _stryker, stryker=True),
        View("html", "HTML report folder (plots, the Stryker viewer embedded).", _html, folder=True, stryker=True),
    )
}


def write(
    result: dict,
    run_dir: Path | None,
    where: dict[str, Path | None],
    text: str | None = None,
    original: Model | None = None,
) -> list[Path]:
    """Write each view named in `where` (name -> path; None skips it); `text`: the JSON already
    encoded (a replayed run); `original`: the model in memory (mutate has it: not parsed again).
    The Stryker document is built once for every view that needs it. Returns the paths written
    (an HTML view: its index.html)."""
    from qmltest.errors import InputError

    unknown = sorted(set(where) - set(VIEWS))
    if unknown:
        raise InputError(f"unknown report format(s) {', '.join(unknown)} (known: {', '.join(VIEWS)})")
    chosen = [(VIEWS[name], path) for name, path in where.items() if path is not None]
    doc = stryker_doc(result, run_dir, original) if any(v.stryker for v, _ in chosen) else None
    written = []
    for view, path in chosen:
        extra = (doc,) if view.stryker else ()
        if view.folder:
            written.append(Path(str(view.make(result, run_dir, Path(path), *extra))))
            continue
        body = text if (view.name == "json" and text is not None) else str(view.make(result, run_dir, *extra))
        if str(path) == "-":
            import sys

            sys.stdout.write(body)
        else:
            writers.write_text_atomic(path, body)
            written.append(Path(path))
    return written


def register(view: View) -> View:
    """Add a report format (a new name); `qmltest report RUN --view NAME=PATH` writes it."""
    if view.name in VIEWS:
        raise ValueError(f"report format '{view.name}' is taken")
    VIEWS[view.name] = view
    return view


plugins.load("qmltest.formats")  # other packages' report formats (their import registers them)
