"""`qmltest predict`: one row per input with its label, prediction and class scores."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import (
    backend_option,
    data_option,
    drop_option,
    handle_errors,
    manifest_option,
    noise_option,
    one_stdout,
    out,
    split_option,
    target_option,
    with_backend,
    write_output,
)
from qmltest_cli.config import config_option, with_config
from rich.table import Table

from qmltest import api

SHOWN = 20
"""Rows the terminal table shows (the files hold every row)."""


@handle_errors
@with_config("predict")
@with_backend
def predict(
    ctx: typer.Context,
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    data: str = data_option(),
    split: str = split_option(),
    manifest: Path = manifest_option(),
    shots: int = typer.Option(None, help="Scores as shot frequencies of this many shots (default: exact)."),
    limit: int = typer.Option(None, "--per-class", "--limit", help="Only this many inputs per class."),
    seed: int = typer.Option(0, min=0, help="Seed for shot sampling and --per-class."),
    backend: str = backend_option(),
    noise: Path = noise_option(),
    target: str = target_option(),
    json_out: Path = typer.Option(None, "--json", help="Write every row as JSON ('-' for stdout)."),
    csv_out: Path = typer.Option(None, "--csv", help="Write every row as CSV ('-' for stdout)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No table."),
    drop_unknown_labels: bool = drop_option(),
    config: Path = config_option("predict"),
) -> None:
    """Predict every input: its label, prediction and class probabilities (or scores)."""
    one_stdout({"json_out": json_out, "csv_out": csv_out})
    res = api.predict(
        model_path,
        data,
        split=split,
        shots=shots,
        per_class=limit,
        seed=seed,
        noise=noise,
        target=target,
        backend=backend,
        manifest=manifest,
        drop_unknown_labels=drop_unknown_labels,
    )
    write_output(json_out, res.to_json())
    write_output(csv_out, res.to_csv())
    if quiet or "-" in (str(json_out), str(csv_out)):
        return
    mode = "exact" if shots is None else f"{shots} shots"
    where = f"{res.data['data']}:{res.data['split']}" if res.data["split"] else res.data["data"]
    t = Table(title=f"{res.data['model']} on {where} ({mode}, {res.data['backend']}): {res.summary()}")
    if res.regression:
        for col in ("input", "target", "output", "error"):
            t.add_column(col, justify="right")
        for r in res.data["rows"][:SHOWN]:
            t.add_row(*(("-" if r[k] is None else f"{r[k]:.6g}") for k in ("index", "target", "output", "error")))
        out.print(t)
        if len(res.data["rows"]) > SHOWN:
            out.print(f"{len(res.data['rows']) - SHOWN} more rows in --json / --csv", markup=False)
        return
    for col in ("input", "label", "prediction", *(f"{c}" for c in res.data["classes"])):
        t.add_column(col, justify="right" if col not in ("label", "prediction") else "left")
    for r in res.data["rows"][:SHOWN]:
        t.add_row(str(r["index"]), str(r["label"] or "-"), r["prediction"], *(f"{s:.4f}" for s in r["scores"].values()))
    out.print(t)
    if len(res.data["rows"]) > SHOWN:
        out.print(f"{len(res.data['rows']) - SHOWN} more rows in --json / --csv", markup=False)
