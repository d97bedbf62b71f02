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
            "test success rate per guide (95% intervals)",
            "%",
            {g: {"TSR": s.get("tsr_interval")} for g, s in guides.items()},
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
        table = _failing_inputs(run_dir, list(guides))
        if table:
            sections.append(("Failing inputs", table))
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


SHOWN_INPUTS = 20
"""Failing inputs listed per guide (the run folder's NPZ holds all of them)."""


def _failing_inputs(run_dir: Path, guides: list[str]) -> str:
    """Per guide, its first failing inputs as rows: the seed's features, the mutated input's, the
    true and the predicted class (any data; image data also gets its pictures below)."""
    import numpy as np

    html = ""
    for g in guides:
        npz = run_dir / f"{g}-failures.npz"
        if not npz.is_file():
            continue
        labels = _labels(npz)
        with np.load(npz, allow_pickle=False) as z:
            if "x" not in z.files or not len(z["x"]):
                continue
            x, seed = z["x"], z["seed_x"] if "seed_x" in z.files else z["x"] * np.nan
        wide = x.shape[1] > 8  # an image: its pictures say more than 784 numbers
        shown = range(min(len(x), SHOWN_INPUTS))
        rows = [[i, labels.get(i, ""), _vector(seed[i], wide), _vector(x[i], wide)] for i in shown]
        more = f" (first {SHOWN_INPUTS} of {len(x)})" if len(x) > SHOWN_INPUTS else ""
        html += f"<h3>{page.escape(g)}: {len(x)} failing input(s){more}</h3>"
        html += page.table(["#", "classes", "seed", "failing input"], rows)
    return html


def _vector(v, wide: bool) -> str:  # noqa: ANN001 - a numpy row
    """A feature vector to 4 significant digits; a wide one (an image) as its size."""
    if wide:
        return f"{len(v)} values"
    return "[" + ", ".join(f"{float(t):.4g}" for t in v) + "]"


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
