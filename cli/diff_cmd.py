"""`qmltest diff`: two models, or one model on two targets, on the same inputs."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import (
    EXIT_GATE,
    backend_option,
    check_range,
    drop_option,
    err,
    handle_errors,
    out,
    with_backend,
    write_output,
)
from qmltest_cli.config import config_option, with_config

from qmltest import api
from qmltest.util import intervals
from qmltest.util import writers as report


@handle_errors
@with_config("diff")
@with_backend
def diff(
    ctx: typer.Context,
    model_a: Path = typer.Argument(..., help="Model folder (side A)."),
    model_b: Path = typer.Argument(None, help="Second model (side B); default: model A again, on --target-b."),
    data: str = typer.Option(None, help="Inputs: name[:split] or a file (default: model A's data, test)."),
    per_class: int = typer.Option(None, "--per-class", help="Inputs per class (default: all)."),
    target_a: str = typer.Option("ideal", help="Where A runs: ideal, noise:FILE or fake:NAME."),
    target_b: str = typer.Option("ideal", help="Where B runs: ideal, noise:FILE or fake:NAME."),
    shots: int = typer.Option(None, help="Compare shot-based votes (a test per input) instead of exact predictions."),
    repeats: int = typer.Option(20, help="With --shots: votes per input and side."),
    alpha: float = typer.Option(0.05, help="With --shots: family-wise error over the inputs (Holm)."),
    fail_over: float = typer.Option(None, help="Exit 1 when more than this percent of the inputs disagree."),
    seed: int = typer.Option(0, min=0, help="Seed for input selection and shot sampling."),
    backend: str = backend_option(),
    json_out: Path = typer.Option(None, "--json", help="Write the diff as JSON ('-' for stdout)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary lines."),
    drop_unknown_labels: bool = drop_option(),
    config: Path = config_option("diff"),
) -> None:
    """Where do two models, or one model on two targets, give different answers on the same inputs?"""
    check_range("--fail-over", fail_over, 0.0, 100.0)
    res = api.diff(
        model_a,
        model_b,
        data,
        per_class=per_class,
        target_a=target_a,
        target_b=target_b,
        shots=shots,
        repeats=repeats,
        alpha=alpha,
        seed=seed,
        backend=backend,
        drop_unknown_labels=drop_unknown_labels,
    )
    result = res.data
    write_output(json_out, report.to_json(result))
    say = err if str(json_out) == "-" else out
    if not quiet:
        pct = lambda v, i: intervals.fmt(v, i, percent=True)  # noqa: E731
        say.print(
            f"{result['inputs']} inputs ({result['mode']}): {result['disagree']} disagree "
            f"({pct(result['disagree_rate'], result['disagree_interval'])}); accuracy A "
            f"{pct(result['accuracy_a'], result['accuracy_a_interval'])}, B "
            f"{pct(result['accuracy_b'], result['accuracy_b_interval'])} (McNemar p = {result['mcnemar_p']:.3g}); "
            f"class-distribution TVD mean {result['tvd_mean']:.4f}, max {result['tvd_max']:.4f}",
            markup=False,
        )
    if fail_over is not None and 100 * (result["disagree_rate"] or 0) > fail_over:
        err.print(
            f"{100 * result['disagree_rate']:.2f}% of the inputs disagree, more than --fail-over {fail_over}%",
            markup=False,
        )
        raise typer.Exit(EXIT_GATE)
