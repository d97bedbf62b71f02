"""`qmltest suite build | attack | show`: test suites of varying quality and adversarial inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import typer
from qmltest_cli.common import (
    backend_option,
    check_range,
    cluster_option,
    handle_errors,
    model_data,
    out,
    with_backend,
    workers_option,
    write_output,
)
from rich.table import Table

from qmltest import api, attacks, suites
from qmltest.data import datasets
from qmltest.data import labels as labels_mod
from qmltest.evaluate import label_indices
from qmltest.model import artifact
from qmltest.util import parallel

app = typer.Typer(
    help="Test suites (Ori, HConf, LConf, Skewed, Small, OOD, Aug, Adv) and attacks.", no_args_is_help=True
)


def _data(spec: str, model: artifact.Model):
    from qmltest.model.loading import classifier_only

    classifier_only(model, "suite", circuits=True)
    source, split = datasets.parse_spec(spec)
    ds = datasets.load(source)
    return ds, datasets.split_indices(ds.y, split)


@app.command("build")
@handle_errors
@with_backend
def build(
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    kind: str = typer.Option(..., help="ori, hconf, lconf, skewed, small, ood, aug or adv."),
    data: str = typer.Option(None, help="Source data, name:split or a file (default: the model's data, test)."),
    per_class: int = typer.Option(100, help="Inputs per class."),
    epsilon: float = typer.Option(64 / 255, help="adv: FGSM step as a fraction of the value range."),
    seed: int = typer.Option(0, min=0, help="Seed of every random choice (same seed, same files)."),
    out_path: Path = typer.Option(..., "--out", help="Suite NPZ to write."),
    backend: str = backend_option(),
) -> None:
    """Build a suite from correctly classified inputs (QuanForge Sec. 4.3.1)."""
    check_range("--per-class", per_class, 1, 10**7)
    check_range("--epsilon", epsilon, 1e-12, 1.0)
    model = api.load(model_path)
    ds, idx = _data(model_data(model, data, "test", "--data"), model)
    inside = idx[labels_mod.contains(model.classes, ds.y[idx])]
    others = ds.x[~labels_mod.contains(model.classes, ds.y)]
    bounds = (float(min(0.0, ds.x.min())), float(ds.x.max()))
    sx, sy, source, params = suites.derive(
        model,
        ds.x[inside],
        ds.y[inside],
        kind,
        per_class,
        seed,
        bounds,
        others,
        ds.image_shape,
        epsilon,
        backend=backend,
    )
    source = np.where(source >= 0, inside[np.maximum(source, 0)], -1)
    suites.save(out_path, sx, sy, source, kind, {"data": data, **params}, model.sha256, seed)
    out.print(f"{kind}: {len(sy)} inputs -> {out_path}", markup=False)


@app.command("prioritize")
@handle_errors
@with_backend
def prioritize(
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    by: str = typer.Option("coverage", help="coverage (needs --profile), kills (needs --report), gini or random."),
    data: str = typer.Option(None, help="Inputs to order, name:split or a file (default: the model's data, test)."),
    per_class: int = typer.Option(None, help="Inputs per class (default: all)."),
    profile: Path = typer.Option(None, help="Profile JSON (qmltest profile) for --by coverage."),
    report: Path = typer.Option(None, help="Mutation report JSON over the same inputs for --by kills."),
    suite_name: str = typer.Option(None, help="Which suite of --report (default: its only one)."),
    seed: int = typer.Option(0, min=0, help="Seed of the input sample and of --by random."),
    out_path: Path = typer.Option(..., "--out", help="CSV to write: rank, index, label."),
    backend: str = backend_option(),
) -> None:
    """Order inputs so faults show early: coverage gain, mutants killed or DeepGini impurity."""
    from qmltest.coverage import priority
    from qmltest.util.writers import read_json, to_csv

    model = api.load(model_path)
    spec = model_data(model, data, "test", "--data")
    x, y = datasets.for_model(spec, "test", model, per_class, seed)
    prof = api.load_profile(profile, model) if profile is not None else None
    killed = priority.killing_inputs(read_json(report), suite_name) if report is not None else None
    order = priority.rank(model, x, by, prof, killed, seed)
    rows = [{"rank": r + 1, "index": int(i), "label": y[i].item()} for r, i in enumerate(order)]
    write_output(out_path, to_csv(rows))
    out.print(f"{len(order)} inputs ordered by {by} -> {out_path}", markup=False)


@app.command("attack")
@handle_errors
@with_backend
def attack(
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    method: str = typer.Option("fgsm", help="fgsm, jsma, dlfuzz, quantest or random."),
    shots: int = typer.Option(None, help="fgsm: estimate the gradient by NES from this many shots per query."),
    data: str = typer.Option(None, help="Seeds, name:split or a file (default: the model's data, test)."),
    per_class: int = typer.Option(50, help="Seed inputs per class."),
    epsilon: float = typer.Option(64 / 255, help="Step as a fraction of the value range."),
    seed: int = typer.Option(0, min=0, help="Seed of every random choice (same seed, same files)."),
    out_path: Path = typer.Option(..., "--out", help="NPZ of adversarial inputs."),
    workers: int = workers_option(),
    cluster: str = cluster_option(),
    backend: str = backend_option(),
) -> None:
    """Attack correctly classified seeds; report the attack success rate (QCov Table 14)."""
    check_range("--per-class", per_class, 1, 10**7)
    check_range("--epsilon", epsilon, 1e-12, 1.0)
    check_range("--shots", shots, 1, 10**8)
    where = parallel.plan(workers, cluster)
    model = api.load(model_path)
    ds, idx = _data(model_data(model, data, "test", "--data"), model)
    inside = idx[labels_mod.contains(model.classes, ds.y[idx])]
    chosen = suites.build(model, ds.x[inside], ds.y[inside], "ori", per_class, seed, backend=backend)
    x, labels = ds.x[inside][chosen], ds.y[inside][chosen]
    y = label_indices(model, labels)
    low, high = float(min(0.0, ds.x.min())), float(ds.x.max())
    adv = attacks.attack_inputs(model, x, y, method, epsilon, low, high, seed, shots, where, backend=backend)
    asr = attacks.success_rate(model, x, adv, y, backend=backend)
    params = {"data": data, "per_class": per_class, "method": method, "epsilon": epsilon, "asr": asr, "shots": shots}
    suites.save(out_path, adv, labels, inside[chosen], f"attack-{method}", params, model.sha256, seed)
    out.print(
        f"{method} epsilon={epsilon:.4f}: attack success rate {100 * asr:.2f}% on {len(y)} inputs -> {out_path}",
        markup=False,
    )


@app.command("show")
@handle_errors
def show(
    suite_path: Path = typer.Argument(..., help="Suite NPZ."),
    model_path: Path = typer.Option(None, "--model", help="Also show the confidence histogram under this model."),
) -> None:
    """Size, classes, how it was made, and (with --model) a confidence histogram."""
    kind, params, sha, seed, generated, x, y = suites.read(suite_path)
    out.print(
        f"{suite_path}: kind {kind}, {len(y)} inputs, {generated} generated, seed {seed}, model {sha[:12]}",
        markup=False,
    )
    out.print(f"params: {json.dumps(params, sort_keys=True)}", markup=False)
    t = Table(title="classes")
    t.add_column("label")
    t.add_column("inputs", justify="right")
    for label, count in zip(*np.unique(y, return_counts=True)):
        t.add_row(str(label), str(count))
    out.print(t)
    if model_path is not None:
        model = api.load(model_path)
        conf = suites.confidence(model, x, y)
        hist, edges = np.histogram(conf, bins=10, range=(0, 1))
        for h, a, b in zip(hist, edges, edges[1:]):
            out.print(f"  confidence {a:.1f}-{b:.1f} {'#' * int(h)} {h}", markup=False)
