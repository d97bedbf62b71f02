"""`qmltest train`: train a zoo architecture on a dataset and save the QASM3 artifact."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import handle_errors, out, parse_classes, progress_bar

from qmltest.model import artifact
from qmltest.zoo.train import train as train_model


@handle_errors
def train(
    arch: str = typer.Option(..., help="Architecture (see `qmltest zoo list`)."),
    dataset: str = typer.Option(..., help="mnist, digits, iris, wine, breast_cancer, or a .npz/.csv/idx: file."),
    classes: str = typer.Option(..., help="Class labels to keep, e.g. 0,1."),
    out_dir: Path = typer.Option(..., "--out", help="Folder for model.qasm + model.json."),
    seed: int = typer.Option(7, min=0, help="Seed for initial weights and subsampling."),
    per_class: int = typer.Option(200, help="Training samples per class."),
    maxiter: int = typer.Option(150, help="L-BFGS-B iterations."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Train with exact adjoint gradients on the batched engine; report train/test accuracy."""
    labels = parse_classes(classes) or []
    with progress_bar(f"training {arch}", maxiter, quiet) as advance:
        model = train_model(
            arch,
            dataset,
            labels,
            seed=seed,
            train_per_class=per_class,
            maxiter=maxiter,
            progress=lambda step, loss: advance(1),
        )
    artifact.save(model, out_dir)
    tr = model.manifest["training"]
    if not quiet:
        out.print(
            f"saved {out_dir}: train accuracy {tr['train_accuracy']:.4f}, test accuracy {tr['test_accuracy']:.4f}"
        )
