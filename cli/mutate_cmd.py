"""`qmltest mutate` (every operator suite, one pipeline) and `qmltest shots` (Hoeffding bound, QuanForge Sec. 4.1)."""

from __future__ import annotations

import contextlib
import inspect
import tempfile
from pathlib import Path
from typing import Any

import typer
from qmltest_cli import options
from qmltest_cli.common import (
    EXIT_GATE,
    command_line,
    err,
    handle_errors,
    out,
    progress_bar,
    with_backend,
    write_output,
    wrote,
)
from qmltest_cli.config import config_option, with_config
from qmltest_cli.options import Group, grouped, model_options, noise_options, run_options
from rich.table import Table

from qmltest import api
from qmltest.api import check_range
from qmltest.errors import InputError
from qmltest.model.artifact import Model
from qmltest.mutation.evidence.stats import hoeffding_shots
from qmltest.mutation.options import OPERATOR_SUITES, Options
from qmltest.report import views
from qmltest.util import intervals
from qmltest.util import writers as report

DEFAULT = Options()
"""The one declaration of every mutation default (`mutation.options.Options`): the CLI, the API and
the run fingerprint read it."""


def kill_options() -> Group:
    """Which mutants, and how a mutant is killed (QuanForge Eq. 2-4; the QML suites' vote test)."""
    return {
        "suite": (
            str,
            typer.Option(
                "quanforge",
                "--family",
                "--suite",
                help=f"Operator family: {', '.join(OPERATOR_SUITES)} (--suite: its older name).",
            ),
        ),
        "operators": (str, typer.Option(None, help="Comma-separated operators (default: the whole suite).")),
        "strategy": (str, typer.Option("", help="search (quanforge), directed or exhaustive (qml, classic).")),
        "criterion": (
            str,
            typer.Option(
                "", "--criterion", "--killing", help="statistical (GLM + d), majority (vote test) or majority-literal."
            ),
        ),
        "correction": (
            str,
            typer.Option("", help="none, holm or bh: across mutants (statistical) or inputs (majority; default holm)."),
        ),
        "scoring": (str, typer.Option("", help="class (QuanForge Eq. 4) or plain (killed/total).")),
        "shots": (int, typer.Option(DEFAULT.shots, help="Shots per prediction (Hoeffding: `qmltest shots`).")),
        "exact": (bool, typer.Option(False, "--exact", help="Exact predictions instead of shots.")),
        "repeats": (int, typer.Option(DEFAULT.repeats, help="Repeated predictions per accuracy distribution.")),
        "alpha": (float, typer.Option(DEFAULT.settings.alpha, help="GLM p-value threshold.")),
        "effect": (float, typer.Option(DEFAULT.settings.effect, help="Cohen's d threshold (beta).")),
        "seed": (int, typer.Option(DEFAULT.seed, min=0, help="Root seed of every random choice.")),
        "null_copies": (
            int,
            typer.Option(DEFAULT.null_copies, help="Identical copies scored as mutants (null control)."),
        ),
    }


def search_options() -> Group:
    """The search strategy (QuanForge Algorithm 1): reference data, scope, stability search."""
    return {
        "reference": (
            str,
            typer.Option(
                None, help="search: reference data (Sec. 3.1), name:split or file (default: the model's data, train)."
            ),
        ),
        "reference_per_class": (int, typer.Option(100, help="Reference inputs per class.")),
        "qubits": (str, typer.Option(None, help="search: qubit range, e.g. 0-7 (default: all).")),
        "depth": (str, typer.Option(None, help="search: depth range in percent, e.g. 0-50%.")),
        "gate_types": (str, typer.Option(None, help="search: Table 1 categories, e.g. rotation,controlled.")),
        "scan": (str, typer.Option(None, help="search: depth=0-25%,25-50%,...  |  gate-type  |  qubit")),
        "tau_rse": (float, typer.Option(DEFAULT.settings.tau_rse, help="RSE stability threshold.")),
        "tau_trivial": (float, typer.Option(DEFAULT.settings.tau_trivial, help="Non-triviality accuracy threshold.")),
        "lb": (float, typer.Option(DEFAULT.settings.lb, help="Lower bound of the gate percentage search.")),
        "ub": (float, typer.Option(DEFAULT.settings.ub, help="Upper bound of the gate percentage search.")),
        "k_max": (int, typer.Option(DEFAULT.settings.k_max, "--k-max", help="Stability iterations per search step.")),
        "batch": (int, typer.Option(DEFAULT.settings.i, help="Mutants generated per stability iteration (i).")),
        "distribution": (str, typer.Option(DEFAULT.distribution, help="PF/RGA noise: gaussian, uniform, exponential.")),
        "scale": (float, typer.Option(DEFAULT.scale, help="Noise scale (PF default N(0, 1), Sec. 4.3.2).")),
    }


