"""The README's and the documentation site's usage lines match the CLI: every `--option` written
after `qmltest CMD` in a code block of README.md or docs/**/*.md (and in the documented GitHub
Actions workflows) is one that `qmltest CMD --help` lists (issue 30; issue 49 for the site)."""

from __future__ import annotations

import re
from pathlib import Path

from qmltest_cli.main import app
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GENERATED = (
    "reference/cli.md",
    "reference/config.md",
    "reference/reports.md",
    "reference/plugins.md",
    "performance.md",
)


def pages() -> list[Path]:
    """README.md and every hand-written page of the site (generated pages quote --help itself)."""
    docs = ROOT / "docs"
    return [README] + sorted(p for p in docs.rglob("*.md") if p.relative_to(docs).as_posix() not in GENERATED)


WORKFLOW = ROOT / "docs" / "ci" / "github-actions.yml"
GROUPS = ("suite", "zoo", "noise")


def usage_lines(blocks: list[str] | None = None) -> list[tuple[tuple[str, ...], list[str], str]]:
    """(command words, options, line) for each `qmltest ...` line of the README's code blocks;
    'profile/cover' stands for both commands."""
    out = []
    if blocks is None:
        blocks = [b for page in pages() for b in re.findall(r"```\w*\n(.*?)```", page.read_text(), re.DOTALL)]
    for block in blocks:
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = line.split("#")[0].strip()
            if not line.startswith("qmltest "):
                continue
            words = line.split()[1:]
            first = words[0] if words else ""
            if not first or first.startswith("-"):
                continue
            options = re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line)
            for name in first.split("/"):
                sub = words[1] if name in GROUPS and len(words) > 1 and not words[1].startswith("-") else None
                out.append(((name, sub) if sub else (name,), options, line))
    return out


def _check(lines: list[tuple[tuple[str, ...], list[str], str]]) -> None:
    runner, helps, wrong = CliRunner(), {}, []
    for command, options, line in lines:
        if command not in helps:
            res = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "300"})
            assert res.exit_code == 0, f"README runs `qmltest {' '.join(command)}`, which has no help: {line}"
            helps[command] = res.output
        wrong += [f"{' '.join(command)} {opt}: {line}" for opt in options if opt not in helps[command]]
    assert not wrong, wrong


def test_every_readme_option_is_in_its_command_s_help() -> None:
    lines = usage_lines()
    assert len(lines) > 60  # the README and the site show the commands in use
    _check(lines)


def test_the_github_actions_workflow_uses_real_options() -> None:
    lines = usage_lines([WORKFLOW.read_text()])
    assert {c[0] for c, _, _ in lines} >= {"profile", "cover", "mutate", "diff"}
    assert all("--junit" in opts for c, opts, _ in lines if c[0] in ("cover", "mutate"))
    _check(lines)


def test_every_option_of_every_command_has_help_text_and_json_is_a_path() -> None:
    """One vocabulary (issue 30): no option without help; --json takes PATH or '-' everywhere."""
    import click
    from typer.main import get_command

    root = get_command(app)
    ctx = click.Context(root)
    missing, flags = [], []

    def walk(cmd: click.Command, path: list[str]) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), [*path, name])
            return
        for p in cmd.params:
            if isinstance(p, click.Option) and p.name != "help":
                if not p.help:
                    missing.append(f"{' '.join(path)} {p.opts[0]}")
                if "--json" in p.opts and p.is_flag:
                    flags.append(" ".join(path))

    for name in root.list_commands(ctx):
        walk(root.get_command(ctx, name), [name])
    assert not missing and not flags, (missing, flags)


def test_the_sharded_workflow_uses_real_options() -> None:
    lines = usage_lines([(WORKFLOW.parent / "github-actions-shards.yml").read_text()])
    assert {c[0] for c, _, _ in lines} == {"mutate", "merge"}
    _check(lines)
