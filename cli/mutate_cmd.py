"""`qmltest mutate` (QuanForge suite) and `qmltest shots` (Hoeffding bound, QuanForge Sec. 4.1)."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import EXIT_GATE, err, handle_errors, out, progress_bar, write_output
from rich.table import Table

from qmltest import artifact, report
from qmltest.data import datasets
from qmltest.errors import InputError
from qmltest.evaluate import label_indices
from qmltest.mutation import operators as ops
from qmltest.mutation import qml_run, stryker
from qmltest.mutation.evaluate import Data
from qmltest.mutation.gates import CATEGORIES, categories_of
from qmltest.mutation.generate import Settings
from qmltest.mutation.run import Cell, run
from qmltest.mutation.scope import Scope, make_scope, parse_range
from qmltest.mutation.stats import hoeffding_shots
from qmltest.noise.config import load as load_noise


def load_data(spec: str, model: artifact.Model, per_class: int | None, seed: int) -> Data:
    """'mnist:train' (builtin and split) or a file; labels mapped to the model's classes."""
    source, split = datasets.parse_spec(spec)
    x, y = datasets.select(source, split, model.classes, per_class, seed)
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
def mutate(
    model_path: Path = typer.Argument(..., help="Model folder or .qasm file."),
    suite: str = typer.Option("quanforge", help="Operator suite: quanforge, qml or classic."),
    operators: str = typer.Option(None, help="Comma-separated operators (default: the whole suite)."),
    strategy: str = typer.Option("directed", help="qml/classic: directed (non-redundant) or exhaustive."),
    list_only: bool = typer.Option(False, "--list", help="qml/classic: count mutants per operator, run nothing."),
    killing: str = typer.Option("majority", help="qml/classic: majority (any input mispredicted) or statistical."),
    reference: str = typer.Option("mnist:train", help="Reference data for generation (Sec. 3.1), name:split."),
    reference_per_class: int = typer.Option(100, help="Reference inputs per class."),
    test: list[str] = typer.Option(None, help="Test suite(s) to score: name:split or a .npz file."),
    test_per_class: int = typer.Option(None, help="Inputs per class of each --test (default: all)."),
    qubits: str = typer.Option(None, help="Qubit range, e.g. 0-7 (default: all)."),
    depth: str = typer.Option(None, help="Depth range in percent, e.g. 0-50%."),
    gate_types: str = typer.Option(None, help="Table 1 categories, e.g. rotation,controlled."),
    scan: str = typer.Option(None, help="depth=0-25%,25-50%,...  |  gate-type  |  qubit"),
    shots: int = typer.Option(1000, help="Shots per prediction (Hoeffding: `qmltest shots`)."),
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
    seed: int = typer.Option(0, help="Root seed of every random choice."),
    noise: Path = typer.Option(None, help="Noise config TOML, simulated on Aer (slow: density matrices)."),
    out_dir: Path = typer.Option(None, "--out", help="Run folder (resumable)."),
    force: bool = typer.Option(False, "--force", help="Ignore finished mutants in --out and start over."),
    json_out: Path = typer.Option(None, "--json", help="Write the JSON report ('-' for stdout)."),
    csv_out: Path = typer.Option(None, "--csv", help="Write one row per mutant."),
    stryker_out: Path = typer.Option(None, "--stryker", help="qml/classic: Stryker mutation-testing-report JSON."),
    fail_under: float = typer.Option(None, help="Exit 1 when a suite's mutation score is below this (0-1)."),
    manifest: Path = typer.Option(None, help="Manifest for a bare .qasm file."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """QuanForge: effective mutants (Algorithm 1) scored by statistical killing (Eq. 2, 4).
    qml / classic: every (directed) mutation site, killed when a correctly classified input flips."""
    model = artifact.load(model_path, manifest)
    names = [n.strip() for n in operators.split(",") if n.strip()] if operators else None
    if suite in ("qml", "classic"):
        run_sites(
            model,
            suite,
            names,
            strategy,
            list_only,
            killing,
            test,
            test_per_class,
            shots,
            repeats,
            seed,
            out_dir,
            force,
            json_out,
            csv_out,
            fail_under,
            quiet,
            stryker_out,
        )
        return
    if suite != "quanforge":
        raise InputError(f"unknown operator suite '{suite}' (quanforge, qml, classic)")
    op_list = [ops.get(n, distribution=distribution, scale=scale) for n in names or ops.QUANFORGE]
    base = make_scope(model.ir.num_qubits, qubits, depth, gate_types)
    cells = scan_cells(scan, base, model)
    ref = load_data(reference, model, reference_per_class, seed)
    suites = [load_data(t, model, test_per_class, seed) for t in (test or [])]
    settings = Settings(
        lb=lb, ub=ub, k_max=k_max, i=batch, alpha=alpha, effect=effect, tau_rse=tau_rse, tau_trivial=tau_trivial
    )
    with progress_bar("mutating", len(cells) * len(op_list), quiet) as advance:
        started = [False]

        def step(label: str) -> None:
            if started[0]:
                advance(1)
            started[0] = True

        cfg = load_noise(noise) if noise else None
        result = run(model, ref, suites, op_list, cells, settings, repeats, shots, seed, out_dir, force, step, cfg)
    write_output(json_out, report.to_json(result))
    if csv_out:
        rows = [
            {k: (";".join(v) if k == "notes" else v) for k, v in mutant_row_flat(r).items()} for r in result["mutants"]
        ]
        write_output(csv_out, report.to_csv(rows))
    if not quiet and str(json_out) != "-":
        render(result)
    low = [n for n, s in result["suites"].items() if fail_under is not None and (s["mutation_score"] or 0) < fail_under]
    if low:
        err.print(f"mutation score below {fail_under}: {', '.join(low)}", markup=False)
        raise typer.Exit(EXIT_GATE)


def run_sites(
    model,
    suite,
    names,
    strategy,
    list_only,
    killing,
    test,
    test_per_class,
    shots,
    repeats,
    seed,
    out_dir,
    force,
    json_out,
    csv_out,
    fail_under,
    quiet,
    stryker_out,
) -> None:
    """The QML / classic suites: enumerate sites, build mutants, kill on the correctly classified inputs."""
    op_list = qml_run.operators(suite, names)
    if list_only:
        counts = qml_run.count(model, op_list, strategy)
        write_output(json_out, report.to_json({"strategy": strategy, "counts": counts}))
        if str(json_out) != "-":
            for name, n in counts.items():
                out.print(f"{name:>14} {n:8d}")
            out.print(f"{'total':>14} {sum(counts.values()):8d}  ({strategy})")
        return
    if not test:
        raise InputError("give the test data: --test name:split or a file")
    data = load_data(test[0], model, test_per_class, seed)
    total = sum(len(op.sites(model, strategy == "directed")) for op in op_list)
    with progress_bar("mutants", total, quiet) as advance:
        result = qml_run.run(model, data, op_list, strategy, shots, seed, killing, repeats, out_dir, force, advance)
    timing = result.pop("timing")
    write_output(json_out, report.to_json(result))
    if csv_out:
        rows = [{k: v for k, v in m.items() if k != "site_args"} for m in result["mutants"]]
        write_output(csv_out, report.to_csv(rows))
    if stryker_out:
        sites = {m["id"]: tuple(m["site_args"]) for m in result["mutants"]}
        write_output(stryker_out, report.to_json(stryker.report(model, str(model.source), result["mutants"], sites)))
    if out_dir:
        report.write_text_atomic(out_dir / "report.json", report.to_json(result))
    if not quiet and str(json_out) != "-":
        t = Table(
            title=f"{suite} mutants ({strategy}, killing {killing}) on {result['test_suite']['correctly_classified']} "
            "correctly classified inputs"
        )
        for col in ("operator", "killed/total", "equivalent", "incompetent", "score", "eval ms/mutant"):
            t.add_column(col)
        for name, row in result["operators"].items():
            score = "-" if row["mutation_score"] is None else f"{100 * row['mutation_score']:.1f}%"
            secs = timing["eval_seconds_per_mutant"].get(name)
            per = "-" if secs is None else f"{1e3 * secs:.2f}"
            t.add_row(
                name, f"{row['killed']}/{row['total']}", str(row["equivalent"]), str(row["incompetent"]), score, per
            )
        out.print(t)
        ms = result["mutation_score"]
        out.print(
            f"mutation score {'-' if ms is None else f'{100 * ms:.2f}%'}; generation "
            f"{1e3 * timing['generation_seconds_per_mutant']:.2f} ms per mutant"
        )
    if fail_under is not None and (result["mutation_score"] or 0) < fail_under:
        err.print(f"mutation score below {fail_under}", markup=False)
        raise typer.Exit(EXIT_GATE)


def mutant_row_flat(row: dict) -> dict:
    flat = {k: v for k, v in row.items() if k != "kills"}
    flat["kills"] = ";".join(f"{s}={'|'.join(map(str, c))}" for s, c in sorted(row["kills"].items()))
    return flat


def render(result: dict) -> None:
    t = Table(
        title=f"QuanForge mutants (reference {result['reference']['name']}, "
        f"original accuracy {result['reference']['original_mean_accuracy']:.4f})"
    )
    for col in ("cell", "operator", "generated", "equivalent", "effective", "KR", "NR", "mean acc"):
        t.add_column(col, justify="right" if col not in ("cell", "operator") else "left")
    pct = lambda v: "-" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    for cell, rows in result["cells"].items():
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
    if result["suites"]:
        st = Table(title="test suites (class-level mutation score, Eq. 4)")
        for col in ("suite", "inputs", "score", "null-control kill rate"):
            st.add_column(col)
        for name, s in result["suites"].items():
            st.add_row(name, str(s["inputs"]), pct(s["mutation_score"]), pct(s["null_control_kill_rate"]))
        out.print(st)


@handle_errors
def shots(
    epsilon: float = typer.Option(0.05, help="Error bound on each output's estimate."),
    confidence: float = typer.Option(0.95, help="Confidence level delta."),
    outputs: int = typer.Option(2, help="Number of output qubits q."),
) -> None:
    """Shots per prediction from Hoeffding's inequality with a union bound: s >= ln(2q/(1-delta)) / (2 eps^2)."""
    out.print(str(hoeffding_shots(epsilon, confidence, outputs)))


__all__ = ["mutate", "shots"]
