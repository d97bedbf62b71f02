"""Issue 61: a distribution a user can take. The wheel carries what an installed qmltest needs
(schemas, the Stryker viewer, the shipped models it names), the version is declared once, and the
README tour runs from a fresh virtual environment holding the wheel (no editable install, nothing
read from the checkout: the tour's data/models/NAME paths resolve to the installed models)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import qmltest

ROOT = Path(__file__).resolve().parents[1]


def _wheel(tmp_path: Path) -> Path:
    out = tmp_path / "dist"
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)]
    subprocess.run(cmd, check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = out.glob("qmltest-*.whl")
    return wheel


def test_the_wheel_carries_what_an_install_needs(tmp_path) -> None:
    wheel = _wheel(tmp_path)
    assert wheel.name.startswith(f"qmltest-{qmltest.__version__}-")  # pyproject reads the version from qmltest
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {p.name for p in (ROOT / "data" / "models").iterdir() if (p / "model.json").is_file()}
    for model in shipped:
        assert {f"qmltest/zoo/shipped/{model}/model.json", f"qmltest/zoo/shipped/{model}/model.qasm"} <= names
    schemas = {p.name for p in (ROOT / "qmltest" / "schemas").glob("*.json")}
    assert {f"qmltest/schemas/{s}" for s in schemas} <= names
    assert any(n.startswith("qmltest/report/html/vendor/mutation-test-elements") for n in names)
    assert "qmltest/faults/known/catalogue.toml" in names and "qmltest/faults/wiring.py" in names
    assert "qmltest_cli/main.py" in names and not any(n.startswith(("tests/", "data/")) for n in names)


@pytest.mark.slow
def test_the_readme_tour_runs_from_a_fresh_venv_with_the_wheel(tmp_path) -> None:
    """A venv with the wheel installed by pip (its console script), the dependencies seen through
    one path line (the registries are not needed), run from an empty folder."""
    wheel = _wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.check_output([str(py), "-c", ask], text=True).strip())
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # a path line: its .pth files stay unread
    pip = [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", str(wheel)]
    subprocess.run(pip, check=True, capture_output=True)
    work = tmp_path / "user"
    work.mkdir()
    where = subprocess.check_output([str(py), "-c", "import qmltest; print(qmltest.__file__)"], cwd=work, text=True)
    assert where.startswith(str(site)), where
    readme = (ROOT / "README.md").read_text()
    tour = readme.split("<!-- tour -->\n```\n")[1].split("```")[0]
    env = dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="200")
    env.pop("PYTHONPATH", None)
    for line in filter(str.strip, tour.splitlines()):
        argv = shlex.split(line)
        res = subprocess.run(
            [str(venv / "bin" / argv[0]), *argv[1:]], cwd=work, capture_output=True, text=True, env=env
        )
        assert res.returncode == 0, (line, res.stderr[-1500:])
    assert (work / "work" / "cover" / "index.html").is_file() and (work / "work" / "mutation.xml").is_file()


def test_the_sdist_carries_the_models_schemas_and_viewer(tmp_path) -> None:
    """The source archive the install page names builds a wheel with everything the wheel test
    checks: the models (as data/models), the schemas and the viewer travel in it."""
    import tarfile

    code = f"from setuptools import build_meta; print(build_meta.build_sdist({str(tmp_path)!r}))"
    name = subprocess.check_output([sys.executable, "-c", code], cwd=ROOT, text=True).strip().splitlines()[-1]
    assert name == f"qmltest-{qmltest.__version__}.tar.gz"
    members = tarfile.open(tmp_path / name).getnames()
    root = f"qmltest-{qmltest.__version__}/"
    shipped = {p.name for p in (ROOT / "data" / "models").iterdir() if (p / "model.json").is_file()}
    assert {f"{root}data/models/{m}/model.qasm" for m in shipped} <= set(members)
    assert f"{root}data/faults/catalogue.toml" in members
    assert any(n.startswith(f"{root}qmltest/schemas/") for n in members)
    assert any(n.startswith(f"{root}qmltest/report/html/vendor/mutation-test-elements") for n in members)
