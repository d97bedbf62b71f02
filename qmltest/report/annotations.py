"""Surviving mutants as CI annotations on the model's source: GitHub's workflow commands
(``::warning file=F,line=L,title=T::message``, one per survivor, as cargo-mutants writes), so a
pull request shows each one on the QASM line it changes."""

from __future__ import annotations

from pathlib import Path

from qmltest.model.artifact import Model
from qmltest.report.stryker import span_of

FORMATS = ("github",)


def _escaped(text: str, prop: bool = False) -> str:
    """GitHub's escaping of a workflow command's data (and, for a property, its , and :)."""
    out = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return out.replace(":", "%3A").replace(",", "%2C") if prop else out


def github(result: dict, model: Model, source: str | Path) -> list[str]:
    """One ``::warning`` per surviving mutant at the first QASM line it changes in `source`
    (the model's file as the repository holds it); a mutant of the preprocessing or readout on
    the manifest beside it."""
    lines = []
    for m in result["mutants"]:
        if m["status"] != "survived":
            continue
        touched = m.get("touched") or []
        span = span_of(model, touched) if touched else None  # none: a preprocessing or readout change
        line = span.start_line if span is not None else 1
        where = source if touched else Path(source).with_name("model.json")
        title = _escaped(f"surviving mutant {m['id']}", prop=True)
        what = _escaped(f"{m['operator']} at {m['site']} survived every test suite: no test tells it from the model")
        lines.append(f"::warning file={_escaped(str(where), prop=True)},line={line},title={title}::{what}")
    return lines


def source_of(model: Model) -> Path:
    """The QASM file a model was loaded from (its folder's model.qasm)."""
    where = Path(model.source)
    return where / "model.qasm" if where.is_dir() else where
