"""Issue 61: every command block of the docs runs. A fenced block with `qmltest` lines in README.md
or a hand-written page either runs here, in order, in a workspace per page (the checkout's data/
and configs/ beside it), and every line must exit 0; or it is marked on the line before its fence:
`<!-- synopsis -->` (syntax with placeholders: MODEL, `...`, a|b alternatives, [optional] parts;
its options are checked against --help by tests/test_readme_usage.py), or `<!-- example:NAME -->`
(run, with the figures it quotes, by tests/test_docs.py). The `<!-- tour -->` block runs here too
(the blocks after it read what it wrote) and its figures are checked in tests/test_docs.py."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_readme_usage import pages

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = re.compile(r"\bMODEL\b|\.\.\.|\[[-\w]|\w\|\w")


def blocks() -> list[tuple[str, str, list[str]]]:
    """(page, marker, command lines) for each shell block with a qmltest line; continuation
    backslashes joined, comments dropped."""
    out = []
    for page in pages():  # README and the hand-written pages, as the usage test reads them
        text = page.read_text()
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
            lang, body = m.groups()
            lines = [ln.split(" #")[0].strip() for ln in re.sub(r"\\\n\s*", " ", body).splitlines()]
            lines = [ln for ln in lines if ln.startswith(("qmltest ", "python "))]
            if lang not in ("", "bash", "sh", "console") or not any(ln.startswith("qmltest ") for ln in lines):
                continue
            before = text[: m.start()].rstrip().splitlines()
            marker = before[-1].strip() if before and before[-1].strip().startswith("<!--") else ""
            out.append((page.relative_to(ROOT).as_posix(), marker, lines))
    return out


def test_every_block_runs_or_is_marked() -> None:
    """An unmarked block has no placeholder (so it can run); a marker is one of the known ones."""
    found = blocks()
    assert len(found) >= 20
    for page, marker, lines in found:
        if marker:
            assert marker == "<!-- synopsis -->" or marker.startswith(("<!-- tour", "<!-- example:")), (page, marker)
            continue
        bad = [ln for ln in lines if PLACEHOLDER.search(ln)]
        assert not bad, f"{page}: a runnable block with placeholders (mark it <!-- synopsis -->): {bad}"
    assert sum(not marker or marker == "<!-- tour -->" for _, marker, _ in found) >= 3


@pytest.mark.slow
def test_the_runnable_blocks_run(tmp_path) -> None:
    env = dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="200")
    ran = 0
    for page, marker, lines in blocks():
        if marker and marker != "<!-- tour -->":
            continue
        work = tmp_path / page.replace("/", "_")
        work.mkdir(exist_ok=True)
        for name in ("data", "configs"):
            if not (work / name).exists():
                (work / name).symlink_to(ROOT / name)
        for line in lines:
            argv = shlex.split(line)
            tool = ["-m", "qmltest_cli.main"] if argv[0] == "qmltest" else []
            cmd = [sys.executable, *tool, *argv[1:]]
            res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
            assert res.returncode == 0, (page, line, res.stderr[-1500:])
            ran += 1
    assert ran >= 5