def sampling_options() -> Group:
    """Fewer shots or fewer mutants: sequential decisions, mutant sampling with a precision."""
    return {
        "sequential": (
            bool,
            typer.Option(False, "--sequential", help="Stop sampling a mutant once its verdict is known."),
        ),
        "sample": (
            int,
            typer.Option(
                None,
                "--sample",
                help="Score a random sample of N sites, stratified by operator (with --precision: the first).",
            ),
        ),
        "precision": (
            float,
            typer.Option(
                None, "--precision", help="Sample (doubling) until the score's 95% interval is narrower than W."
            ),
        ),
        "shots_budget": (
            int,
            typer.Option(None, help="--sequential: most shots per (mutant, input); default 5 x repeats x shots."),
        ),
        "power": (float, typer.Option(DEFAULT.power, help="--sequential: 1 - beta, for deciding 'survived'.")),
        "margin": (
            float,
            typer.Option(DEFAULT.margin, help="--sequential majority: vote-probability drop that survival rules out."),
        ),
    }


def data_options() -> Group:
    """The test suites scored."""
    return {
        "tests": (
            list[str],
            typer.Option(None, "--test", "--data", help="Test suite(s) to score: name[:split] or file."),
        ),
        "per_class": (
            int,
            typer.Option(None, "--per-class", "--test-per-class", help="Inputs per class of each suite."),
        ),
        "drop_unknown_labels": options.data_options()["drop_unknown_labels"],
    }


def output_options() -> Group:
    """The run folder, the reports, the gate and the listing."""
    return {
        "out": (Path, typer.Option(None, "--out", help="Run folder (resumable).")),
        "force": (bool, typer.Option(False, "--force", help="Ignore finished mutants in --out and start over.")),
        "json_out": (Path, typer.Option(None, "--json", help="Write the JSON report ('-' for stdout).")),
        "csv_out": (Path, typer.Option(None, "--csv", help="Write one row per mutant.")),
        "stryker_out": (Path, typer.Option(None, "--stryker", help="Stryker mutation-testing-report JSON.")),
        "junit_out": (
            Path,
            typer.Option(None, "--junit", help="JUnit XML: a testcase per mutant, survived = failure."),
        ),
        "html_out": (Path, typer.Option(None, "--html", help="HTML report folder (plots as PNG and SVG beside it).")),
        "fail_under": (
            float,
            typer.Option(
                None, help="Exit 1 when a suite's mutation score is below P percent (as cover's --fail-under)."
            ),
        ),
        "annotations": (
            str,
            typer.Option(None, help="github: one ::warning per surviving mutant on its QASM line (pull-request view)."),
        ),
        "fail_under_lower": (
            bool,
            typer.Option(
                False, "--fail-under-lower", help="Gate --fail-under on the score's 95% lower bound, not the estimate."
            ),
        ),
        "list_only": (
            bool,
            typer.Option(False, "--list", help="Site strategies: count mutants per operator, run nothing."),
        ),
        "list_mutants": (
            bool,
            typer.Option(
                False,
                "--list-mutants",
                help="With --list: each mutant's id, operator and site (ids as a run gives them).",
            ),
        ),
        "quiet": (
            bool,
            typer.Option(False, "--quiet", "-q", help="No table or progress bar (the files are still written)."),
        ),
    }


def ci_options() -> Group:
    """CI: a shard of the mutants, a result cache across runs, survivors only, changed sites only."""
    return {
        "shard": (
            str,
            typer.Option(None, "--shard", help="Score shard k/n of the mutants (`qmltest merge` joins them)."),
        ),
        "cache": (
            Path,
            typer.Option(
                None, "--cache", envvar="QMLTEST_CACHE", help="Result cache folder: unchanged mutants cost nothing."
            ),
        ),
        "iterate": (
            Path,
            typer.Option(None, "--iterate", help="A previous mutate JSON report: skip the mutants it killed."),
        ),
        "changed_since": (
            Path,
            typer.Option(None, "--changed-since", help="The model before an edit: only mutants at changed gates."),
        ),
    }


