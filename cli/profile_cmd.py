"""`qmltest profile`: per basis state statistics of the model's outputs on training data (QCov Sec. 3.1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer
from qmltest_cli.common import (
    backend_option,
    cluster_option,
    handle_errors,
    model_data,
    noise_of,
    noise_option,
    out,
    target_option,
    with_backend,
    workers_option,
    write_output,
)
from qmltest_cli.config import config_option, with_config

from qmltest import artifact, parallel, report
from qmltest.coverage import profile as profiling
from qmltest.coverage.measure import estimate
from qmltest.data import datasets
from qmltest.simulate.runner import model_probabilities


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
    config: Path = config_option("profile"),
) -> None:
    """Profile l(s), u(s), mean, std, median and MAD per basis state from training probability vectors."""
    model = artifact.load(model_path, manifest)
    data = model_data(model, data, split, "--data")
    x, _ = datasets.select(data, split, model.classes, per_class, seed)
    cfg = noise_of(noise, target)
    where = parallel.plan(workers, cluster)
    probs = model_probabilities(model, x, backend, register=register, noise=cfg, where=where)
    probs = estimate(probs, shots, np.random.default_rng(seed))
    prof = profiling.build(
        probs,
        model.sha256,
        data=data,
        split=split,
        per_class=per_class,
        shots=shots,
        register=register,
        noise=None if cfg is None else cfg.sha256,
        seed=seed,
        model=model.manifest["name"],
        versions=report.versions(),
    )
    write_output(out_path, report.to_json(prof.to_dict()))
    if not quiet:
        out.print(f"profiled {len(x)} inputs over {prof.num_states} basis states -> {out_path}")
