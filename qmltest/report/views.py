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

from qmltest.util import plugins, writers


@dataclass(frozen=True)
class View:
    """One report format: its name (the CLI option `--NAME`), what it is, and how it is made."""

    name: str
    help: str
    make: Callable[..., object]
    folder: bool = False


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


def stryker_doc(result: dict, run_dir: Path | None) -> dict | None:
    """The Stryker report (schemaVersion 2) of a run: the original model as the run folder saved
    it (or as the report names it, without a folder), the QASM file keyed by the path the user gave."""
    from qmltest.model import artifact
    from qmltest.report import stryker

    source = str(result["meta"]["model"])
    if run_dir is not None and (Path(run_dir) / "original" / "model.qasm").exists():
        original = artifact.load(Path(run_dir) / "original")
    elif Path(source).exists():
        original = artifact.load(source)
    else:
        return None
    key = os.path.relpath(source if Path(source).suffix == ".qasm" else str(Path(source) / "model.qasm"))
    return stryker.report(original, key, result, run_dir)


def _stryker(result: dict, run_dir: Path | None) -> str:
    doc = stryker_doc(result, run_dir)
    if doc is None:
        from qmltest.errors import InputError

        raise InputError("--stryker needs the run folder's original model (mutate --out) or the model file")
    return writers.to_json(doc)


def _html(result: dict, run_dir: Path | None, folder: Path) -> Path:
    from qmltest.report.html import mutation

    return mutation.write(result, run_dir, folder, stryker_doc(result, run_dir))


VIEWS: dict[str, View] = {
    v.name: v
    for v in (
        View("json", "The JSON report ('-' for stdout).", _json),
        View("csv", "One row per mutant: operator, site, status, kills per suite.", _csv),
        View("junit", "JUnit XML: a testcase per mutant, survived = failure.", _junit),
        View("stryker", "Stryker mutation-testing-report JSON (schema 2) for its HTML viewer.", _stryker),
        View("html", "HTML report folder (plots, the Stryker viewer embedded).", _html, folder=True),
    )
}


def write(result: dict, run_dir: Path | None, where: dict[str, Path | None], text: str | None = None) -> list[Path]:
    """Write each view named in `where` (name -> path; None skips it); `text`: the JSON already
    encoded (a replayed run). Returns the paths written (an HTML view: its index.html)."""
    from qmltest.errors import InputError

    unknown = sorted(set(where) - set(VIEWS))
    if unknown:
        raise InputError(f"unknown report format(s) {', '.join(unknown)} (known: {', '.join(VIEWS)})")
    written = []
    for name, path in where.items():
        if path is None:
            continue
        view = VIEWS[name]
        if view.folder:
            written.append(Path(str(view.make(result, run_dir, Path(path)))))
            continue
        body = text if (name == "json" and text is not None) else str(view.make(result, run_dir))
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
