"""HTML scaffolding shared by the reports: one page, inline CSS, tables, images and <pre> blocks."""

from __future__ import annotations

from html import escape
from pathlib import Path

from qmltest.util import writers as report

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
.meta { color: #666; font-size: 0.85em; } img { max-width: 100%; }
.add { color: #080; } .del { color: #b00; } details { margin: 0.3em 0; }
"""


def table(header: list[str], rows: list[list[object]]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(fmt(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def fmt(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def image(src: str, alt: str) -> str:
    stem = src.rsplit(".", 1)[0]
    return f'<p><img src="{escape(src)}" alt="{escape(alt)}"><br><a href="{escape(stem)}.svg">SVG</a></p>'


def diff_block(lines: list[str]) -> str:
    out = []
    for line in lines:
        cls = (
            "add"
            if line.startswith("+") and not line.startswith("+++")
            else ("del" if line.startswith("-") and not line.startswith("---") else "")
        )
        text = escape(line.rstrip("\n"))
        out.append(f'<span class="{cls}">{text}</span>' if cls else text)
    return "<pre>" + "\n".join(out) + "</pre>"


def write(folder: Path, title: str, meta_line: str, sections: list[tuple[str, str]]) -> Path:
    """index.html in `folder` with a heading, a meta line and (heading, html) sections."""
    body = "".join(f"<h2>{escape(h)}</h2>\n{html}\n" for h, html in sections)
    doc = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{CSS}</style></head><body><h1>{escape(title)}</h1>"
        f'<p class="meta">{escape(meta_line)}</p>\n{body}</body></html>\n'
    )
    report.write_text_atomic(folder / "index.html", doc)
    return folder / "index.html"
