"""`qmltest evaluate`: accuracy and per-class accuracy on a dataset split."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import (
    backend_option,
    cluster_option,
    data_option,
    drop_option,
    handle_errors,
    manifest_option,
    noise_option,
    out,
    split_option,
    target_option,
    with_backend,
    workers_option,
    write_output,
)
from qmltest_cli.config import config_option, with_config
from rich.table import Table

from qmltest import api
from qmltest.util import intervals
from qmltest.util import writers as report


@handle_errors
@with_config("evaluate")
@with_backend
def evaluate(
    ctx: typer.Context,
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    data: str = data_option(),
    split: str = split_option(),
    manifest: Path = manifest_option(),
    shots: int = typer.Option(api.SHOTS, help="Shots per input (majority prediction)."),
    exact: bool = typer.Option(False, "--exact", help="Exact probabilities instead of shots."),
    shots_budget: int = typer.Option(
        None,
        "--shots-budget",
        help="Total shots for all inputs, spent in rounds on the inputs not yet decided (Hoeffding, alpha 0.05).",
    ),
    backend: str = backend_option(),
    limit: int = typer.Option(None, "--per-class", "--limit", help="Evaluate only this many inputs per class."),
    seed: int = typer.Option(0, min=0, help="Seed for shot sampling."),
    noise: Path = noise_option(),
    target: str = target_option(),
    json_out: Path = typer.Option(None, "--json", help="Write the report as JSON ('-' for stdout)."),
    workers: int = workers_option(),
    cluster: str = cluster_option(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No table."),
    drop_unknown_labels: bool = drop_option(),
    config: Path = config_option("evaluate"),
) -> None:
    """Classify a dataset split with the model; print accuracy and per-class accuracy."""
    res = api.evaluate(
        model_path,
        data,
        split=split,
        shots=None if exact else shots,
        shots_budget=shots_budget,
        per_class=limit,
        seed=seed,
        noise=noise,
        target=target,
        backend=backend,
        workers=workers,
        cluster=cluster,
        manifest=manifest,
        drop_unknown_labels=drop_unknown_labels,
    )
    result, noise_name = res.data, res.timing["noise_name"]
    name, part = result["data"], result["split"]
    write_output(json_out, report.to_json(result))
    if quiet or str(json_out) == "-":
        return
    seq = result.get("sequential")
    mode = "exact" if exact else f"{shots} shots" if seq is None else _spent(seq)
    mode += f", {'target' if target else 'noise'} {noise_name}" if noise_name else ""
    if result.get("measurement_bases"):
        mode += f", {result['measurement_bases']} measurement bases"
    t = Table(title=f"{res.timing['model_name']} on {name}:{part} ({mode}, {result['backend']})")
    if result.get("task") == "regression":
        t.add_column("error")
        t.add_column("value [95%]", justify="right")
        for row in res.rows():
            t.add_row(row["metric"].upper().replace("R2", "R^2"), intervals.fmt_g(row["value"], row["interval"]))
        t.caption = f"{result['samples']} inputs; bootstrap (BCa) intervals over the inputs"
        out.print(t)
        return
    t.add_column("class")
    t.add_column("samples", justify="right")
    t.add_column("accuracy [95%]", justify="right")
    for c, row in result["per_class"].items():
        t.add_row(c, str(row["samples"]), intervals.fmt(row["accuracy"], row["accuracy_interval"], percent=True))
    t.add_row(
        "all", str(result["samples"]), intervals.fmt(result["accuracy"], result["accuracy_interval"], percent=True)
    )
    out.print(t)


def _spent(seq: dict) -> str:
    """What a shot budget bought: shots spent of the budget, inputs left undecided."""
    return (
        f"{seq['shots_spent']:,} of {seq['shots_budget']:,} shots in {seq['rounds']} rounds, "
        f"{seq['undecided']} undecided"
    )
