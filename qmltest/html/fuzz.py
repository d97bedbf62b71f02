"""The fuzzing report as HTML: TSR and coverage over iterations per guide, and failure images beside
their seeds (the PNGs the run folder holds); built from a fuzz run folder's `report.json`."""

from __future__ import annotations

import shutil
from pathlib import Path

from qmltest.html import page, plots

MAX_IMAGES = 48


def write(result: dict, run_dir: Path | None, folder: Path) -> Path:
    folder = Path(folder)
    guides = result["guides"]
    sections: list[tuple[str, str]] = []
    rows = [
        [
            g,
            s["iterations"],
            s["failures"],
            page.pct(s["tsr"]),
            s["enqueued"],
            s["stop"],
            *(page.pct(s["final_coverage"][c]) for c in ("ksc", "scc", "tsc")),
        ]
        for g, s in guides.items()
    ]
    html = page.table(["guide", "mutants", "failures", "TSR", "enqueued", "stop", "KSC", "SCC", "TSC"], rows)
    html += page.image(
        plots.bars(
            folder,
            "tsr-per-guide",
            {g: {"TSR": s["tsr"]} for g, s in guides.items()},
            "test success rate per guide",
            "%",
        ),
        "TSR",
    )
    sections.append(("Guides", html))
    traces = result.get("coverage_traces", {})
    for crit in ("ksc", "scc", "tsc"):
        series = {g: [row[crit] for row in trace] for g, trace in traces.items() if trace}
        if series:
            src = plots.lines(
                folder,
                f"{crit}-over-iterations",
                series,
                f"{crit.upper()} over iterations",
                "mutants generated",
                "coverage %",
            )
            sections.append((f"{crit.upper()} over iterations", page.image(src, crit)))
    if run_dir is not None:
        html = ""
        for g in guides:
            pngs = sorted((run_dir / f"{g}-failures").glob("*.png")) if (run_dir / f"{g}-failures").is_dir() else []
            if not pngs:
                continue
            target = folder / f"{g}-failures"
            target.mkdir(parents=True, exist_ok=True)
            html += f"<h3>{page.escape(g)}: {len(pngs)} failure image(s) (seed | failing mutant)</h3><p>"
            for p in pngs[:MAX_IMAGES]:
                shutil.copyfile(p, target / p.name)
                src = f"{page.escape(g)}-failures/{page.escape(p.name)}"
                html += f'<img src="{src}" alt="{page.escape(p.name)}" width="112"> '
            html += "</p>"
        if html:
            sections.append(("Failures beside their seeds", html))
    cfg = result.get("config", {})
    line = f"budget {cfg.get('budget')} per guide; {cfg.get('seeds')} seeds; k {cfg.get('k')}; seed {cfg.get('seed')}"
    return page.write(folder, "qmltest fuzzing report", line, sections)
