"""`qmltest profile`: per basis state statistics of the model's outputs on training data (QCov Sec. 3.1)."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import (
    backend_option,
    cluster_option,
    drop_option,
    handle_errors,
    noise_option,
    out,
    target_option,
    with_backend,
    workers_option,
    write_output,
)
from qmltest_cli.config import config_option, with_config

from qmltest import api


@handle_errors
@with_config("profile")
@with_backend
def profile(
    ctx: typer.Context,
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    data: str = typer.Option(None, help="Dataset name or file (default: the model's own data)."),
    split: str = typer.Option("train", help="train, test or all."),
    per_class: int = typer.Option(100, help="Training inputs per class (QCov uses 100)."),
    shots: int = typer.Option(None, help="Estimate probabilities from this many shots (default: exact)."),
    seed: int = typer.Option(0, min=0, help="Seed for sampling inputs and shots."),
    noise: Path = noise_option(),
    target: str = target_option(),
    register: str = typer.Option("all", help="Basis states of 'all' qubits (QCov's S) or of the 'readout' qubits."),
    manifest: Path = typer.Option(None, help="Manifest for a bare .qasm file."),
    out_path: Path = typer.Option(..., "--out", help="Profile JSON to write."),
    workers: int = workers_option(),
    cluster: str = cluster_option(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No table or progress bar (the files are still written)."),
    backend: str = backend_option(),
    drop_unknown_labels: bool = drop_option(),
    entanglement: bool = typer.Option(
        False, "--entanglement", help="Also keep each input's Meyer-Wallach entanglement: cover then reports KEC."
    ),
    config: Path = config_option("profile"),
) -> None:
    """Profile l(s), u(s), mean, std, median and MAD per basis state from training probability vectors."""
    res = api.profile(
        model_path,
        data,
        split=split,
        per_class=per_class,
        shots=shots,
        seed=seed,
        noise=noise,
        target=target,
        register=register,
        backend=backend,
        workers=workers,
        cluster=cluster,
        manifest=manifest,
        drop_unknown_labels=drop_unknown_labels,
        entanglement=entanglement,
    )
    write_output(out_path, res.to_json())
    if not quiet:
        out.print(f"profiled {res.timing['inputs']} inputs over {res.timing['states']} basis states -> {out_path}")
