"""The official Stryker viewer (mutation-testing-elements 3.9.0, Apache-2.0, shipped in
`qmltest/report/html/vendor/`, no network): `stryker.html` beside the mutation page shows the model's QASM3
(and `model.json` for preprocessing mutants) with every mutant inline, its replacement as a diff."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from qmltest.util import writers as report

VERSION = "3.9.0"
VENDOR = Path(__file__).resolve().parent / "vendor"
SCRIPT = f"mutation-test-elements-{VERSION}.js"


def write(folder: Path, doc: dict, title: str) -> Path:
    """folder/stryker.html with the report inline and the viewer's script copied beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(VENDOR / SCRIPT, folder / SCRIPT)
    shutil.copyfile(VENDOR / "mutation-testing-elements.LICENSE", folder / "mutation-testing-elements.LICENSE")
    data = json.dumps(doc, sort_keys=True).replace("</", "<\\/")  # no '</script>' inside the script
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title></head><body>\n"
        f'<mutation-test-report-app title-postfix="qmltest"></mutation-test-report-app>\n'
        f'<script src="{SCRIPT}"></script>\n'
        f"<script>document.querySelector('mutation-test-report-app').report = {data};</script>\n"
        "</body></html>\n"
    )
    report.write_text_atomic(folder / "stryker.html", page)
    return folder / "stryker.html"
