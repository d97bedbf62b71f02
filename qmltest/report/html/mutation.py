"""The mutation report as HTML: scores per suite and operator, sensitivity over the circuit, the kill
matrix and every surviving mutant's QASM diff; built from a `qmltest.mutation/3` report and its run
folder (for the QASM texts), never from live objects."""

from __future__ import annotations

import difflib
from html import escape
from pathlib import Path

import numpy as np

from qmltest.report.html import page, plots
from qmltest.util import files, intervals

MAX_DIFFS = 200


def moments(gates: list[list]) -> list[int]:
    """ASAP time step of every gate of the circuit table [[name, qubits], ...]."""
    free: dict[int, int] = {}
    out = []
    for _, qubits in gates:
        t = max((free.get(q, 0) for q in qubits), default=0)
        out.append(t)
        for q in qubits:
            free[q] = t + 1
    return out


def circuit_map(result: dict, suite: str, bins: int = 12) -> tuple[np.ndarray, list[str], list[str], np.ndarray]:
    """Kill rate of the mutants touching each (qubit, depth bin) of the original circuit, and
    where a surviving mutant touches it."""
    gates = result["circuit"]["gates"]
    n = result["circuit"]["num_qubits"]
    t = moments(gates)
    depth = max(t, default=0) + 1
    bins = max(1, min(bins, depth))
    killed, total = np.zeros((n, bins)), np.zeros((n, bins))
    survived = np.zeros((n, bins), dtype=bool)
    for m in result["mutants"]:
        v = m["verdicts"].get(suite)
        if v is None:
            continue
        cells = {(q, min(bins - 1, t[g] * bins // depth)) for g in m["touched"] if g < len(gates) for q in gates[g][1]}
        for q, b in cells:
            total[q, b] += 1
            killed[q, b] += v["killed"]
            survived[q, b] |= m["status"] == "survived"
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(total > 0, killed / np.where(total > 0, total, 1), np.nan)
    cols = [f"{round(100 * b / bins)}-{round(100 * (b + 1) / bins)}%" for b in range(bins)]
    return rate, [f"q{q}" for q in range(n)], cols, survived


def qasm_diff(run_dir: Path | None, mid: str) -> list[str] | None:
    if run_dir is None:
        return None
    a, b = run_dir / "original" / "model.qasm", run_dir / "mutants" / mid / "model.qasm"
    if not (a.exists() and b.exists()):
        return None
    return list(
        difflib.unified_diff(a.read_text().splitlines(), b.read_text().splitlines(), "original", mid, n=1, lineterm="")
    )


def write(result: dict, run_dir: Path | None, folder: Path, stryker_doc: dict | None = None) -> Path:
    """Write folder/index.html and its plots (PNG + SVG); with the Stryker report, the official
    viewer on stryker.html, linked and embedded below the summary."""
    folder = files.folder(folder, "--html")
    meta = result["meta"]
    opts = meta["options"]
    sections: list[tuple[str, str]] = [("Test suites", _suites(result, folder))]
    if stryker_doc is not None:
        sections.append(_stryker(folder, stryker_doc))
    counts = result["operators"]
    statuses = sorted({k for c in counts.values() for k in c})
    sections.append(
        (
            "Mutants per operator",
            page.table(["operator", *statuses], [[op, *(c.get(k, 0) for k in statuses)] for op, c in counts.items()]),
        )
    )
    for part in (_cells(result, folder), _circuit(result, folder), _kill_matrix(result, folder)):
        if part is not None:
            sections.append(part)
    sections.append(("Surviving mutants", _survivors(result, run_dir)))
    line = (
        f"model {meta['model']} ({meta['model_sha256'][:12]}); {opts['suite']} operators, "
        f"{opts['strategy']} generation, {meta['criterion']} killing, correction {meta['correction']}, "
        f"{meta['scoring']} scoring; seed {meta['seed']}; qmltest {meta['versions']['qmltest']}"
    )
    return page.write(folder, "qmltest mutation report", line, sections)


def _suites(result: dict, folder: Path) -> str:
    """Each suite's score and null control with their intervals, and the score plots."""
    meta = result["meta"]
    suites = result["suites"]
    rows = [
        [
            n,
            s["inputs"],
            f"{s['original_mse']:.4g}" if "original_mse" in s else s["correctly_classified"],
            s["scored_mutants"],
            s["killed"],
            s["undecided"],
            intervals.fmt(s["mutation_score"], s["mutation_score_interval"], percent=True),
            intervals.fmt(s["null_control"]["rate"], s["null_control"]["interval"], percent=True)
            + f" of {s['null_control']['copies']} copies",
        ]
        for n, s in suites.items()
    ]
    summary = page.table(
        [
            "suite",
            "inputs",
            "original MSE" if meta.get("task") == "regression" else "correct",
            "scored mutants",
            "killed",
            "undecided",
            f"{meta['scoring']} score [95% interval]",
            f"null control ({meta['criterion']}) [95% interval]",
        ],
        rows,
    )
    headline = "".join(
        f'<p style="font-size:1.4em;margin:0.3em 0"><b>{escape(n)}</b>: {meta["scoring"]} mutation score '
        f"<b>{escape(intervals.fmt(s['mutation_score'], s['mutation_score_interval'], percent=True))}</b>"
        f" &middot; identical copies killed "
        f"{escape(intervals.fmt(s['null_control']['rate'], s['null_control']['interval'], percent=True))}"
        + (
            " &middot; <b style='color:#b00'>above alpha: the score measures shot noise</b>"
            if s["null_control"]["exceeds_alpha"]
            else ""
        )
        + "</p>"
        for n, s in suites.items()
    )
    summary = headline + summary
    if suites:
        by_suite = {n: {"score": s["mutation_score"]} for n, s in suites.items()}
        summary += page.image(
            plots.bars(folder, "score-per-suite", by_suite, f"{meta['scoring']} mutation score", "%"), "score per suite"
        )
        ops = sorted({op for s in suites.values() for op in s["per_operator"]})
        per_op = {  # operators on the axis (named under their bars), one bar per suite
            op: {n: s["per_operator"][op]["mutation_score"] for n, s in suites.items() if op in s["per_operator"]}
            for op in ops
        }
        summary += page.image(
            plots.bars(folder, "score-per-operator", per_op, "mutation score per operator", "%"), "score per operator"
        )
    return summary


def _stryker(folder: Path, stryker_doc: dict) -> tuple[str, str]:
    """The official Stryker viewer on stryker.html, embedded."""
    from qmltest.report.html import viewer

    viewer.write(folder, stryker_doc, "qmltest mutants in the source")
    return (
        "Mutants in the source (Stryker viewer)",
        '<p><a href="stryker.html">Open the source view</a>: every mutant inline in the model\'s QASM3 '
        "(preprocessing mutants in model.json), its replacement as a diff, its status and the suites "
        'that killed it.</p><iframe src="stryker.html" title="Stryker viewer" '
        'style="width:100%;height:820px;border:1px solid #ccc"></iframe>',
    )


def _cells(result: dict, folder: Path) -> tuple[str, str] | None:
    """A search run's KR / NR per cell and operator (QuanForge RQ2); None for other runs."""
    gen_cells = result["generation"].get("cells", {})
    if "reference" in result["generation"] and gen_cells:  # a search run's KR / NR tables
        cells, ops = list(gen_cells), sorted({op for c in gen_cells.values() for op in c})
        html = ""
        for key in ("KR", "NR"):
            m = np.array(
                [
                    [
                        gen_cells[c].get(op, {}).get(key) if gen_cells[c].get(op, {}).get(key) is not None else np.nan
                        for op in ops
                    ]
                    for c in cells
                ],
                dtype=float,
            )
            html += page.image(
                plots.heatmap(folder, f"{key.lower()}-cells", m, cells, ops, f"{key} per cell and operator", key), key
            )
        return ("Sensitivity by cell (QuanForge RQ2)", html)
    return None


def _circuit(result: dict, folder: Path) -> tuple[str, str] | None:
    """Per suite, the kill rate of the mutants touching each qubit and depth."""
    suites = result["suites"]
    html = ""
    for i, name in enumerate(suites):
        rate, rws, cls, survivors_at = circuit_map(result, name)
        html += page.image(
            plots.heatmap(
                folder,
                f"circuit-kill-rate-{i}",
                rate,
                rws,
                cls,
                f"{name}: kill rate of mutants touching each qubit and depth",
                "killed fraction",
                survivors_at,
                "a surviving mutant",
            ),
            "circuit map",
        )
    return ("Kill rate over the circuit", html) if html else None


def _kill_matrix(result: dict, folder: Path) -> tuple[str, str] | None:
    """Suite x mutant kills, as a plot and a table."""
    km = result["kill_matrix"]
    if km["mutants"]:
        matrix = np.array(km["rows"], dtype=float).T
        html = page.image(
            plots.heatmap(
                folder, "kill-matrix", matrix, km["suites"], km["mutants"], "kill matrix (suite x mutant)", "killed"
            ),
            "kill matrix",
        )
        html += (
            "<details><summary>kill matrix as a table</summary>"
            + page.table(["mutant", *km["suites"]], [[mid, *row] for mid, row in zip(km["mutants"], km["rows"])])
            + "</details>"
        )
        return ("Kill matrix", html)
    return None


def _survivors(result: dict, run_dir: Path | None) -> str:
    """The surviving mutants, each with its QASM diff (the first MAX_DIFFS)."""
    survivors = [m for m in result["mutants"] if m["status"] == "survived"]
    html = (
        f"<p>{len(survivors)} surviving mutant(s)"
        + (f"; the first {MAX_DIFFS} shown" if len(survivors) > MAX_DIFFS else "")
        + ".</p>"
    )
    for m in survivors[:MAX_DIFFS]:
        diff = qasm_diff(run_dir, m["id"])
        body = (
            page.diff_block(diff) if diff else "<p>(no QASM diff: the mutant changes the preprocessing or readout)</p>"
        )
        title = page.escape(f"{m['id']} {m['operator']} {m['site'][:120]}")
        html += f"<details><summary>{title}</summary>{body}</details>"
    return html