REPORTS = ("json_out", "csv_out", "stryker_out", "junit_out", "html_out")


@handle_errors
@with_config("mutate")
@with_backend
@grouped(
    kill_options,
    sampling_options,
    search_options,
    data_options,
    noise_options,
    run_options,
    model_options,
    ci_options,
    output_options,
)
def mutate(
    ctx: typer.Context,
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    config: Path = config_option("mutate"),
    **kw: Any,
) -> None:
    """Mutation testing: one pipeline, any generation strategy with any kill criterion.

    quanforge: effective mutants (Algorithm 1) scored class-level by statistical killing (Eq. 2, 4).
    qml / classic: every (directed) site, killed when a correctly classified input flips."""
    quiet, fail_under, lower = kw.pop("quiet"), kw.pop("fail_under"), kw.pop("fail_under_lower")
    annotate = annotations_checked(kw.pop("annotations"))
    reports = {k: kw.pop(k) for k in REPORTS}
    listing = kw.pop("list_only") or kw["list_mutants"]
    rows = kw.pop("list_mutants")
    if kw.pop("exact"):
        kw["shots"] = None
    check_range("--fail-under", fail_under, 0.0, 100.0)
    if listing:
        return _listing(model_path, rows, reports["json_out"], kw)
    model = api.load(model_path, kw["manifest"])
    html_out, stryker_out = reports["html_out"], reports["stryker_out"]
    if html_out is not None and kw["out"] is None:
        kw["out"] = html_out / "run"
    with contextlib.ExitStack() as stack:
        if stryker_out and kw["out"] is None:  # the mutants' texts give each Stryker mutant its replacement
            kw["out"] = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="qmltest-"))) / "run"
        announce = None if quiet else _announce
        with progress_bar("mutating", None, quiet) as advance:
            res = api.mutate(model, progress=advance, announce=announce, command=command_line(), **kw)
        _write_reports(model, res.data, res.to_json(), kw["out"], **reports)
    if not quiet and str(reports["json_out"]) != "-":
        render(res.data, res.timing)
    for line in res.data["warnings"]:
        err.print(f"warning: {line}", markup=False)
    annotate_survivors(annotate, res.data, model)
    if fail_under is not None:
        gate(res.data, fail_under / 100.0, lower)


def _announce(plan: dict) -> None:
    err.print(
        f"{plan['mutants']} mutants x {plan['inputs']} inputs on {plan['backend']}: projected {plan['seconds']:.0f} s",
        markup=False,
    )


SITE_OPTIONS = frozenset(inspect.signature(api.mutation_options).parameters)


def _listing(model_path: Path, rows: bool, json_out: Path | None, kw: dict) -> None:
    """`--list`: the mutant count per operator (and with --list-mutants each mutant), nothing run."""
    options = {k: v for k, v in kw.items() if k in SITE_OPTIONS}
    listing = api.list_mutants(model_path, rows=rows, manifest=kw["manifest"], **options)
    write_output(json_out, report.to_json(listing))
    if str(json_out) == "-":
        return
    for row in listing.get("mutants", []):
        out.print(f"{row['id']}  {row['operator']:>14}  {row['site']}", markup=False)
    for name, n in listing["counts"].items():
        out.print(f"{name:>14} {n:8d}")
    out.print(f"{'total':>14} {sum(listing['counts'].values()):8d}  ({listing['strategy']})")


def _write_reports(model: Model, result: dict, text: str, out_dir: Path | None, **reports: Path | None) -> None:
    """Every report the options ask for, from one finished result and its run folder (`views`),
    each named on stderr with where it went (stdout's '-' is the data itself)."""
    views.write(result, out_dir, {k.removesuffix("_out"): v for k, v in reports.items()}, text, model)
    for key, path in reports.items():
        if path is not None and str(path) != "-":
            name = key.removesuffix("_out")
            html = name == "html"
            wrote("HTML report" if html else f"{name} report", path / "index.html" if html else path)


def annotations_checked(kind: str | None) -> str | None:
    """The --annotations format, checked before any work (one line otherwise)."""
    from qmltest.report.annotations import FORMATS

    if kind is not None and kind not in FORMATS:
        raise InputError(f"--annotations must be one of {', '.join(FORMATS)}, got '{kind}'")
    return kind


