"""`qmltest fuzz`: coverage-guided fuzzing (QCov Algorithm 1) beside random testing."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import (
    backend_option,
    cluster_option,
    drop_option,
    err,
    gate_coverage,
    handle_errors,
    out,
    parse_gates,
    parse_list,
    progress_bar,
    with_backend,
    workers_option,
    write_output,
    wrote,
)
from qmltest_cli.config import config_option, with_config
from rich.table import Table

from qmltest import api
from qmltest.coverage import criteria as coverage_criteria
from qmltest.fuzz.loop import guides as fuzz_guides
from qmltest.util import intervals
from qmltest.util import writers as report


@handle_errors
@with_config("fuzz")
@with_backend
def fuzz(
    ctx: typer.Context,
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    profile_path: Path = typer.Option(..., "--profile", help="Profile JSON from `qmltest profile`."),
    seeds: str = typer.Option(
        None, "--seeds", "--data", help="Initial seeds: name[:split] or a file (default: the model's data, test)."
    ),
    per_class: int = typer.Option(50, help="Seeds per class."),
    guide: str = typer.Option(
        "all",
        help="A coverage criterion (ksc, scc, tsc or one registered), random, or all (every guide).",
    ),
    budget: int = typer.Option(2000, help="Mutants generated per guide."),
    k: int = typer.Option(100, "--k", help="KSC cells per basis state."),
    top_k: int = typer.Option(1, "--top-k", help="TSC top-k."),
    bounds: str = typer.Option("minmax", help="minmax, sigma or mad."),
    seed: int = typer.Option(0, min=0, help="Seed of every random choice."),
    seeds_list: str = typer.Option(None, help="Several campaign seeds, e.g. 1,2,3: the mean TSR per guide."),
    schedule: str = typer.Option(
        "fifo",
        help="fifo (QCov Algorithm 1: each seed popped once) or prob (DeepHunter-style: picked by fuzz count).",
    ),
    out_dir: Path = typer.Option(None, "--out", help="Run folder (failures, PNGs, per-guide JSON; resumable)."),
    force: bool = typer.Option(False, "--force", help="Run guides saved in --out with other settings again."),
    json_out: Path = typer.Option(None, "--json", help="Write the comparison as JSON ('-' for stdout)."),
    html_out: Path = typer.Option(None, "--html", help="HTML report folder (plots as PNG and SVG)."),
    csv_out: Path = typer.Option(None, "--csv", help="One row per guide."),
    manifest: Path = typer.Option(None, help="Manifest for a bare .qasm file."),
    workers: int = workers_option(),
    cluster: str = cluster_option(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No table."),
    fail_under: list[str] = typer.Option(
        None, help="Exit 1 when a guide's final coverage is below P percent: ksc=40 (as cover's)."
    ),
    backend: str = backend_option(),
    drop_unknown_labels: bool = drop_option(),
    config: Path = config_option("fuzz"),
) -> None:
    """Mutate seeds, keep mutants that raise coverage, collect misclassified ones; compare with random testing."""
    gates = parse_gates(fail_under or [])
    runs = parse_list(seeds_list, "--seeds-list")
    n_guides = len(fuzz_guides()) if guide == "all" else 1
    with progress_bar("fuzzing", n_guides * len(runs or [seed]), quiet) as advance:
        res = api.fuzz(
            model_path,
            profile_path,
            seeds,
            per_class=per_class,
            guide=guide,
            budget=budget,
            k=k,
            top_k=top_k,
            bounds=bounds,
            seed=seed,
            seeds_list=runs,
            schedule=schedule,
            out=out_dir,
            force=force,
            backend=backend,
            workers=workers,
            cluster=cluster,
            manifest=manifest,
            drop_unknown_labels=drop_unknown_labels,
            progress=lambda g: advance(1),
        )
    result, timing = res.data, res.timing
    runs, guides, dropped, n_seeds = timing["runs"], timing["guides"], timing["dropped"], timing["seeds"]
    write_output(json_out, report.to_json(result))
    if runs:
        if not quiet and str(json_out) != "-":
            t = Table(title=f"fuzzing {n_seeds} seeds, budget {budget} per guide, campaign seeds {runs}")
            for col in ("guide", *(f"TSR seed {s}" for s in runs), "mean TSR", "pooled TSR [95%]"):
                t.add_column(col, justify="left" if col == "guide" else "right")
            for g in guides:
                per = [f"{100 * result['runs'][str(s)]['guides'][g]['tsr']:.1f}%" for s in runs]
                pooled = result["pooled_tsr"][g]
                t.add_row(
                    g,
                    *per,
                    f"{100 * result['mean_tsr'][g]:.1f}%",
                    intervals.fmt(pooled["tsr"], pooled["interval"], percent=True),
                )
            out.print(t)
        gate_coverage(
            {
                f"seed {r} {g}": v["final_coverage"]
                for r, run in result["runs"].items()
                for g, v in run["guides"].items()
            },
            gates,
        )
        return
    rows = [  # columns in sorted order: a resumed run reads its results back with sorted keys
        {
            "guide": g,
            **{c: r[c] for c in sorted(r) if c not in ("final_coverage", "guide", "tsr_interval")},
            "tsr_low": (r.get("tsr_interval") or [None, None])[0],
            "tsr_high": (r.get("tsr_interval") or [None, None])[1],
            **{f"final_{c}": r["final_coverage"][c] for c in sorted(r["final_coverage"])},
        }
        for g, r in sorted(result["guides"].items())
    ]
    if csv_out:
        write_output(csv_out, report.to_csv(rows))
    if html_out is not None:
        from qmltest.report.html import fuzz as html_fuzz

        html_fuzz.write(result, out_dir, html_out)
        wrote("HTML report", html_out / "index.html")
    if out_dir is not None:
        wrote("run folder (failures, per-guide records, report.json)", out_dir)
    if not quiet and str(json_out) != "-":
        _render(result, timing, dropped, n_seeds, budget)
    gate_coverage({g: r["final_coverage"] for g, r in result["guides"].items()}, gates)


def _render(result: dict, timing: dict, dropped: int, seeds: int, budget: int) -> None:
    if dropped:
        err.print(f"{dropped} misclassified seeds left out", markup=False)
    t = Table(title=f"fuzzing {seeds} seeds, budget {budget} per guide")
    upper = tuple(c.upper() for c in coverage_criteria.names())
    for col in ("guide", "mutants", "failures", "TSR [95%]", "enqueued", "stop", *upper, "ms/iter"):
        t.add_column(col, justify="left" if col in ("guide", "stop") else "right")
    for g, r in result["guides"].items():
        fc = r["final_coverage"]
        per = timing.get(g, {}).get("seconds_per_iteration")
        t.add_row(
            g,
            str(r["iterations"]),
            str(r["failures"]),
            intervals.fmt(r["tsr"], r.get("tsr_interval"), percent=True),
            str(r["enqueued"]),
            r["stop"],
            *(f"{100 * fc.get(c, 0):.1f}%" for c in coverage_criteria.names()),
            "-" if per is None else f"{1e3 * per:.2f}",
        )
    out.print(t)
