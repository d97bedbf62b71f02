"""A user's own data file (NPZ or CSV) works wherever a built-in data set does (issue: mutate crashed).

The same file as reference and test suite with a per-class subsample used to share one cached
original-probability array by name (15 vs 30 rows); caches are keyed by content now.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.data import datasets

runner = CliRunner()
MODEL = "data/models/zfm-ra-iris"


@pytest.fixture(params=["npz", "csv"])
def user_file(request, tmp_path):
    x, y = datasets.select("iris", "test")
    path = tmp_path / f"mine.{request.param}"
    if request.param == "npz":
        np.savez(path, x=x, y=y)
    else:
        np.savetxt(path, np.column_stack([x, y]), delimiter=",")
    return path


def _ok(args: list[str]) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output


def test_mutate_quanforge_same_file_as_reference_and_subsampled_test(user_file, tmp_path):
    f = str(user_file)
    args = ["mutate", MODEL, "--operators", "PF", "--k-max", "2", "--batch", "2", "--seed", "1", "-q"]
    _ok(args + ["--reference", f, "--test", f, "--test-per-class", "5", "--json", str(tmp_path / "a.json")])
    _ok(args + ["--reference", f, "--reference-per-class", "5", "--test", f, "--json", str(tmp_path / "b.json")])
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["suites"][f]["inputs"] == 15 and a["generation"]["reference"]["inputs"] == 30


def test_mutate_qml_fuzz_profile_cover_suite_with_a_file(user_file, tmp_path):
    f = str(user_file)
    _ok(
        ["mutate", MODEL, "--suite", "qml", "--operators", "APC", "--test", f, "-q", "--json", str(tmp_path / "q.json")]
    )
    assert json.loads((tmp_path / "q.json").read_text())["suites"][f]["inputs"] == 30
    _ok(["profile", MODEL, "--data", f, "--out", str(tmp_path / "p.json"), "-q"])
    _ok(["cover", MODEL, "--profile", str(tmp_path / "p.json"), "--data", f, "-q"])
    _ok(
        [
            "fuzz",
            MODEL,
            "--profile",
            str(tmp_path / "p.json"),
            "--seeds",
            f,
            "--per-class",
            "3",
            "--guide",
            "ksc",
            "--budget",
            "10",
            "-q",
        ]
    )
    _ok(["suite", "build", MODEL, "--kind", "hconf", "--data", f, "--per-class", "3", "--out", str(tmp_path / "s.npz")])
    _ok(
        [
            "suite",
            "attack",
            MODEL,
            "--method",
            "random",
            "--data",
            f,
            "--per-class",
            "3",
            "--out",
            str(tmp_path / "a.npz"),
        ]
    )
