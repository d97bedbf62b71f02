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


def bars(folder: Path, stem: str, groups: dict[str, dict[str, float | None]], title: str, ylabel: str) -> str:
    """Grouped bars: one group per outer key (e.g. suite), one bar per inner key (e.g. operator)."""
    plt = _plt()
    outer = list(groups)
    inner = sorted({k for g in groups.values() for k in g})
    fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(outer) * max(len(inner), 1) + 2), 3.2))
    width = 0.8 / max(len(inner), 1)
    for j, name in enumerate(inner):
        vals = [groups[o].get(name) for o in outer]
        xs = np.arange(len(outer)) + j * width - 0.4 + width / 2
        ax.bar(xs, [np.nan if v is None else 100 * v for v in vals], width, label=name)
    ax.set_xticks(np.arange(len(outer)), outer, rotation=20, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(inner) > 1:
        ax.legend(fontsize=7, ncols=min(len(inner), 5))
    return _save(fig, folder, stem)


def heatmap(
    folder: Path, stem: str, matrix: np.ndarray, rows: list[str], cols: list[str], title: str, label: str
) -> str:
    """A matrix as colours (NaN left blank), rows and columns labelled when there are few."""
    plt = _plt()
    m = np.asarray(matrix, dtype=float)
    fig, ax = plt.subplots(figsize=(min(12.0, 2 + 0.35 * max(len(cols), 1)), min(10.0, 1.5 + 0.3 * max(len(rows), 1))))
    image = ax.imshow(np.ma.masked_invalid(m), aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
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
    ax.set_ylim(0, 100)
    ax.set_title(title)
    if series:
        ax.legend(fontsize=7)
    return _save(fig, folder, stem)
