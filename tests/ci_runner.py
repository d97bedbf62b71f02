"""A small runner of the CI templates in docs/ci/: every step of every job, in order, in a
temporary repository, with the installed qmltest (no network). It knows the handful of actions the
templates use: checkout and setup-python are the repository and this interpreter; cache,
upload-artifact and download-artifact copy folders; the JUnit action checks that its reports parse.
`pip install` lines are checked to name qmltest and skipped (qmltest is installed already)."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET

import yaml

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class Step:
    """One executed step: its name, the exit code it gave, and what it printed."""

    name: str
    code: int
    output: str = ""


@dataclass
class Runner:
    repo: Path
    env: dict[str, str]
    store: Path  # caches and artifacts live here, outside the repository
    steps: list[Step] = field(default_factory=list)
    saves: list[tuple[Path, Path]] = field(default_factory=list)
    installs: list[str] = field(default_factory=list)

    def shell(self, script: str, env: dict[str, str], name: str) -> Step:
        """A run: block under bash -e (GitHub's default shell), pip install lines checked and skipped."""
        lines = []
        for line in script.splitlines():
            if re.match(r"\s*python -m pip install ", line):
                shown = re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), m.group(0)), line)
                assert "qmltest" in shown, f"{name}: an install step that does not install qmltest: {shown}"
                self.installs.append(shown)
                continue
            lines.append(line)
        bindir = str(Path(sys.executable).parent)
        full = dict(os.environ, **env, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        full.update(PYTHONWARNINGS="ignore", COLUMNS="200")
        res = subprocess.run(
            ["bash", "-e", "-c", "\n".join(lines)], cwd=self.repo, env=full, capture_output=True, text=True
        )
        step = Step(name, res.returncode, res.stdout + res.stderr)
        self.steps.append(step)
        return step


def hash_files(repo: Path, patterns: list[str]) -> str:
    """GitHub's hashFiles: one sha256 over the files matching any pattern (sorted paths)."""
    h = hashlib.sha256()
    files = sorted(p for p in repo.rglob("*") if p.is_file())
    for p in files:
        rel = str(p.relative_to(repo))
        if any(fnmatch.fnmatch(rel, pat.replace("**", "*")) for pat in patterns):
            h.update(rel.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def expand(text: str, ctx: dict, repo: Path) -> str:
    """${{ matrix.x }}, ${{ steps.id.outputs.k }}, ${{ env.X }} and ${{ hashFiles('a', ...) }}."""

    def one(m: re.Match) -> str:
        expr = m.group(1)
        call = re.fullmatch(r"hashFiles\((.*)\)", expr)
        if call:
            return hash_files(repo, re.findall(r"'([^']*)'", call.group(1)))
        value: object = ctx
        for part in expr.split("."):
            value = value[part]  # type: ignore[index]
        return str(value)

    return EXPR.sub(one, text)


def run_github(path: Path, repo: Path, store: Path, env: dict[str, str]) -> list[Step]:
    """Every job (in `needs` order, matrix expanded) and every step of a GitHub Actions workflow."""
    doc = yaml.safe_load(path.read_text())
    assert "checks" in doc.get("permissions", {}), f"{path.name}: the JUnit action needs permissions: checks: write"
    runner = Runner(repo, dict(doc.get("env", {}), **env), store)
    done: set[str] = set()
    jobs = doc["jobs"]
    while len(done) < len(jobs):
        for name, job in jobs.items():
            needs = job.get("needs", [])
            needs = [needs] if isinstance(needs, str) else needs
            if name in done or not set(needs) <= done:
                continue
            matrix = job.get("strategy", {}).get("matrix", {})
            combos = [{k: v} for k, vs in matrix.items() for v in vs] or [{}]
            for combo in combos:
                _github_job(runner, name, job, {"matrix": combo, "env": runner.env, "steps": {}})
            done.add(name)
    return runner.steps


def _github_job(runner: Runner, job_name: str, job: dict, ctx: dict) -> None:
    """One job's steps; after a failed step only `if: always()` steps run; caches saved at the end."""
    failed = False
    for i, step in enumerate(job["steps"]):
        name = expand(step.get("name", step.get("uses", f"step {i}")), ctx, runner.repo)
        if failed and "always()" not in str(step.get("if", "")):
            continue
        if "run" in step:
            out = runner.store / "github_output"
            out.write_text("")
            env = dict(runner.env, GITHUB_OUTPUT=str(out))
            result = runner.shell(expand(step["run"], ctx, runner.repo), env, f"{job_name}: {name}")
            if "id" in step:
                pairs = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
                ctx["steps"][step["id"]] = {"outputs": pairs}
            failed = failed or result.code != 0
        else:
            _action(
                runner, step["uses"], {k: expand(str(v), ctx, runner.repo) for k, v in step.get("with", {}).items()}
            )
    save_caches(runner)


def _action(runner: Runner, uses: str, args: dict) -> None:
    repo, store = runner.repo, runner.store
    action = uses.split("@")[0]
    if action in ("actions/checkout", "actions/setup-python"):
        return
    if action == "actions/cache":  # restore now (exact key, else the newest restore-key prefix), save at the end
        caches = store / "caches"
        caches.mkdir(exist_ok=True)
        target = repo / args["path"]
        hit = caches / args["key"]
        if not hit.exists():
            older = sorted(caches.glob(args.get("restore-keys", "\0") + "*"))
            hit = older[-1] if older else hit
        if hit.exists() and not target.exists():
            shutil.copytree(hit, target)
        runner.steps.append(Step(f"cache {args['key']}", 0, f"restored from {hit.name}" if hit.exists() else "miss"))
        runner.saves.append((target, caches / args["key"]))
        return
    if action == "actions/upload-artifact":
        dest = store / "artifacts" / args["name"]
        dest.mkdir(parents=True, exist_ok=True)
        for line in filter(str.strip, args["path"].splitlines()):
            for src in repo.glob(line.strip()):
                if src.is_dir():
                    shutil.copytree(src, dest / src.name)
                else:
                    shutil.copy(src, dest / src.name)
        runner.steps.append(Step(f"upload {args['name']}", 0))
        return
    if action == "actions/download-artifact":
        for art in sorted((store / "artifacts").iterdir()):
            inner = list(art.iterdir())
            src = inner[0] if len(inner) == 1 and inner[0].is_dir() else art
            shutil.copytree(src, repo / args["path"] / art.name, dirs_exist_ok=True)
        runner.steps.append(Step("download artifacts", 0))
        return
    if action == "mikepenz/action-junit-report":
        reports = list(repo.glob(args["report_paths"]))
        assert reports, f"no JUnit report matches {args['report_paths']}"
        for r in reports:
            ET.parse(r)
        runner.steps.append(Step(f"junit {len(reports)} reports", 0))
        return
    raise AssertionError(f"the runner does not know the action {uses}")


def save_caches(runner: Runner) -> None:
    """actions/cache's post step: a key not saved before is saved from the folder as the job left it."""
    for target, dest in runner.saves:
        if target.exists() and not dest.exists():
            shutil.copytree(target, dest)
    runner.saves.clear()


def run_gitlab(path: Path, repo: Path, store: Path, env: dict[str, str]) -> list[Step]:
    """Every job's before_script + script in stage order, `parallel: N` as N jobs with
    CI_NODE_INDEX / CI_NODE_TOTAL, artifacts shared with the later stages (the repository itself)."""
    doc = yaml.safe_load(path.read_text())
    runner = Runner(repo, {k: str(v) for k, v in dict(doc.get("variables", {}), **env).items()}, store)
    before = doc.get("default", {}).get("before_script", [])
    jobs = {k: v for k, v in doc.items() if isinstance(v, dict) and "script" in v}
    for stage in doc["stages"]:
        for name, job in jobs.items():
            if job.get("stage", "test") != stage:
                continue
            total = int(job.get("parallel", 1))
            for index in range(1, total + 1):
                extra = {"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(total)} if total > 1 else {}
                script = "\n".join(job.get("before_script", before) + job["script"])
                runner.shell(script, dict(runner.env, **extra), f"{name} {index}/{total}")
                for report in job.get("artifacts", {}).get("reports", {}).values():
                    ET.parse(repo / report)
    return runner.steps
