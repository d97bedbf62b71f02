"""`qmltest cover`: KSC, SCC and TSC of a test suite against a profile (QCov Eq. 2-4)."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import (
    backend_option,
    cluster_option,
    drop_option,
    gate_coverage,
    handle_errors,
    noise_option,
    out,
    parse_gates,
    target_option,
    with_backend,
    workers_option,
    write_output,
    wrote,
)
from qmltest_cli.config import config_option, with_config
from rich.table import Table

from qmltest import api
from qmltest.coverage import criteria as coverage_criteria
from qmltest.errors import InputError
from qmltest.util import writers as report


def parse_shots(text: str) -> int | None:
    if text == "exact":
        return None
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"--shots must be 'exact' or a positive integer, got '{text}'") from None
    if value <= 0:
        raise InputError(f"--shots must be positive, got {value}")
    return value


@handle_errors
@with_config("cover")
@with_backend
def cover(
    ctx: typer.Context,
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    profile_path: Path = typer.Option(..., "--profile", help="Profile JSON from `qmltest profile`."),
    data: str = typer.Option(None, help="Test suite dataset, name or file (default without --suite: the model's)."),
    split: str = typer.Option("test", help="Split of --data."),
    per_class: int = typer.Option(None, help="Inputs per class from --data (default: all)."),
    suite: list[str] = typer.Option(None, help="Suite file(s) (.npz x, y); several = parts, cumulative."),
    k: int = typer.Option(100, "--k", help="KSC cells per basis state."),
    top_k: int = typer.Option(1, "--top-k", help="TSC: top-k states per input."),
    bounds: str = typer.Option("minmax", help="minmax, sigma or mad."),
    mad_confidence: float = typer.Option(0.99, help="Confidence of the MAD outlier filter."),
    shots: str = typer.Option("exact", help="'exact' or shots per input to estimate probabilities."),
    shots_sweep: str = typer.Option(None, help="Comma-separated shot counts for the Sec. 4.5 study."),
    seed: int = typer.Option(0, min=0, help="Seed for input sampling and shots."),
    noise: Path = noise_option(),
    target: str = target_option(),
    manifest: Path = typer.Option(None, help="Manifest for a bare .qasm file."),
    json_out: Path = typer.Option(None, "--json", help="Write the JSON report ('-' for stdout)."),
    html_out: Path = typer.Option(None, "--html", help="HTML report folder (plots as PNG and SVG)."),
    csv_out: Path = typer.Option(None, "--csv", help="Write per-state rows as CSV."),
    junit_out: Path = typer.Option(None, "--junit", help="JUnit XML: a testcase per criterion, failed below its bar."),
    fail_under: list[str] = typer.Option(None, help="Exit 1 when a criterion is below P percent: ksc=40."),
    workers: int = workers_option(),
    cluster: str = cluster_option(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No table or progress bar (the files are still written)."),
    backend: str = backend_option(),
    drop_unknown_labels: bool = drop_option(),
    config: Path = config_option("cover"),
) -> None:
    """Coverage of a test suite: totals, per-state detail, growth per input, per part."""
    gates = parse_gates(fail_under or [])
    counts = [parse_shots(s.strip()) for s in shots_sweep.split(",")] if shots_sweep else None
    res = api.cover(
        model_path,
        profile_path,
        data,
        suites=suite or [],
        split=split,
        per_class=per_class,
        k=k,
        top_k=top_k,
        bounds=bounds,
        mad_confidence=mad_confidence,
        shots=parse_shots(shots),
        shots_sweep=counts,
        seed=seed,
        noise=noise,
        target=target,
        backend=backend,
        workers=workers,
        cluster=cluster,
        manifest=manifest,
        drop_unknown_labels=drop_unknown_labels,
    )
    result, parts = res.data, res.timing["parts"]
    write_output(json_out, report.to_json(result))
    if html_out is not None:
        from qmltest.report.html import coverage as html_coverage

        html_coverage.write(result, html_out)
        wrote("HTML report", html_out / "index.html")
    if csv_out:
        rows = [
            {**{k2: v for k2, v in r.items() if k2 != "cells_covered"}, "cells_covered": len(r["cells_covered"])}
            for r in result["per_state"]
        ]
        write_output(csv_out, report.to_csv(rows))
    if junit_out:
        from qmltest.report import junit

        write_output(junit_out, junit.coverage(result, gates, " + ".join(parts)))
    if not quiet and str(json_out) != "-":
        render(result)
    gate_coverage({"": result["totals"]}, gates)


def render(result: dict) -> None:
    t = Table(title=f"QCov coverage ({result['inputs']} inputs, bounds {result['params']['bounds']})")
    t.add_column("part")
    t.add_column("inputs", justify="right")
    shown = [n for n in coverage_criteria.names(None) if n in result["totals"]]  # KEC when profiled
    for name in shown:
        t.add_column(name.upper(), justify="right")
    for row in result["parts"]:
        t.add_row(row["part"], str(row["cumulative_inputs"]), *(f"{100 * row['cumulative'][n]:.2f}%" for n in shown))
    out.print(t)
    if "shots_sweep" in result:
        s = Table(title="sampling cost (QCov Sec. 4.5; 95% over re-drawn shots, * exact value outside)")
        for col in ("shots", *(n.upper() for n in coverage_criteria.names())):
            s.add_column(col, justify="right")
        for row in result["shots_sweep"]:
            cells = []
            for n in coverage_criteria.names():
                cell = f"{100 * row[n]:.2f}%"
                if "interval" in row:
                    lo, hi = row["interval"][n]
                    cell += f" [{100 * lo:.1f}, {100 * hi:.1f}]" + ("" if row["exact_inside"][n] else "*")
                cells.append(cell)
            s.add_row(str(row["shots"]), *cells)
        out.print(s)
