"""`qmltest mutate` (every operator suite, one pipeline) and `qmltest shots` (Hoeffding bound, QuanForge Sec. 4.1)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import typer
from qmltest_cli.common import (
    EXIT_GATE,
    backend_option,
    check_range,
    cluster_option,
    command_line,
    err,
    handle_errors,
    model_data,
    noise_of,
    noise_option,
    out,
    progress_bar,
    target_option,
    with_backend,
    workers_option,
    write_output,
)
from qmltest_cli.config import config_option, with_config
from rich.table import Table

from qmltest import artifact, intervals, parallel, report
from qmltest.data import datasets
from qmltest.errors import InputError
from qmltest.evaluate import label_indices
from qmltest.mutation import operators as ops
from qmltest.mutation import pipeline, registry, sites, stryker
from qmltest.mutation import precision as precision_mod
from qmltest.mutation.evaluate import Data
from qmltest.mutation.gates import CATEGORIES, categories_of
from qmltest.mutation.generate import Settings
from qmltest.mutation.pipeline import Cell
from qmltest.mutation.scope import Scope, make_scope, parse_range
from qmltest.mutation.stats import hoeffding_shots


def load_data(spec: str, model: artifact.Model, per_class: int | None, seed: int) -> Data:
    """'mnist:train' (builtin and split) or a file; labels mapped to the model's classes."""
    x, y = datasets.select(spec, "test", model.classes, per_class, seed)
    return Data(spec, model.encode(x), label_indices(model, y), x)


def scan_cells(scan: str | None, base: Scope, model: artifact.Model) -> list[Cell]:
    if not scan:
        return [Cell("all", base)]
    kind, _, value = scan.partition("=")
    if kind == "depth":
        if not value:
            value = "0-25%,25-50%,50-75%,75-100%"
        return [Cell(f"depth {r}", Scope(base.qubits, parse_range(r), base.gate_types)) for r in value.split(",")]
    if kind == "gate-type":
        present = set().union(*(categories_of(g.name) for g in model.ir.gates))
        names = value.split(",") if value else [c for c in CATEGORIES if c in present]
        return [Cell(f"type {c}", Scope(base.qubits, base.depth, (c,))) for c in names]
    if kind == "qubit":
        return [
            Cell(f"qubit {q}", Scope(frozenset({q}), base.depth, base.gate_types)) for q in range(model.ir.num_qubits)
        ]
    raise InputError(f"--scan takes depth=RANGES, gate-type or qubit, got '{scan}'")


