"""The README's worked example, command by command: train a VQC in qiskit-ml, import, evaluate, cover, mutate, fuzz.

The commands are read from the README block between `<!-- example:vqc-iris -->` markers and run as
written, in a temporary folder, except for fewer COBYLA iterations (--maxiter 8) to keep the test short.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _commands() -> list[str]:
    text = (ROOT / "docs" / "tutorial.md").read_text()
    block = re.search(r"<!-- example:vqc-iris -->\n```\n(.*?)```\n<!-- /example -->", text, re.DOTALL)
    assert block, "the tutorial lost its worked example block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def _run(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    argv = shlex.split(cmd.replace("--maxiter 60", "--maxiter 8"))
    if argv[0] == "python":
        argv = [sys.executable, str(ROOT / argv[1]), *argv[2:]]
    elif argv[0] == "qmltest":
        argv = [sys.executable, "-m", "qmltest_cli.main", *argv[1:]]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow  # 66 s: trains a VQC; the README tour (tests/test_docs.py) runs in the default set
def test_readme_worked_example(tmp_path):
    cmds = _commands()
    assert [c.split()[0] + " " + c.split()[1] for c in cmds][1:] == [
        "qmltest import",
        "qmltest evaluate",
        "qmltest profile",
        "qmltest cover",
        "qmltest mutate",
        "qmltest fuzz",
        "qmltest diff",
        "qmltest mutate",
    ]
    results = []
    for cmd in cmds:
        res = _run(cmd, tmp_path)
        assert res.returncode == 0, f"{cmd}\n{res.stdout}\n{res.stderr}"
        results.append(res)
    train_acc = float(re.search(r"train accuracy ([0-9.]+)", results[0].stdout).group(1))
    assert "readout: modulo over qubits [0, 1, 2, 3] -> classes [0, 1, 2]" in results[1].stdout
    manifest = json.loads((tmp_path / "work/vqc-iris/model.json").read_text())
    assert [(r["kind"], r["start"], r["stop"]) for r in manifest["layers"]] == [
        ("feature_map", 0, 26),
        ("ansatz", 26, 44),
    ]
    evaluation = json.loads((tmp_path / "work/train-accuracy.json").read_text())
    assert abs(evaluation["accuracy"] - train_acc) < 1e-3  # the VQC's own score on the same inputs
    cover = json.loads((tmp_path / "work/cover.json").read_text())
    assert 0 < cover["totals"]["ksc"] <= 100
    mutation = json.loads((tmp_path / "work/mutation.json").read_text())
    assert mutation["meta"]["format"] == "qmltest.mutation/3" and mutation["meta"]["criterion"] == "majority"
    suite = mutation["suites"]["iris:test"]
    assert suite["scored_mutants"] == sum(m["status"] in ("killed", "survived") for m in mutation["mutants"]) > 0
    assert 0.0 <= mutation["mutation_score"] == suite["plain_score"] <= 1.0
    fuzz = json.loads((tmp_path / "work/fuzz.json").read_text())["guides"]["ksc"]
    assert fuzz["iterations"] == 200 and fuzz["tsr"] == fuzz["failures"] / 200
    assert np.isfinite(fuzz["final_coverage"]["ksc"])
    diff = json.loads((tmp_path / "work/diff.json").read_text())
    assert diff["b"]["target"] == "fake:FakeTorino" and diff["tvd_max"] > 0  # the device moves the outputs
    assert diff["inputs"] == 30 and 0 <= diff["disagree"] <= 30
    torino = json.loads((tmp_path / "work/mutation-torino.json").read_text())
    assert torino["meta"]["noise"]["name"] == "fake:FakeTorino" and torino["meta"]["device"]["device_qubits"] == 133
    assert {m["id"] for m in torino["mutants"]} == {m["id"] for m in mutation["mutants"]}  # the same mutants
