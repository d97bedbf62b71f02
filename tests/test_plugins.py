"""Extension points (issue 58): a separate, installed package adds an operator, a kill criterion, a
coverage criterion, a backend and a report format through entry points, and each is then usable
from the CLI. The plugins are the docs' own examples (docs/howto/extend.md), installed as a
temporary distribution (a .dist-info folder on PYTHONPATH), run in fresh processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qmltest.util import plugins

ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "data/models/zfm-ra-iris")
EXTEND = (ROOT / "docs/howto/extend.md").read_text()


def _block(title: str) -> str:
    section = EXTEND.split(f"### {title}", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


MODULES = {
    "qmltest_demo_operator": ("qmltest.operators", "reverse", _block("Adding an operator")),
    "qmltest_demo_strategy": ("qmltest.strategies", "first-site", _block("Adding a generation strategy")),
    "qmltest_demo_criterion": ("qmltest.criteria", "bonferroni", _block("Adding a kill criterion")),
    "qmltest_demo_coverage": ("qmltest.coverage", "midrange", _block("Adding a coverage criterion")),
    "qmltest_demo_backend": ("qmltest.backends", "qiskit-sv", _block("Adding a backend")),
    "qmltest_demo_format": (
        "qmltest.formats",
        "count",
        "from qmltest.report.views import View, register\n\n"
        "register(View('count', 'the number of mutants', lambda report, run_dir: f\"{len(report['mutants'])}\\n\"))\n",
    ),
    "qmltest_demo_broken": ("qmltest.backends", "broken", "raise ImportError('this plugin is broken on purpose')\n"),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A folder holding the plugin modules and their distribution's entry points."""
    folder = tmp_path_factory.mktemp("site")
    groups: dict[str, list[str]] = {}
    for module, (group, name, code) in MODULES.items():
        (folder / f"{module}.py").write_text(code)
        groups.setdefault(group, []).append(f"{name} = {module}")
    info = folder / "qmltest_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: qmltest-demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("".join(f"[{g}]\n" + "\n".join(e) + "\n\n" for g, e in groups.items()))
    return folder


def qmltest(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    argv = [sys.executable, "-m", "qmltest_cli.main", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_an_operator_from_another_package(site) -> None:
    res = qmltest(site, "mutate", MODEL, "--family", "classic", "--operators", "reverse-2q", "--list")
    assert res.returncode == 0, res.stderr
    assert re.search(r"reverse-2q\s+\d+", res.stdout), res.stdout


def test_a_strategy_from_another_package_plans_lists_and_runs(site, tmp_path) -> None:
    listed = qmltest(site, "mutate", MODEL, "--family", "qml", "--strategy", "first-site", "--list")
    assert listed.returncode == 0, listed.stderr
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(\w+)\s+(\d+)\s*$", listed.stdout, re.M)}
    assert counts and all(v <= 1 for v in counts.values()) and sum(counts.values()) >= 3, listed.stdout
    res = qmltest(
        site, "mutate", MODEL, "--family", "qml", "--strategy", "first-site", "--test", "iris:test",
        "--null-copies", "3", "-q", "--json", "-",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["meta"]["options"]["strategy"] == "first-site"
    assert sorted(m["operator"] for m in report["mutants"]) == sorted(k for k, v in counts.items() if v)
    bad = qmltest(site, "mutate", MODEL, "--family", "qml", "--strategy", "nope", "--list")
    assert bad.returncode == 2 and "first-site" in bad.stderr and "Traceback" not in bad.stderr


def test_a_backend_from_another_package_agrees_with_numpy(site) -> None:
    args = ["evaluate", MODEL, "--data", "iris", "--exact", "--limit", "3", "-q", "--json", "-"]
    mine, ref = qmltest(site, *args, "--backend", "qiskit-sv"), qmltest(site, *args, "--backend", "numpy")
    assert mine.returncode == 0 and ref.returncode == 0, mine.stderr + ref.stderr
    a, b = json.loads(mine.stdout), json.loads(ref.stdout)
    assert a["backend"] == "qiskit-sv" and a["accuracy"] == b["accuracy"] and a["samples"] == b["samples"] == 9


def test_a_kill_criterion_and_a_report_format_from_another_package(site, tmp_path) -> None:
    run = tmp_path / "run"
    res = qmltest(
        site, "mutate", MODEL, "--family", "qml", "--operators", "ALD", "--test", "iris:test", "--null-copies", "3",
        "--criterion", "majority-bonferroni", "--out", str(run), "-q",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    report = json.loads((run / "report.json").read_text())
    assert report["meta"]["criterion"] == "majority-bonferroni"
    res = qmltest(site, "report", str(run), "--view", f"count={tmp_path / 'n.txt'}")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "n.txt").read_text() == f"{len(report['mutants'])}\n"


def test_a_coverage_criterion_from_another_package(site, tmp_path) -> None:
    prof = tmp_path / "p.json"
    res = qmltest(site, "profile", MODEL, "--data", "iris:train", "--per-class", "5", "--out", str(prof), "-q")
    assert res.returncode == 0, res.stderr
    res = qmltest(site, "cover", MODEL, "--profile", str(prof), "--data", "iris:test", "-q", "--json", "-")
    assert res.returncode == 0, res.stderr
    totals = json.loads(res.stdout)["totals"]
    assert set(totals) == {"ksc", "scc", "tsc", "mrc"} and 0.0 <= totals["mrc"] <= 1.0


def test_a_broken_plugin_is_one_warning_and_the_command_goes_on(site) -> None:
    res = qmltest(site, "evaluate", MODEL, "--data", "iris", "--exact", "--limit", "2", "-q", "--json", "-")
    assert res.returncode == 0
    warned = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(warned) == 1 and "plugin 'broken'" in warned[0] and "on purpose" in warned[0], res.stderr
    assert json.loads(res.stdout)["samples"] == 6


def test_the_groups_are_the_five_extension_points() -> None:
    assert set(plugins.GROUPS) == {g for g, _, _ in MODULES.values()}