@handle_errors
@with_config("mutate")
@with_backend
def mutate(
    ctx: typer.Context,
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    suite: str = typer.Option("quanforge", help="Operator suite: quanforge, qml or classic."),
    operators: str = typer.Option(None, help="Comma-separated operators (default: the whole suite)."),
    strategy: str = typer.Option("", help="search (quanforge), directed or exhaustive (qml, classic)."),
    criterion: str = typer.Option(
        "", "--criterion", "--killing", help="statistical (GLM + d), majority (vote test) or majority-literal."
    ),
    correction: str = typer.Option(
        "", help="none, holm or bh: across mutants (statistical) or inputs (majority; default holm)."
    ),
    scoring: str = typer.Option("", help="class (QuanForge Eq. 4) or plain (killed/total)."),
    list_only: bool = typer.Option(False, "--list", help="Site strategies: count mutants per operator, run nothing."),
    list_mutants: bool = typer.Option(
        False, "--list-mutants", help="With --list: each mutant's id, operator and site (ids as a run gives them)."
    ),
    reference: str = typer.Option(
        None, help="search: reference data (Sec. 3.1), name:split or file (default: the model's data, train)."
    ),
    reference_per_class: int = typer.Option(100, help="Reference inputs per class."),
    test: list[str] = typer.Option(None, "--test", "--data", help="Test suite(s) to score: name[:split] or file."),
    test_per_class: int = typer.Option(None, "--per-class", "--test-per-class", help="Inputs per class of each suite."),
    qubits: str = typer.Option(None, help="search: qubit range, e.g. 0-7 (default: all)."),
    depth: str = typer.Option(None, help="search: depth range in percent, e.g. 0-50%."),
    gate_types: str = typer.Option(None, help="search: Table 1 categories, e.g. rotation,controlled."),
    scan: str = typer.Option(None, help="search: depth=0-25%,25-50%,...  |  gate-type  |  qubit"),
    shots: int = typer.Option(1000, help="Shots per prediction (Hoeffding: `qmltest shots`)."),
    exact: bool = typer.Option(False, "--exact", help="Exact predictions instead of shots."),
    repeats: int = typer.Option(20, help="Repeated predictions per accuracy distribution."),
    alpha: float = typer.Option(0.05, help="GLM p-value threshold."),
    effect: float = typer.Option(0.5, help="Cohen's d threshold (beta)."),
    tau_rse: float = typer.Option(0.05, help="RSE stability threshold."),
    tau_trivial: float = typer.Option(0.75, help="Non-triviality accuracy threshold."),
    lb: float = typer.Option(0.0, help="Lower bound of the gate percentage search."),
    ub: float = typer.Option(0.5, help="Upper bound of the gate percentage search."),
    k_max: int = typer.Option(10, "--k-max", help="Stability iterations per search step."),
    batch: int = typer.Option(10, help="Mutants generated per stability iteration (i)."),
    distribution: str = typer.Option("gaussian", help="PF/RGA noise: gaussian, uniform, exponential."),
    scale: float = typer.Option(1.0, help="Noise scale (PF default N(0, 1), Sec. 4.3.2)."),
    seed: int = typer.Option(0, min=0, help="Root seed of every random choice."),
    null_copies: int = typer.Option(pipeline.NULL_COPIES, help="Identical copies scored as mutants (null control)."),
    sequential: bool = typer.Option(False, "--sequential", help="Stop sampling a mutant once its verdict is known."),
    sample: int = typer.Option(
        None, "--sample", help="Score a random sample of N sites, stratified by operator (with --precision: the first)."
    ),
    precision: float = typer.Option(
        None, "--precision", help="Sample (doubling) until the score's 95% interval is narrower than W."
    ),
    shots_budget: int = typer.Option(
        None, help="--sequential: most shots per (mutant, input); default 5 x repeats x shots."
    ),
    power: float = typer.Option(0.8, help="--sequential: 1 - beta, for deciding 'survived'."),
    margin: float = typer.Option(0.3, help="--sequential majority: vote-probability drop that survival rules out."),
    noise: Path = noise_option(),
    target: str = target_option(),
    out_dir: Path = typer.Option(None, "--out", help="Run folder (resumable)."),
    force: bool = typer.Option(False, "--force", help="Ignore finished mutants in --out and start over."),
    json_out: Path = typer.Option(None, "--json", help="Write the JSON report ('-' for stdout)."),
    csv_out: Path = typer.Option(None, "--csv", help="Write one row per mutant."),
    stryker_out: Path = typer.Option(None, "--stryker", help="Stryker mutation-testing-report JSON."),
    junit_out: Path = typer.Option(None, "--junit", help="JUnit XML: a testcase per mutant, survived = failure."),
    html_out: Path = typer.Option(None, "--html", help="HTML report folder (plots as PNG and SVG beside it)."),
    fail_under: float = typer.Option(
        None, help="Exit 1 when a suite's mutation score is below P percent (as cover's --fail-under)."
    ),
    fail_under_lower: bool = typer.Option(
        False, "--fail-under-lower", help="Gate --fail-under on the score's 95% lower bound, not the estimate."
    ),
    manifest: Path = typer.Option(None, help="Manifest for a bare .qasm file."),
    config: Path = config_option("mutate"),
    workers: int = workers_option(),
    cluster: str = cluster_option(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No table or progress bar (the files are still written)."),
    backend: str = backend_option(),
) -> None:
    """Mutation testing: one pipeline, any generation strategy with any kill criterion.

    quanforge: effective mutants (Algorithm 1) scored class-level by statistical killing (Eq. 2, 4).
    qml / classic: every (directed) site, killed when a correctly classified input flips."""
    model = artifact.load(model_path, manifest)
    names = tuple(n.strip() for n in operators.split(",") if n.strip()) if operators else ()
    if operators is not None and not names:
        raise InputError(f"--operators names no operator: '{operators}'")
    where = parallel.plan(workers, cluster)
    check_range("--shots", shots, 1, 10**8)
    check_range("--repeats", repeats, 2, 10_000)
    check_range("--null-copies", null_copies, 1, 10**6)
    check_range("--shots-budget", shots_budget, 1, 10**12)
    if fail_under is not None:
        check_range("--fail-under", fail_under, 0.0, 100.0)
    check_range("--k-max", k_max, 1, 1000)
    check_range("--batch", batch, 1, 10_000)
    check_range("--per-class", test_per_class, 1, 10**7)
    check_range("--reference-per-class", reference_per_class, 1, 10**7)
    for name, value in (("--alpha", alpha), ("--lb", lb), ("--ub", ub), ("--tau-trivial", tau_trivial)):
        check_range(name, value, 0.0, 1.0)
    settings = Settings(
        lb=lb, ub=ub, k_max=k_max, i=batch, alpha=alpha, effect=effect, tau_rse=tau_rse, tau_trivial=tau_trivial
    )
    opts = pipeline.Options(
        suite=suite,
        operators=names,
        strategy=strategy,
        criterion=criterion,
        correction=correction,
        scoring=scoring,
        shots=None if exact else shots,
        repeats=repeats,
        seed=seed,
        settings=settings,
        distribution=distribution,
        scale=scale,
        null_copies=null_copies,
        sample=sample,
        precision=precision,
        sequential=sequential,
        shots_budget=shots_budget,
        power=power,
        margin=margin,
    ).resolved()
    if list_only or list_mutants:
        if opts.strategy == "search":
            raise InputError("--list counts the site strategies (directed, exhaustive); search samples mutants")
        rows: list[dict] | None = [] if list_mutants else None
        counts = sites.count(
            model, registry.operators(opts.suite, list(opts.operators) or None, seed), opts.strategy, rows
        )
        listing = {"strategy": opts.strategy, "counts": counts}
        write_output(json_out, report.to_json(listing if rows is None else dict(listing, mutants=rows)))
        if str(json_out) != "-":
            for row in rows or []:
                out.print(f"{row['id']}  {row['operator']:>14}  {row['site']}", markup=False)
            for name, n in counts.items():
                out.print(f"{name:>14} {n:8d}")
            out.print(f"{'total':>14} {sum(counts.values()):8d}  ({opts.strategy})")
        return
    cells = None
    if opts.strategy == "search":
        for name in opts.operators:
            ops.get(name)  # unknown operators and scopes fail before any data is loaded
        cells = scan_cells(scan, make_scope(model.ir.num_qubits, qubits, depth, gate_types), model)
    else:
        registry.operators(opts.suite, list(opts.operators) or None)
        if scan or qubits or depth or gate_types:
            raise InputError("--scan, --qubits, --depth and --gate-types apply to the search strategy (quanforge)")
    test = list(test or []) or [model_data(model, None, "test", "--test")]
    if opts.strategy == "search":
        reference = model_data(model, reference, "train", "--reference")
    ref = load_data(reference, model, reference_per_class, seed) if opts.strategy == "search" else None
    suites = [load_data(t, model, test_per_class, seed) for t in test]
    cfg = noise_of(noise, target)
    if html_out is not None and out_dir is None:
        out_dir = html_out / "run"
    with contextlib.ExitStack() as stack:
        if stryker_out and out_dir is None:  # the mutants' texts give each Stryker mutant its replacement
            out_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="qmltest-"))) / "run"
        plan = precision_mod.projection(model, suites, opts, backend)
        if plan and not quiet:
            err.print(
                f"{plan['mutants']} mutants x {plan['inputs']} inputs on {plan['backend']}: "
                f"projected {plan['seconds']:.0f} s (at most; prefix reuse and equivalences cut it)",
                markup=False,
            )
        with progress_bar("mutating", None, quiet) as advance:
            result, timing = pipeline.run(
                model, suites, opts, ref, cells, out_dir, force, advance, cfg, command_line(), where, backend
            )
        _write_reports(model, result, out_dir, json_out, csv_out, junit_out, stryker_out, html_out)
    if not quiet and str(json_out) != "-":
        render(result, timing)
    for line in result["warnings"]:
        err.print(f"warning: {line}", markup=False)
    if fail_under is not None:
        gate(result, fail_under / 100.0, fail_under_lower)