def annotate_survivors(kind: str | None, result: dict, model: Model) -> None:
    """Print the surviving mutants as CI annotations on stdout (where GitHub reads them)."""
    if kind is None:
        return
    from qmltest.report import annotations

    for line in annotations.github(result, model, annotations.source_of(model)):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def gate(result: dict, bar: float, lower: bool) -> None:
    """Exit 1 when a suite's score (or its 95% lower bound) is below the bar, naming the value."""
    values = {}
    for name, s in result["suites"].items():
        interval = s.get("mutation_score_interval")
        values[name] = (interval[0] if interval else 0.0) if lower else (s["mutation_score"] or 0.0)
    low = [f"{name} {'lower bound ' if lower else ''}{100 * v:.2f}%" for name, v in values.items() if v < bar]
    if low:
        err.print(f"mutation score below {100 * bar:g}%: {', '.join(low)}", markup=False)
        raise typer.Exit(EXIT_GATE)
    shown = ", ".join(f"{name} {100 * v:.2f}%" for name, v in values.items())
    err.print(f"mutation {'lower bound' if lower else 'score'} gate passed (>= {100 * bar:g}%): {shown}", markup=False)


def render(result: dict, timing: dict) -> None:
    meta = result["meta"]
    pct = lambda v: "-" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    gen = result["generation"]
    if "reference" in gen:  # the search strategy's tables
        t = Table(
            title=f"QuanForge mutants (reference {gen['reference']['name']}, "
            f"original accuracy {gen['reference']['original_mean_accuracy']:.4f})"
        )
        for col in ("cell", "operator", "generated", "equivalent", "effective", "KR", "NR", "mean acc"):
            t.add_column(col, justify="right" if col not in ("cell", "operator") else "left")
        for cell, rows in gen["cells"].items():
            for op, s in rows.items():
                acc = "-" if s["mean_effective_accuracy"] is None else f"{s['mean_effective_accuracy']:.4f}"
                t.add_row(
                    cell,
                    op,
                    str(s["generated"]),
                    str(s["equivalent"]),
                    str(s["effective"]),
                    pct(s["KR"]),
                    pct(s["NR"]),
                    acc,
                )
        out.print(t)
    t = Table(title=f"{meta['options']['suite']} mutants ({meta['options']['strategy']}, {meta['criterion']} killing)")
    kinds = ("killed", "survived", "undecided", "equivalent", "incompetent")
    for col in ("operator",) + kinds + ("other",):
        t.add_column(col, justify="left" if col == "operator" else "right")
    for op, counts in result["operators"].items():
        other = sum(v for k, v in counts.items() if k not in kinds)
        t.add_row(op, *(str(counts.get(k, 0)) for k in kinds), str(other))
    out.print(t)
    st = Table(title=f"test suites ({meta['scoring']} mutation score, 95% intervals)")
    for col in ("suite", "inputs", "scored mutants", "undecided", "score", "null-control kill rate"):
        st.add_column(col)
    for name, s in result["suites"].items():
        null = s["null_control"]
        st.add_row(
            name,
            str(s["inputs"]),
            str(s["scored_mutants"]),
            str(s["undecided"]),
            intervals.fmt(s["mutation_score"], s["mutation_score_interval"], percent=True),
            intervals.fmt(null["rate"], null["interval"], percent=True) + f" of {null['copies']}",
        )
    out.print(st)
    if timing.get("finished_before"):
        out.print("this run finished before in its run folder: its report, nothing simulated again", markup=False)
    else:
        out.print(
            f"generation {1e3 * timing['generation_seconds_per_mutant']:.2f} ms per mutant; "
            f"evaluation {1e3 * timing['eval_seconds_per_mutant']:.2f} ms per scored mutant",
            markup=False,
        )
    if timing.get("cached") and not timing.get("finished_before"):
        out.print(f"cached {timing['cached']} of {timing['scored']} scored mutants (no simulation)", markup=False)
    left = result["generation"].get("left_out") or {}
    if left:
        out.print("left out: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(left.items())), markup=False)


@handle_errors
def shots(
    epsilon: float = typer.Option(0.05, help="Error bound on each output's estimate."),
    confidence: float = typer.Option(0.95, help="Confidence level delta."),
    outputs: int = typer.Option(2, help="Number of output qubits q."),
) -> None:
    """Shots per prediction from Hoeffding's inequality with a union bound: s >= ln(2q/(1-delta)) / (2 eps^2)."""
    out.print(str(hoeffding_shots(epsilon, confidence, outputs)))


__all__ = ["mutate", "shots"]
