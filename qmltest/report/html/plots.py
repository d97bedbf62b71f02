"""Matplotlib figures for the HTML reports, written as PNG (for the page) and SVG (for papers).

Rendering is deterministic (Agg backend, fixed SVG hash salt, no dates in the metadata), so a
seeded run gives byte-identical plot files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "qmltest"
    return plt


def _save(fig, folder: Path, stem: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(folder / f"{stem}.png", dpi=110, metadata={"Software": None})
    fig.savefig(folder / f"{stem}.svg", metadata={"Date": None, "Creator": None})
    _plt().close(fig)
    return f"{stem}.png"


def _top(values: list[float]) -> float:
    """The y-axis top for percentages: 100 when the data come near it, else a little above the
    largest value (a TSR of 0.2-5.5% on a 0-100 axis was a row of slivers)."""
    finite = [v for v in values if v is not None and np.isfinite(v)]
    peak = max(finite, default=0.0)
    return 100.0 if peak > 60 else float(max(1.0, np.ceil(peak * 1.2)))


def bars(
    folder: Path,
    stem: str,
    groups: dict[str, dict[str, float | None]],
    title: str,
    ylabel: str,
    intervals: dict[str, dict[str, list[float] | None]] | None = None,
) -> str:
    """Grouped bars: one group per outer key (e.g. suite), one bar per inner key (e.g. operator);
    `intervals` (same keys, [low, high] fractions) draws each bar's 95% interval as an error bar."""
    plt = _plt()
    outer = list(groups)
    inner = sorted({k for g in groups.values() for k in g})
    fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(outer) * max(len(inner), 1) + 2), 3.2))
    width = 0.8 / max(len(inner), 1)
    for j, name in enumerate(inner):
        vals = [groups[o].get(name) for o in outer]
        xs = np.arange(len(outer)) + j * width - 0.4 + width / 2
        heights = [np.nan if v is None else 100 * v for v in vals]
        spans = [(intervals or {}).get(o, {}).get(name) for o in outer]
        yerr = None
        if any(sp is not None for sp in spans):
            yerr = np.array(
                [
                    [0.0, 0.0] if sp is None or np.isnan(h) else [h - 100 * sp[0], 100 * sp[1] - h]
                    for sp, h in zip(spans, heights)
                ]
            ).T
        drawn = ax.bar(xs, heights, width, label=name, yerr=yerr, capsize=3 if yerr is not None else 0)
        ax.bar_label(drawn, labels=["" if np.isnan(h) else f"{h:.1f}" for h in heights], fontsize=7, padding=1)
    ax.set_xticks(np.arange(len(outer)), outer, rotation=20, ha="right")
    tops = [100 * v for g in groups.values() for v in g.values() if v is not None]
    tops += [100 * sp[1] for g in (intervals or {}).values() for sp in g.values() if sp is not None]
    ax.set_ylim(0, _top(tops) * 1.08)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(inner) > 1:
        ax.legend(fontsize=7, ncols=min(len(inner), 5))
    return _save(fig, folder, stem)


def heatmap(
    folder: Path,
    stem: str,
    matrix: np.ndarray,
    rows: list[str],
    cols: list[str],
    title: str,
    label: str,
    marks: np.ndarray | None = None,
    mark_label: str = "",
) -> str:
    """A matrix as colours; NaN cells hatched grey and named in the legend ('no mutants');
    `marks` (a boolean matrix) draws a red x on cells, named `mark_label` in the legend."""
    plt = _plt()
    from matplotlib.patches import Patch

    m = np.asarray(matrix, dtype=float)
    fig, ax = plt.subplots(figsize=(min(12.0, 3 + 0.35 * max(len(cols), 1)), min(10.0, 1.8 + 0.3 * max(len(rows), 1))))
    ax.set_facecolor("#dddddd")
    image = ax.imshow(np.ma.masked_invalid(m), aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
    handles = []
    if np.isnan(m).any():
        handles.append(Patch(facecolor="#dddddd", edgecolor="#999999", label="no mutants"))
    if marks is not None and np.asarray(marks).any():
        ys, xs = np.nonzero(np.asarray(marks))
        ax.scatter(xs, ys, marker="x", color="red", s=28, linewidths=1.5, label=mark_label)
        handles.append(ax.collections[-1])
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.25, 1.0), frameon=False)
    if len(cols) <= 40:
        ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right", fontsize=7)
    if len(rows) <= 40:
        ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label=label)
    return _save(fig, folder, stem)


def lines(folder: Path, stem: str, series: dict[str, list[float]], title: str, xlabel: str, ylabel: str) -> str:
    """Curves over a common x (inputs, iterations), one per series."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for name, ys in series.items():
        ax.plot(np.arange(1, len(ys) + 1), [100 * y for y in ys], label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, _top([100 * y for ys in series.values() for y in ys]))
    ax.set_title(title)
    if series:
        ax.legend(fontsize=7)
    return _save(fig, folder, stem)