def _write_reports(
    model: artifact.Model,
    result: dict,
    out_dir: Path | None,
    json_out: Path | None,
    csv_out: Path | None,
    junit_out: Path | None,
    stryker_out: Path | None,
    html_out: Path | None,
) -> None:
    """Every report the options ask for, from one finished result (and its run folder)."""
    write_output(json_out, report.to_json(result))
    if csv_out:
        write_output(csv_out, report.to_csv([csv_row(m) for m in result["mutants"]]))
    if junit_out:
        from qmltest import junit

        write_output(junit_out, junit.mutation(result))
    key = os.path.relpath(model.source if Path(model.source).suffix == ".qasm" else Path(model.source) / "model.qasm")
    doc = stryker.report(model, key, result, out_dir) if stryker_out or html_out is not None else None
    if stryker_out:
        write_output(stryker_out, report.to_json(doc))
    if html_out is not None:
        from qmltest.html import mutation as html_mutation

        html_mutation.write(result, out_dir, html_out, doc)


def gate(result: dict, bar: float, lower: bool) -> None:
    """Exit 1 when a suite's score (or its 95% lower bound) is below the bar, naming the value."""
    low = []
    for name, s in result["suites"].items():
        interval = s.get("mutation_score_interval")
        value = (interval[0] if interval else 0.0) if lower else (s["mutation_score"] or 0.0)
        if value < bar:
            low.append(f"{name} {'lower bound ' if lower else ''}{100 * value:.2f}%")
    if low:
        err.print(f"mutation score below {100 * bar:g}%: {', '.join(low)}", markup=False)
        raise typer.Exit(EXIT_GATE)


