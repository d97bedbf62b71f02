"""`qmltest report`: rebuild the HTML (or re-decide a mutation run) from any finished report; and
`qmltest show`: one mutant of a mutation run, with its QASM diff and verdicts."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import err, handle_errors, out, write_output

from qmltest.errors import InputError
from qmltest.mutation import pipeline
from qmltest.util import intervals
from qmltest.util import writers as report_io


def _load(source: Path) -> tuple[dict, Path | None]:
    """(report, run folder or None) from a run folder or a report file."""
    if not source.exists():
        raise InputError(f"{source}: no such file or folder")
    file = source / "report.json" if source.is_dir() else source
    data = report_io.read_json(file)
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        raise InputError(f"{file}: not a qmltest report (no 'meta')")
    return data, (source if source.is_dir() else None)


@handle_errors
def report(
    source: Path = typer.Argument(..., help="A run folder (mutate --out, fuzz --out) or a report JSON file."),
    html_out: Path = typer.Option(None, "--html", help="Write the HTML report to this folder."),
    json_out: Path = typer.Option(None, "--json", help="Write the (re-decided) JSON report ('-' for stdout)."),
    criterion: str = typer.Option(
        None, help="Mutation runs: judge again with statistical, majority or majority-literal."
    ),
    correction: str = typer.Option(None, help="Mutation runs: none, holm or bh."),
    scoring: str = typer.Option(None, help="Mutation runs: class or plain."),
    against: Path = typer.Option(None, help="Mutation runs: a baseline run (folder or report) to compare with."),
    junit_out: Path = typer.Option(None, "--junit", help="Mutation runs: JUnit XML, survived = failure."),
    csv_out: Path = typer.Option(None, "--csv", help="Mutation runs: one row per mutant."),
    stryker_out: Path = typer.Option(None, "--stryker", help="Mutation runs: Stryker mutation-testing-report JSON."),
    view: list[str] = typer.Option(None, "--view", help="Mutation runs: any registered format, NAME=PATH."),
) -> None:
    """Rebuild a report's views from its JSON alone (no simulation)."""
    data, run_dir = _load(source)
    fmt = data["meta"].get("format", "")
    say = err if str(json_out) == "-" else out  # with --json -, stdout holds the JSON document alone
    if fmt.startswith("qmltest.mutation/"):
        data = pipeline.read_report(source)
        if criterion or correction or scoring:
            data = pipeline.redecide(data, criterion, correction, scoring)
        if against is not None:
            from qmltest.mutation.judge import compare

            base = pipeline.read_report(against)
            if criterion or correction or scoring:
                base = pipeline.redecide(base, criterion, correction, scoring)
            data = dict(data, against=compare.against(data, base))
        from qmltest.report import views

        where = {"json": json_out, "csv": csv_out, "junit": junit_out, "stryker": stryker_out, "html": html_out}
        for spec in view or []:
            name, sep, path = spec.partition("=")
            if not sep or not name or not path:
                raise InputError(f"--view takes NAME=PATH ({', '.join(views.VIEWS)}), got '{spec}'")
            where[name] = Path(path)
        views.write(data, run_dir, where)
        json_out = None  # written with the other views
    elif criterion or correction or scoring or against or junit_out or csv_out or stryker_out or view:
        raise InputError(
            "--criterion, --correction, --scoring, --against, --junit, --csv and --stryker apply to mutation reports"
        )
    elif fmt.startswith("qmltest.fuzz/"):
        if html_out is not None:
            from qmltest.report.html import fuzz

            fuzz.write(data, run_dir, html_out)
    elif fmt.startswith("qmltest.coverage/"):
        if html_out is not None:
            from qmltest.report.html import coverage

            coverage.write(data, html_out)
    else:
        raise InputError(f"{source}: report format '{fmt}' has no view (mutation, coverage or fuzz reports)")
    write_output(json_out, report_io.to_json(data))
    if html_out is not None:
        say.print(f"wrote {html_out / 'index.html'}", markup=False)
    if mutation_summary := (data.get("suites") if fmt.startswith("qmltest.mutation/") else None):
        for name, s in mutation_summary.items():
            score = intervals.fmt(s["mutation_score"], s.get("mutation_score_interval"), percent=True)
            null = s["null_control"]
            say.print(
                f"{name}: {data['meta']['scoring']} mutation score {score} ({data['meta']['criterion']}); "
                f"identical copies killed {intervals.fmt(null['rate'], null['interval'], percent=True)}",
                markup=False,
            )
            delta = data.get("against", {}).get("suites", {}).get(name)
            if delta is not None and delta["difference"] is not None:
                base = intervals.fmt(delta["baseline_score"], delta["baseline_interval"], percent=True)
                say.print(
                    f"{name}: against the baseline {base}: {100 * delta['difference']:+.1f} points "
                    f"(Fisher p = {delta['p_value']:.3g})",
                    markup=False,
                )
        if "against" in data:
            cmp = data["against"]
            say.print(
                f"{len(cmp['newly_survived'])} of {cmp['mutants_shared']} shared mutants survive now but were killed "
                f"in the baseline; {len(cmp['newly_killed'])} the reverse",
                markup=False,
            )
            for m in cmp["newly_survived"][:20]:
                say.print(f"  newly survived: {m['id']} {m['operator']} {m['site']}", markup=False)


@handle_errors
def show(
    run: Path = typer.Argument(..., help="A mutation run folder (mutate --out) or its report JSON (mutate --json)."),
    mutant_id: str = typer.Argument(..., help="A mutant id, or a unique prefix of one."),
) -> None:
    """One mutant: operator, site, status, verdicts per suite, and its QASM diff against the original."""
    from qmltest.report.html.mutation import qasm_diff

    if run.is_file():  # a report JSON: the mutant's facts, and its diff when the run folder sits beside it
        data = report_io.read_json(run)
        if not isinstance(data, dict) or not isinstance(data.get("mutants"), list):
            raise InputError(f"{run}: not a mutation report (no mutants list)")
        run = run.parent
    elif run.is_dir():
        data = pipeline.read_report(run)
    else:
        raise InputError(f"{run}: no such run folder or report")
    hits = [m for m in data["mutants"] if m["id"].startswith(mutant_id)]
    if not hits:
        raise InputError(f"{run}: no mutant id starts with '{mutant_id}'")
    if len(hits) > 1:
        raise InputError(f"{run}: '{mutant_id}' matches {len(hits)} mutants; give more characters")
    m = hits[0]
    out.print(f"mutant {m['id']}: {m['operator']} ({m['cell']}) {m['status']}", markup=False)
    out.print(f"site: {m['site']}", markup=False)
    if m["percentage"] is not None:
        out.print(f"gate percentage: {m['percentage']}", markup=False)
    for key, value in sorted((m.get("search") or {}).items()):
        out.print(f"{key}: {value}", markup=False)
    for suite, v in sorted(m["verdicts"].items()):
        what = "killed" if v["killed"] else "survived"
        extra = f", classes {v['killed_classes']}" if v["killed_classes"] else ""
        extra += f", inputs {v['killed_by'][:20]}" if v["killed_by"] else ""
        out.print(f"{suite}: {what}{extra}", markup=False)
    diff = qasm_diff(run, m["id"])
    if diff:
        out.print("\n".join(diff), markup=False, highlight=False)
    else:
        out.print("(no QASM diff: the mutant is not saved, or changes only preprocessing or readout)", markup=False)
