"""`qmltest merge` (the shards of one mutate run as one report) and `qmltest cache` (info, prune)."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import check_range, handle_errors, out, write_output

from qmltest import api
from qmltest.runs import reuse
from qmltest.util import writers as report


@handle_errors
def merge(
    runs: list[Path] = typer.Argument(..., help="The shards' run folders (mutate --shard k/n --out DIR)."),
    out_dir: Path = typer.Option(..., "--out", help="Run folder of the merged run (new or empty)."),
    json_out: Path = typer.Option(None, "--json", help="Write the merged JSON report ('-' for stdout)."),
    junit_out: Path = typer.Option(None, "--junit", help="JUnit XML: a testcase per mutant, survived = failure."),
    fail_under: float = typer.Option(None, help="Exit 1 when a suite's mutation score is below P percent."),
    fail_under_lower: bool = typer.Option(
        False, "--fail-under-lower", help="Gate --fail-under on the score's 95% lower bound, not the estimate."
    ),
    annotations: str = typer.Option(None, help="github: one ::warning per surviving mutant on its QASM line."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary line."),
) -> None:
    """Join the shards of one mutate run: the report an unsharded run gives, nothing simulated again;
    gated and annotated as `mutate` is."""
    from qmltest_cli.mutate_cmd import annotate_survivors, annotations_checked, gate

    from qmltest.report import views

    check_range("--fail-under", fail_under, 0.0, 100.0)
    kind = annotations_checked(annotations)
    res = api.merge(runs, out_dir)
    views.write(res.data, out_dir, {"json": json_out, "junit": junit_out})
    if not quiet and str(json_out) != "-":
        out.print(f"merged {len(runs)} shards: {res.summary()}", markup=False)
    if kind is not None:
        annotate_survivors(kind, res.data, api.load(res.data["meta"]["model"]))
    if fail_under is not None:
        gate(res.data, fail_under / 100.0, fail_under_lower)


cache_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, help="The mutate result cache.")


def _folder(cache: Path | None, given: Path | None = None) -> Path:
    """The cache folder: the argument, --cache or $QMLTEST_CACHE (the first given), checked."""
    import os

    from qmltest.errors import InputError

    found = given or cache or (Path(os.environ[reuse.ENV]) if os.environ.get(reuse.ENV) else None)
    if found is None:
        raise InputError(f"give the cache folder: qmltest cache info DIR, --cache DIR or ${reuse.ENV}")
    return reuse.folder(found)


@cache_app.command("info")
@handle_errors
def info(
    folder: Path = typer.Argument(None, help="Cache folder (or --cache, or $QMLTEST_CACHE)."),
    cache: Path = typer.Option(None, "--cache", envvar=reuse.ENV, help="Cache folder."),
    json_out: Path = typer.Option(None, "--json", help="Write the figures as JSON ('-' for stdout)."),
) -> None:
    """Entries, size and age of the cache."""
    doc = reuse.info(_folder(cache, folder))
    write_output(json_out, report.to_json(doc))
    if str(json_out) != "-":
        age = "" if doc["entries"] == 0 else f", oldest {doc['oldest_days']:.1f} days"
        out.print(f"{doc['cache']}: {doc['entries']} entries, {doc['bytes'] / 2**20:.2f} MiB{age}", markup=False)


@cache_app.command("prune")
@handle_errors
def prune(
    folder: Path = typer.Argument(None, help="Cache folder (or --cache, or $QMLTEST_CACHE)."),
    cache: Path = typer.Option(None, "--cache", envvar=reuse.ENV, help="Cache folder."),
    older_than: float = typer.Option(None, "--older-than", min=0, help="Only entries older than DAYS (default: all)."),
) -> None:
    """Remove cache entries (all, or those older than --older-than days)."""
    n = reuse.prune(_folder(cache, folder), older_than)
    out.print(f"removed {n} entries", markup=False)