def csv_row(m: dict) -> dict:
    """One flat CSV row per mutant: identity, status, and per suite killed (1/0) and killed classes."""
    row = {k: m[k] for k in ("id", "operator", "cell", "status", "percentage")}
    row["site"] = m["site"]
    row["mean_accuracy"] = m["search"].get("mean_accuracy") if m["search"] else None
    row["kills"] = ";".join(
        f"{s}={'|'.join(map(str, v['killed_classes'])) if v['killed'] or v['killed_classes'] else ''}"
        for s, v in sorted(m["verdicts"].items())
    )
    return row


def render(result: dict, timing: dict) -> None:
    meta = result["meta"]
    pct = lambda v: "-" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    gen = result["generation"]
    if meta["options"]["strategy"] == "search":
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
    out.print(
        f"generation {1e3 * timing['generation_seconds_per_mutant']:.2f} ms per mutant; "
        f"evaluation {1e3 * timing['eval_seconds_per_mutant']:.2f} ms per scored mutant",
        markup=False,
    )


@handle_errors
def shots(
    epsilon: float = typer.Option(0.05, help="Error bound on each output's estimate."),
    confidence: float = typer.Option(0.95, help="Confidence level delta."),
    outputs: int = typer.Option(2, help="Number of output qubits q."),
) -> None:
    """Shots per prediction from Hoeffding's inequality with a union bound: s >= ln(2q/(1-delta)) / (2 eps^2)."""
    out.print(str(hoeffding_shots(epsilon, confidence, outputs)))


__all__ = ["mutate", "shots"]
