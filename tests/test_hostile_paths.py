"""Hostile paths and the last inputs that ended badly (issue 57): a report path that is a device,
FIFO, socket or symlink; inputs that are not regular files; run folders the tool wrote itself
(non-finite numbers) resumed; one line and exit 2 for each bad input; finished runs replayed.

Device nodes are made in a temporary folder with mknod (skipped where that is not allowed): the
system's /dev is never written.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.errors import InputError, Notice
from qmltest.model import qasm
from qmltest.util import writers as report
from qmltest.util.files import destination, readable

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data/models/zfm-ra-iris"
OTHER = ROOT / "data/models/zzfm-su2-iris"
QMLTEST = [sys.executable, "-m", "qmltest_cli.main"]
EVALUATE = ["evaluate", str(MODEL), "--data", "iris", "--exact", "--limit", "3", "-q"]


def one_line(res, code: int = 2) -> str:
    """The invariant for bad input: exit `code`, exactly one 'error:' line on stderr, no traceback."""
    text = res.stdout + res.stderr
    assert "Traceback" not in text, text
    assert res.exit_code == code, f"exit {res.exit_code}: {text}"
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


def char_device(path: Path, major: int, minor: int) -> Path:
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here ({exc})")
    return path


# ------------------------------------------------------------------ writing


def test_a_device_node_report_path_is_written_through_never_replaced(tmp_path) -> None:
    null = char_device(tmp_path / "null", 1, 3)  # a copy of /dev/null, in our own folder
    res = runner.invoke(app, [*EVALUATE, "--json", str(null)])
    assert res.exit_code == 0, res.output
    assert stat.S_ISCHR(null.stat().st_mode), "the device node was replaced by a file"
    assert os.major(null.stat().st_rdev) == 1 and os.minor(null.stat().st_rdev) == 3
    assert [p.name for p in tmp_path.iterdir()] == ["null"], "a temporary file was left beside it"


def test_a_full_device_ends_in_one_line_and_stays_a_device(tmp_path) -> None:
    full = char_device(tmp_path / "full", 1, 7)  # a copy of /dev/full: every write fails with ENOSPC
    line = one_line(runner.invoke(app, [*EVALUATE, "--json", str(full)]))
    assert "no space left" in line
    assert stat.S_ISCHR(full.stat().st_mode)


def test_a_fifo_report_path_is_written_through(tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    res = runner.invoke(app, [*EVALUATE, "--json", str(fifo)])
    reader.join(60)
    assert res.exit_code == 0, res.output
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    doc = json.loads(got[0])
    assert doc["samples"] == 9  # three inputs a class, iris's three classes


def test_a_socket_report_path_is_refused_in_one_line(tmp_path) -> None:
    path = tmp_path / "s"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
        line = one_line(runner.invoke(app, [*EVALUATE, "--json", str(path)]))
    finally:
        sock.close()
    assert "is a socket, not a file to write" in line
    assert stat.S_ISSOCK(path.stat().st_mode)


def test_a_symlink_is_followed_and_stays_a_link(tmp_path) -> None:
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("old")
    link.symlink_to(target)
    assert runner.invoke(app, [*EVALUATE, "--json", str(link)]).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["samples"] == 9
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "made.json")
    assert runner.invoke(app, [*EVALUATE, "--json", str(dangling)]).exit_code == 0
    assert dangling.is_symlink() and json.loads((tmp_path / "made.json").read_text())["samples"] == 9


def test_destination_names_what_a_path_is(tmp_path) -> None:
    assert destination(tmp_path / "new.json") == tmp_path / "new.json"
    os.mkfifo(tmp_path / "f")
    assert destination(tmp_path / "f") is None
    with pytest.raises(InputError, match="is a directory"):
        destination(tmp_path)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="symbolic links"):
        destination(loop)


def test_html_over_an_existing_file_is_one_line(tmp_path) -> None:
    prof = tmp_path / "p.json"
    res = runner.invoke(app, ["profile", str(MODEL), "--data", "iris:train", "--per-class", "3", "--out", str(prof)])
    assert res.exit_code == 0, res.output
    taken = tmp_path / "taken"
    taken.write_text("mine")
    cover = ["cover", str(MODEL), "--profile", str(prof), "--data", "iris:test", "-q", "--html", str(taken)]
    assert "is a file, not a folder" in one_line(runner.invoke(app, cover))
    assert taken.read_text() == "mine"
    run = tmp_path / "run"
    mutate = ["mutate", str(MODEL), "--suite", "qml", "--operators", "ALD", "--test", "iris:test"]
    assert runner.invoke(app, [*mutate, "--null-copies", "3", "-q", "--out", str(run)]).exit_code == 0
    assert "is a file, not a folder" in one_line(runner.invoke(app, ["report", str(run), "--html", str(taken)]))
    assert taken.read_text() == "mine"


def test_two_outputs_on_stdout_are_refused(tmp_path) -> None:
    prof = tmp_path / "p.json"
    made = runner.invoke(app, ["profile", str(MODEL), "--data", "iris:train", "--per-class", "3", "--out", str(prof)])
    assert made.exit_code == 0, made.output
    cover = ["cover", str(MODEL), "--profile", str(prof), "--data", "iris:test"]
    line = one_line(runner.invoke(app, [*cover, "--json", "-", "--csv", "-"]))
    assert "--json and --csv both write to stdout" in line


# ------------------------------------------------------------------ reading


@pytest.mark.parametrize(
    "args",
    [
        ["inspect", "{fifo}"],
        ["evaluate", str(MODEL), "--data", "{fifo}.csv", "--exact"],
        ["evaluate", "{fifo}.qasm", "--data", "iris", "--exact"],
    ],
)
def test_a_fifo_input_is_refused_before_it_is_opened(tmp_path, args) -> None:
    fifo = tmp_path / "pipe"
    for name in ("pipe", "pipe.csv", "pipe.qasm"):
        os.mkfifo(tmp_path / name)
    argv = [a.replace("{fifo}", str(fifo)) for a in args]
    res = subprocess.run([*QMLTEST, *argv], capture_output=True, text=True, timeout=120)  # a hang fails here
    assert res.returncode == 2, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "is a FIFO (named pipe), not" in lines[0], res.stderr


def test_readable_refuses_devices_and_directories(tmp_path) -> None:
    with pytest.raises(InputError, match="is a directory, not a data file"):
        readable(tmp_path, "a data file")
    with pytest.raises(InputError, match="is a character device"):
        readable("/dev/null", "a model")
    with pytest.raises(InputError, match="no such file"):
        readable(tmp_path / "absent")


def test_a_very_long_path_is_one_line() -> None:
    line = one_line(runner.invoke(app, ["inspect", "a" * 5000]))
    assert "file name too long" in line and len(line) < 200


def test_empty_classes_on_import_is_one_line(tmp_path) -> None:
    src = tmp_path / "c.qasm"
    src.write_text('OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] a;\nqubit[1] q;\nrx(a) q[0];\n')
    for bad in ("", ",", "1"):
        line = one_line(runner.invoke(app, ["import", str(src), "--classes", bad, "--out", str(tmp_path / "m")]))
        assert "--classes needs two or more" in line
    assert "names a label twice" in one_line(
        runner.invoke(app, ["import", str(src), "--classes", "1,1", "--out", str(tmp_path / "m")])
    )


def test_a_digit_separator_in_a_csv_cell_is_not_a_number(tmp_path) -> None:
    path = tmp_path / "u.csv"
    path.write_text("5.1,3.5,1.4,0.2,0\n5_1,3.0,1.4,0.2,0\n6.0,3.0,4.8,1.8,2\n")
    line = one_line(runner.invoke(app, ["evaluate", str(MODEL), "--data", str(path), "--exact"]))
    assert "line 2, column 1: '5_1' is not a number" in line
    first = tmp_path / "first.csv"
    first.write_text("5_1,3.5,1.4,0.2,0\n5.1,3.0,1.4,0.2,0\n")
    assert "'5_1'" in one_line(runner.invoke(app, ["evaluate", str(MODEL), "--data", str(first), "--exact"]))


def test_cache_commands_refuse_a_file_and_prune_removes_only_cache_entries(tmp_path) -> None:
    f = tmp_path / "cfile"
    f.write_text("x")
    assert "is a file, not a cache folder" in one_line(runner.invoke(app, ["cache", "info", "--cache", str(f)]))
    assert "is a file, not a cache folder" in one_line(runner.invoke(app, ["cache", "prune", str(f)]))
    mine = tmp_path / "home" / "ab" / "notes.json"  # a folder given by mistake: not ours to remove
    mine.parent.mkdir(parents=True)
    mine.write_text("{}")
    entry = tmp_path / "home" / "ab" / ("ab" + "0" * 62 + ".json")
    entry.write_text("{}")
    res = runner.invoke(app, ["cache", "prune", str(tmp_path / "home")])
    assert res.exit_code == 0 and "removed 1 entries" in res.stdout
    assert mine.exists() and not entry.exists()


# ------------------------------------------------------------------ run folders

SEARCH = [
    "mutate", str(MODEL), "--operators", "PF", "--reference", "iris:train", "--reference-per-class", "5",
    "--repeats", "5", "--shots", "100", "--k-max", "1", "--batch", "2", "--test", "iris:test", "--seed", "1", "-q",
]  # fmt: skip


def test_a_search_run_with_infinite_effect_sizes_resumes(tmp_path) -> None:
    run = tmp_path / "run"
    first = runner.invoke(app, [*SEARCH, "--out", str(run), "--json", str(tmp_path / "a.json")])
    assert first.exit_code == 0, first.output
    lines = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert any(rec.get("search", {}).get("effect_size", 0) is None for rec in lines), "no non-finite effect size"
    (run / "finished.json").unlink()  # resume through the records, not the finished run's report
    again = runner.invoke(app, [*SEARCH, "--out", str(run), "--json", str(tmp_path / "b.json")])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert "Infinity" not in (run / "results.jsonl").read_text() + (tmp_path / "a.json").read_text()


def test_a_string_where_a_number_belongs_is_one_line_naming_the_field(tmp_path) -> None:
    run = tmp_path / "run"
    assert runner.invoke(app, [*SEARCH, "--out", str(run)]).exit_code == 0
    log = run / "results.jsonl"
    lines = log.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["percentage"] = "abc"
    log.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    line = one_line(runner.invoke(app, [*SEARCH, "--out", str(run)]))
    assert "line 1: field 'percentage': 'abc' is not of type" in line


def test_non_finite_numbers_are_written_as_null() -> None:
    text = report.to_json({"a": float("inf"), "b": [float("nan"), 1.5], "c": 2})
    assert json.loads(text) == {"a": None, "b": [None, 1.5], "c": 2}
    assert report.to_json({"x": 1.25}) == '{\n "x": 1.25\n}\n'


def test_a_baseline_of_another_model_is_refused(tmp_path) -> None:
    args = ["--suite", "qml", "--operators", "ALD", "--test", "iris:test", "--null-copies", "3", "-q"]
    assert runner.invoke(app, ["mutate", str(MODEL), *args, "--out", str(tmp_path / "a")]).exit_code == 0
    assert runner.invoke(app, ["mutate", str(OTHER), *args, "--out", str(tmp_path / "b")]).exit_code == 0
    line = one_line(runner.invoke(app, ["report", str(tmp_path / "a"), "--against", str(tmp_path / "b")]))
    assert "a run of another model" in line
    same = runner.invoke(app, ["report", str(tmp_path / "a"), "--against", str(tmp_path / "a")])
    assert same.exit_code == 0 and "+0.0 points" in same.stdout


def test_a_finished_run_is_replayed_not_run_again(tmp_path, monkeypatch) -> None:
    from qmltest.mutation import pipeline

    run, args = tmp_path / "run", ["mutate", str(MODEL), "--suite", "qml", "--test", "iris:test", "-q"]
    first = runner.invoke(app, [*args, "--out", str(run), "--json", str(tmp_path / "a.json")])
    assert first.exit_code == 0, first.output

    def no_generation(*a, **k):  # noqa: ANN002, ANN003
        raise AssertionError("a finished run generated mutants again")

    monkeypatch.setattr(pipeline, "RunState", no_generation)
    again = runner.invoke(app, [*args, "--out", str(run), "--json", str(tmp_path / "b.json")])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    monkeypatch.undo()
    with (run / "results.jsonl").open("a") as fh:  # the folder changed since: not replayed, resumed
        fh.write((run / "results.jsonl").read_text().splitlines()[0] + "\n")
    monkeypatch.setattr(pipeline, "RunState", no_generation)
    assert runner.invoke(app, [*args, "--out", str(run)]).exit_code != 0


# ------------------------------------------------------------------ long work


def _circuit(gates: int) -> str:
    lines = ["OPENQASM 3.0;", 'include "stdgates.inc";', "input float[64] a;", "qubit[4] q;", "bit[4] c;"]
    lines += [
        f"ry({0.001 * (i % 997):.4f}) q[{i % 4}];" if i % 3 else f"cx q[{i % 4}], q[{(i + 1) % 4}];"
        for i in range(gates)
    ]
    return "\n".join([*lines, "rx(a) q[0];", *(f"c[{k}] = measure q[{k}];" for k in range(4))]) + "\n"


def test_parsing_is_linear_in_the_circuit_size_and_announces_itself(monkeypatch) -> None:
    small, large = _circuit(1500), _circuit(6000)
    qasm.loads(small)  # warm the parser
    t0 = time.perf_counter()
    circuit, spans = qasm.loads(small)
    t1 = time.perf_counter()
    big, big_spans = qasm.loads(large)
    t2 = time.perf_counter()
    assert len(big.data) == 6005 and big_spans[-1] is not None and big_spans[-1].start_line == 6010
    assert (t2 - t1) / (t1 - t0) < 8, f"4x the gates took {(t2 - t1) / (t1 - t0):.1f}x the time"  # quadratic: 16x
    monkeypatch.setattr(qasm, "LARGE", 1000)
    with pytest.warns(Notice, match="parsing big.qasm: 1,510 lines"):
        qasm.loads(small, "big.qasm")


def test_ctrl_c_says_how_to_resume(tmp_path) -> None:
    run = tmp_path / "run"
    argv = [*QMLTEST, "mutate", str(OTHER), "--suite", "qml", "--test", "iris", "--out", str(run), "-q"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not ((run / "results.jsonl").exists() and (run / "results.jsonl").stat().st_size):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before the interrupt arrived")
    assert proc.returncode == 130, err
    assert f"interrupted: finished work is kept in {run}; run the same command again to resume" in err
    assert "Traceback" not in err
