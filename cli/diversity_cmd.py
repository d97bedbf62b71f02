"""`qmltest diversity`: JS divergence of input-state fidelities against Haar-random states (QCov Sec. 4.2)."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import handle_errors, model_data, out, write_output

from qmltest import api
from qmltest.coverage.diversity import diversity as measure_diversity
from qmltest.coverage.diversity import input_states
from qmltest.data import datasets
from qmltest.util import writers as report


@handle_errors
def diversity(
    model_path: Path = typer.Argument(..., help="Model folder whose encoding defines the input states."),
    data: str = typer.Option(None, help="Dataset name or suite file (default: the model's own data)."),
    split: str = typer.Option("test", help="Split of --data."),
    per_class: int = typer.Option(None, help="Inputs per class (default: all)."),
    bins: int = typer.Option(100, help="Histogram bins over fidelity [0, 1]."),
    seed: int = typer.Option(0, min=0, help="Seed of every random choice (same seed, same files)."),
    manifest: Path = typer.Option(None, help="Manifest for a bare .qasm file."),
    json_out: Path = typer.Option(None, "--json", help="Write JSON ('-' for stdout)."),
) -> None:
    """Lower JS divergence = input states spread more like Haar-random states = a more diverse suite."""
    model = api.load(model_path, manifest)
    data = model_data(model, data, split, "--data")
    x, _ = datasets.for_model(data, split, model, per_class, seed)
    result = measure_diversity(input_states(model, x), bins)
    result.update(data=data, split=split, per_class=per_class, model_sha256=model.sha256, versions=report.versions())
    write_output(json_out, report.to_json(result))
    if str(json_out) != "-":
        out.print(
            f"JS divergence vs Haar-random states: {result['js_divergence']:.4f} "
            f"({result['inputs']} inputs, mean fidelity {result['mean_fidelity']:.4f})"
        )
