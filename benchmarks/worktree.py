"""Run the CLI of another commit beside this tree's: a detached git worktree on PYTHONPATH.

Shared by the before/after benchmarks (`seam.py`, `mutate_wide.py`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commit_path(ref: str, folder: Path, side: str = "base") -> Path:
    """A PYTHONPATH that imports the library and CLI of commit `ref` (a detached git worktree)."""
    tree = folder / side
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), ref], cwd=ROOT, check=True, capture_output=True)
    path = folder / f"path-{side}"
    path.mkdir()
    (path / "qmltest").symlink_to(tree / "qmltest")
    (path / "qmltest_cli").symlink_to(tree / "cli")
    return path


def cli_command(args: list[str], pythonpath: Path | None) -> tuple[str, dict]:
    """(python -c code, environment) that runs `qmltest ARGS` with that side's code, and checks it
    imports that side's library (a cwd inside this tree would put this tree's first)."""
    check = "" if pythonpath is None else f"import qmltest; assert qmltest.__file__.startswith({str(pythonpath)!r}); "
    code = f"import sys; sys.argv = ['qmltest'] + {args!r}; {check}from qmltest_cli.main import run; run()"
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return code, env


def remove(folder: Path, *sides: str) -> None:
    """Remove the worktrees made under `folder`."""
    for side in sides:
        if not (folder / side).exists():  # a side run from this tree has no worktree
            continue
        subprocess.run(["git", "worktree", "remove", "--force", str(folder / side)], cwd=ROOT, check=False)
