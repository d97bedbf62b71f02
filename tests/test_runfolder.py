"""Run folders under faults: one writer at a time, a killed writer's folder resumed to the same
report, a torn last line cut off, and unwritable destinations ending in one line, exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

QMLTEST = str(Path(sys.executable).parent / "qmltest")
MODEL = str(Path(__file__).resolve().parents[1] / "data" / "models" / "zzfm-su2-iris")
ARGS = ["mutate", MODEL, "--suite", "qml", "--test", "iris:test", "--seed", "3", "--quiet"]


def _run(out: Path, *extra: str, wait: bool = True) -> subprocess.Popen | subprocess.CompletedProcess:
    argv = [QMLTEST, *ARGS, "--out", str(out), "--json", str(out.parent / f"{out.name}.json"), *extra]
    if wait:
        return subprocess.run(argv, capture_output=True, text=True, timeout=600)
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path: Path, predicate, timeout: float = 120.0) -> None:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if path.exists() and predicate(path):
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never got ready")


def _report(path: Path) -> dict:
    r = json.loads(path.read_text())
    r["meta"].pop("command", None)  # the --out / --json paths differ between the runs compared
    return r


@pytest.fixture(scope="module")
def solo(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("solo") / "run"
    res = _run(out)
    assert res.returncode == 0, res.stderr
    return _report(out.parent / "run.json")


def test_a_second_writer_is_refused_and_the_first_run_is_unharmed(tmp_path) -> None:
    """While a long mutate run holds its folder, the same command into it exits 2 in one line naming
    the holder; the first run's report equals a solo run's."""
    slow = ("--null-copies", "3000")  # long enough that the second start overlaps it
    first = _run(tmp_path / "run", *slow, wait=False)
    _wait_for(tmp_path / "run" / "run.lock", lambda p: "pid" in p.read_text())
    second = subprocess.run(
        [QMLTEST, *ARGS, *slow, "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=600
    )
    overlapped = first.poll() is None
    assert first.wait(timeout=600) == 0
    assert overlapped, "the first run ended before the second: the test did not overlap them"
    assert second.returncode == 2, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "in use by a running qmltest (pid" in lines[0]
    solo = _run(tmp_path / "solo", *slow)
    assert solo.returncode == 0, solo.stderr
    assert _report(tmp_path / "run.json") == _report(tmp_path / "solo.json")


def test_a_held_lock_refuses_in_process(tmp_path) -> None:
    from qmltest.runs.lock import RunLock

    with RunLock(tmp_path):
        with pytest.raises(Exception, match="in use by a running qmltest"):
            RunLock(tmp_path)
    RunLock(tmp_path).release()  # released: free again


def test_a_killed_run_resumes_to_the_same_report(tmp_path, solo) -> None:
    run = tmp_path / "run"
    first = _run(run, wait=False)
    _wait_for(run / "results.jsonl", lambda p: p.read_text().count("\n") >= 20)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=60)
    with open(run / "results.jsonl", "a") as fh:  # as if the kill had torn a line in half
        fh.write('{"id": "torn')
    again = _run(run)
    assert again.returncode == 0, again.stderr
    assert _report(tmp_path / "run.json") == solo
    lines = (run / "results.jsonl").read_text().splitlines()
    assert all(json.loads(line) for line in lines)  # the torn half line was cut, not glued onto


def _mount(target: Path, options: str) -> bool:
    target.mkdir(parents=True, exist_ok=True)
    try:
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True)
    except (FileNotFoundError, PermissionError):
        return False
    return res.returncode == 0


@pytest.mark.parametrize(("options", "says"), [("ro,size=1m", "read-only file system"), ("size=96k", "no space left")])
def test_unwritable_destinations_end_in_one_line(tmp_path, options, says) -> None:
    mnt = tmp_path / "mnt"
    if not _mount(mnt, options):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        res = subprocess.run(
            [QMLTEST, *ARGS, "--operators", "ALD", "--out", str(mnt / "run")],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert res.returncode == 2, res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0] and "Traceback" not in res.stderr
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_fuzz_and_mutate_claim_their_run_folders_through_one_module(tmp_path) -> None:
    """Issue 58: one run-folder module (`qmltest.runs.folder.claim`) locks every command's --out: a
    fuzz run into a folder held by another writer is refused with mutate's own line, and a file
    given as --out is one line for both."""
    from qmltest_cli.main import app
    from typer.testing import CliRunner

    from qmltest.runs.folder import claim

    runner = CliRunner()
    prof = tmp_path / "p.json"
    res = runner.invoke(app, ["profile", MODEL, "--data", "iris:train", "--per-class", "3", "--out", str(prof), "-q"])
    assert res.exit_code == 0, res.output
    fuzz = ["fuzz", MODEL, "--profile", str(prof), "--per-class", "2", "--budget", "10", "-q"]
    held = claim(tmp_path / "run")
    try:
        res = runner.invoke(app, [*fuzz, "--out", str(tmp_path / "run")])
        assert res.exit_code == 2 and "in use by a running qmltest" in res.stderr, res.output
        res = runner.invoke(app, [*ARGS, "--out", str(tmp_path / "run")])
        assert res.exit_code == 2 and "in use by a running qmltest" in res.stderr, res.output
    finally:
        held.release()
    (tmp_path / "file").write_text("x")
    for args in (fuzz, ARGS):
        res = runner.invoke(app, [*args, "--out", str(tmp_path / "file")])
        assert res.exit_code == 2 and "is a file, not a folder" in res.stderr, res.output


def test_a_mutant_that_makes_a_class_unreachable_is_saved_and_loads(tmp_path) -> None:
    """remove-measure on QCNN's one readout qubit leaves a map that never predicts class 1: a
    legitimate mutant, saved with readout.allow_unreachable (the run stopped on it with exit 2)."""
    from qmltest_cli.main import app
    from typer.testing import CliRunner

    from qmltest.model import artifact

    qcnn = str(Path(MODEL).parent / "qcnn-mnist01")
    args = ["mutate", qcnn, "--family", "classic", "--operators", "remove-measure", "--test", "mnist:test"]
    res = CliRunner().invoke(app, [*args, "--per-class", "2", "--null-copies", "3", "-q", "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    saved = [json.loads(p.read_text()) for p in sorted((tmp_path / "r" / "mutants").glob("*/model.json"))]
    marked = [m for m in saved if m["readout"].get("allow_unreachable")]
    assert marked and all(set(m["readout"]["map"]) != {0, 1} for m in marked)
    for folder in (tmp_path / "r" / "mutants").iterdir():
        assert artifact.load(folder).num_classes == 2


def test_fuzz_and_mutate_resume_or_refuse_through_one_rule(tmp_path) -> None:
    """Issue 58: `runs.folder.settle` writes every run folder's run.json. A fuzz folder run again
    with another budget, and a mutate folder run again with another seed, are each refused with
    the same line; the other command's folder is refused by its format; --force starts over."""
    import json as json_mod

    from qmltest_cli.main import app
    from typer.testing import CliRunner

    runner = CliRunner()
    prof = tmp_path / "p.json"
    res = runner.invoke(app, ["profile", MODEL, "--data", "iris:train", "--per-class", "3", "--out", str(prof), "-q"])
    assert res.exit_code == 0, res.output
    fuzz = ["fuzz", MODEL, "--profile", str(prof), "--per-class", "2", "--guide", "ksc", "-q"]
    run = tmp_path / "fz"
    assert runner.invoke(app, [*fuzz, "--budget", "10", "--out", str(run)]).exit_code == 0
    meta = json_mod.loads((run / "run.json").read_text())
    assert meta["format"] == "qmltest.fuzz-run/1" and meta["fingerprint"]["budget"] == 10
    res = runner.invoke(app, [*fuzz, "--budget", "12", "--out", str(run)])
    assert res.exit_code == 2 and "made with other settings" in res.stderr and "--force" in res.stderr, res.output
    res = runner.invoke(app, [*fuzz, "--budget", "12", "--out", str(run), "--force"])
    assert res.exit_code == 0 and json_mod.loads((run / "run.json").read_text())["fingerprint"]["budget"] == 12
    mut = tmp_path / "mu"
    args = ["mutate", MODEL, "--suite", "qml", "--operators", "ALD", "--test", "iris:test", "--null-copies", "2", "-q"]
    assert runner.invoke(app, [*args, "--out", str(mut)]).exit_code == 0
    res = runner.invoke(app, [*args, "--seed", "9", "--out", str(mut)])
    assert res.exit_code == 2 and "made with other settings" in res.stderr and "--force" in res.stderr, res.output
    res = runner.invoke(app, [*fuzz, "--budget", "12", "--out", str(mut)])  # a mutate folder, not a fuzz one
    assert res.exit_code == 2 and "qmltest.mutation-run/4" in res.stderr and "qmltest.fuzz-run/1" in res.stderr
