"""The fuzzing report as HTML: TSR and coverage over iterations per guide, and failure images beside
their seeds (the PNGs the run folder holds); built from a fuzz run folder's `report.json`."""

from __future__ import annotations

import shutil
from pathlib import Path

from qmltest.coverage.criteria import names
from qmltest.report.html import page, plots
from qmltest.util import files

MAX_IMAGES = 48


def write(result: dict, run_dir: Path | None, folder: Path) -> Path:
    folder = files.folder(folder, "--html")
    guides = result["guides"]
    measured = {c for s in guides.values() for c in s["final_coverage"]}
    crits = [c for c in names() if c in measured]  # what the report holds (it is rebuilt from JSON)
    sections: list[tuple[str, str]] = []
    rows = [
        [
            g,
            s["iterations"],
            s["failures"],
            page.pct(s["tsr"]),
            s["enqueued"],
            s["stop"],
            *(page.pct(s["final_coverage"][c]) for c in crits),
        ]
        for g, s in guides.items()
    ]
    html = page.table(["guide", "mutants", "failures", "TSR", "enqueued", "stop", *(c.upper() for c in crits)], rows)
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
    for crit in crits:
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
            labels = _labels(run_dir / f"{g}-failures.npz")
            html += f"<h3>{page.escape(g)}: {len(pngs)} failure image(s) (seed | failing mutant)</h3><div>"
            for p in pngs[:MAX_IMAGES]:
                shutil.copyfile(p, target / p.name)
                src = f"{page.escape(g)}-failures/{page.escape(p.name)}"
                caption = labels.get(int(p.stem), "") if p.stem.isdigit() else ""
                html += (
                    f'<figure style="display:inline-block;margin:4px"><img src="{src}" alt="{page.escape(p.name)}" '
                    f'width="112"><figcaption style="font-size:0.8em">{page.escape(caption)}</figcaption></figure>'
                )
            html += "</div>"
        if html:
            sections.append(("Failures beside their seeds", html))
    cfg = result.get("config", {})
    line = f"budget {cfg.get('budget')} per guide; {cfg.get('seeds')} seeds; k {cfg.get('k')}; seed {cfg.get('seed')}"
    return page.write(folder, "qmltest fuzzing report", line, sections)


def _labels(npz: Path) -> dict[int, str]:
    """'true 1, predicted 0 (seed 18)' per failure index, from the run folder's failures NPZ."""
    import numpy as np

    if not npz.is_file():
        return {}
    with np.load(npz, allow_pickle=False) as z:
        if not {"y", "predicted"} <= set(z.files):
            return {}
        origin = z["origin"] if "origin" in z.files else [None] * len(z["y"])
        names = [str(c) for c in z["classes"]] if "classes" in z.files else None

        def name(c: object) -> str:  # the class's name where the run folder has them
            return names[int(c)] if names is not None and 0 <= int(c) < len(names) else str(int(c))

        return {
            i: f"true {name(t)}, predicted {name(p)}" + ("" if o is None else f" (seed {int(o)})")
            for i, (t, p, o) in enumerate(zip(z["y"], z["predicted"], origin))
        }
