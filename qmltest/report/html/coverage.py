"""The coverage report as HTML: totals per part, growth per input, covered KSC cells per basis state
(a heatmap) and the SCC corners / TSC states; built from a `qmltest.coverage` JSON report."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qmltest.report.html import page, plots
from qmltest.util import files

MAX_STATES = 256


def write(result: dict, folder: Path) -> Path:
    folder = files.folder(folder, "--html")
    sections: list[tuple[str, str]] = []
    crit = list(result["totals"])
    rows = [
        [
            p["part"],
            p["inputs"],
            *(page.pct(p["cumulative"][c]) for c in crit),
            *(page.pct(p["alone"][c]) for c in crit),
        ]
        for p in result["parts"]
    ]
    html = page.table(["part", "inputs", *(f"{c} cumulative" for c in crit), *(f"{c} alone" for c in crit)], rows)
    parts = {p["part"]: {c: p["cumulative"][c] for c in crit} for p in result["parts"]}
    html += page.image(
        plots.bars(folder, "coverage-per-part", parts, "coverage after each part (cumulative)", "%"), "per part"
    )
    sections.append(("Coverage per part", html))
    if result.get("per_input"):
        src = plots.lines(folder, "coverage-growth", result["per_input"], "coverage growth", "inputs", "coverage %")
        sections.append(("Growth per input", page.image(src, "coverage growth")))
    states = result["per_state"][:MAX_STATES]
    k = int(result["params"]["k"])
    grid = np.zeros((len(states), k))
    for i, s in enumerate(states):
        grid[i, s["cells_covered"]] = 1.0
    html = page.image(
        plots.heatmap(
            folder,
            "ksc-cells",
            grid,
            [s["state"] for s in states],
            [str(c) for c in range(k)],
            f"KSC: covered cells of each basis state (k = {k})",
            "covered",
        ),
        "KSC cells",
    )
    if len(result["per_state"]) > MAX_STATES:
        html += f"<p>First {MAX_STATES} of {len(result['per_state'])} basis states shown.</p>"
    html += page.table(
        ["state", "lower", "upper", "cells covered", "lower corner", "upper corner", "top-k"],
        [
            [
                s["state"],
                s["lower"],
                s["upper"],
                len(s["cells_covered"]),
                s["lower_corner"],
                s["upper_corner"],
                s["top_k"],
            ]
            for s in states
        ],
    )
    sections.append(("Per basis state", html))
    meta = result.get("meta", {})
    params = result["params"]
    line = (
        f"model {meta.get('model')}; profile {meta.get('profile')}; {result['inputs']} inputs; "
        f"k {k}, top-k {params['top_k']}, bounds {params['bounds']}"
    )
    return page.write(folder, "qmltest coverage report", line, sections)
