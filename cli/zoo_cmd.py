"""`qmltest zoo list`: benchmark architectures and the shipped pretrained models."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import handle_errors, out, write_output
from rich.table import Table

from qmltest.util import writers as report
from qmltest.zoo import catalog as registry

app = typer.Typer(help="Benchmark architectures and shipped pretrained models.", no_args_is_help=True)


@app.command("list")
@handle_errors
def list_models(
    json_out: Path = typer.Option(None, "--json", help="Write the lists as JSON ('-' for stdout)."),
) -> None:
    """List architectures and the shipped models with their recorded accuracy."""
    archs = registry.architectures()
    models = registry.shipped_models()
    write_output(json_out, report.to_json({"architectures": archs, "models": models}))
    if str(json_out) == "-":
        return
    t = Table(title="architectures")
    t.add_column("arch")
    t.add_column("description")
    for row in archs:
        t.add_row(row["name"], row["description"])
    out.print(t)
    m = Table(title="shipped models (data/models/)")
    for col in ("model", "arch", "dataset", "classes", "qubits", "gates", "test acc"):
        m.add_column(col)
    for row in models:
        acc = row.get("test_accuracy")
        m.add_row(
            row["path"],
            row["arch"],
            str(row.get("dataset", "")),
            ",".join(map(str, row["classes"])),
            str(row["num_qubits"]),
            str(row["gates"]),
            "" if acc is None else f"{100 * acc:.1f}%",
        )
    out.print(m)
