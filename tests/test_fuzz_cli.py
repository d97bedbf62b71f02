"""Property-based bad-input tests: generated malformed QASM3, manifests, data files, profiles and noise
configs go through the commands; every outcome is a success or exactly one stderr line with exit 2,
never a traceback, and nothing is written to --out on failure.

Bounded and derandomized in the default run; `make fuzz-cli` runs many more examples
(QMLTEST_FUZZ_EXAMPLES) and prints the count by outcome.
"""

from __future__ import annotations

import atexit
import json
import math
import os
from collections import Counter
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from qmltest_cli.main import app
from typer.testing import CliRunner

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data/models/zfm-ra-iris"
EXAMPLES = int(os.environ.get("QMLTEST_FUZZ_EXAMPLES", "4"))
OUTCOMES: Counter = Counter()
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 50,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


@atexit.register
def _report() -> None:
    if os.environ.get("QMLTEST_FUZZ_EXAMPLES"):
        total = sum(OUTCOMES.values())
        print(f"\nfuzz-cli: {total} generated cases; by outcome: {dict(sorted(OUTCOMES.items()))}")


def check(args: list[str], kind: str, out: Path | None = None) -> None:
    """The invariant: exit 0, or exit 2 with exactly one line on stderr; no traceback; no --out on failure."""
    res = runner.invoke(app, args)
    text = res.stdout + res.stderr
    assert "Traceback" not in text, text
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code in (0, 2), f"exit {res.exit_code}: {text}"
    if res.exit_code == 2:
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
        if out is not None:
            assert not out.exists(), f"{out} written although the command failed"
    OUTCOMES[f"{kind}: exit {res.exit_code}"] += 1


JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
JSON_VALUE = st.recursive(
    JSON_LEAF, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4), max_leaves=12
)


def _paths(obj: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:6]):
            out += _paths(v, (*prefix, i))
    return out


def _mutate_json(doc: object, path: tuple, value: object, delete: bool) -> object:
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]  # type: ignore[index]
    if delete and isinstance(parent, dict):
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = value  # type: ignore[index]
    return doc


def _json_text(doc: object) -> str:
    return json.dumps(doc, allow_nan=True)


MANIFEST = json.loads((MODEL / "model.json").read_text())
MANIFEST_PATHS = [p for p in _paths(MANIFEST) if p != ("qasm_sha256",)]


@SETTINGS
@given(st.sampled_from(MANIFEST_PATHS), JSON_VALUE, st.booleans())
def test_malformed_manifest(tmp_path_factory, path, value, delete) -> None:
    folder = tmp_path_factory.mktemp("m")
    (folder / "model.qasm").write_text((MODEL / "model.qasm").read_text())
    doc = _mutate_json(json.loads(json.dumps(MANIFEST)), path, value, delete)
    (folder / "model.json").write_text(_json_text(doc))
    check(["inspect", str(folder)], "manifest")
    check(["evaluate", str(folder), "--data", "iris:test", "--exact", "-q"], "manifest")


QASM_LINES = (MODEL / "model.qasm").read_text().splitlines()
GARBAGE = st.sampled_from(
    [
        "nan",
        "1e400",
        "-inf",
        "if (x) {",
        "}",
        "qubit[2] q;",
        "foo bar;",
        "rx(",
        "@",
        "\x00",
        "OPENQASM 2.0;",
        "input float[64] x_000;",
        "reset q[0];",
        "measure q[9];",
        "gate g a { h a; }",
        "for int i in [0:2] { h q[0]; }",
        "rzz(0.1) q[0], q[1];",
        "cx q[0], q[0];",
        "",
    ]
)


@SETTINGS
@given(st.integers(0, len(QASM_LINES) - 1), st.sampled_from(["delete", "insert", "replace", "truncate"]), GARBAGE)
def test_malformed_qasm(tmp_path_factory, line, action, token) -> None:
    lines = list(QASM_LINES)
    if action == "delete":
        del lines[line]
    elif action == "insert":
        lines.insert(line, token)
    elif action == "replace":
        lines[line] = lines[line].replace("(", f"({token}", 1) if "(" in lines[line] else token
    else:
        lines = lines[:line]
    path = tmp_path_factory.mktemp("q") / "c.qasm"
    path.write_text("\n".join(lines) + "\n")
    check(["inspect", str(path)], "qasm")
    check(["evaluate", str(path), "--data", "iris:test", "--exact", "-q"], "qasm")


ARRAYS = st.one_of(
    st.builds(lambda r, c, f: np.full((r, c), f), st.integers(0, 4), st.integers(0, 5), st.floats(allow_nan=True)),
    st.builds(lambda r: np.arange(r * 4, dtype=float).reshape(r, 4), st.integers(0, 6)),
    st.builds(lambda r: np.arange(r, dtype=float), st.integers(0, 6)),
    st.builds(lambda s: np.array([s]), st.text(max_size=4)),
)
LABELS = st.one_of(
    st.builds(lambda n, v: np.full(n, v), st.integers(0, 6), st.sampled_from([0, 1, 2, 7, -1, 1.7, np.nan])),
    st.builds(lambda n: np.zeros((n, 2)), st.integers(0, 4)),
)


@SETTINGS
@given(ARRAYS, LABELS, st.booleans(), st.sampled_from(["npz", "csv"]))
def test_malformed_data_file(tmp_path_factory, x, y, with_x, fmt) -> None:
    folder = tmp_path_factory.mktemp("d")
    path = folder / f"data.{fmt}"
    if fmt == "npz":
        np.savez(path, **({"x": x} if with_x else {"X_": x}), y=y)
    else:
        rows = [",".join(map(str, np.atleast_1d(r))) for r in np.atleast_2d(x)] if x.size else []
        path.write_text("\n".join(rows) + ("\n" if rows else ""))
    check(["evaluate", str(MODEL), "--data", str(path), "--exact", "-q"], "data")
    out = folder / "p.json"
    check(["profile", str(MODEL), "--data", str(path), "--out", str(out), "-q"], "data", out)


PROFILE = None


def _profile(tmp: Path) -> dict:
    global PROFILE
    if PROFILE is None:
        out = tmp / "p.json"
        assert (
            runner.invoke(
                app, ["profile", str(MODEL), "--data", "iris:train", "--per-class", "5", "--out", str(out), "-q"]
            ).exit_code
            == 0
        )
        PROFILE = json.loads(out.read_text())
    return json.loads(json.dumps(PROFILE))


@SETTINGS
@given(st.data())
def test_malformed_profile(tmp_path_factory, data) -> None:
    folder = tmp_path_factory.mktemp("p")
    doc = _profile(folder)
    paths = [p for p in _paths(doc) if len(p) < 4]
    path = data.draw(st.sampled_from(paths))
    doc = _mutate_json(doc, path, data.draw(JSON_VALUE), data.draw(st.booleans()))
    (folder / "bad.json").write_text(_json_text(doc))
    check(["cover", str(MODEL), "--profile", str(folder / "bad.json"), "--data", "iris:test", "-q"], "profile")


TOML_VALUES = st.one_of(
    st.integers(-5, 10**10),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.booleans(),
    st.lists(st.integers(-2, 9), max_size=3),
)
TABLES = [
    "noise",
    "depolarizing",
    "bit_flip",
    "thermal_relaxation",
    "readout",
    "crosstalk",
    "drift",
    "backend",
    "bogus",
]
KEYS = [
    "p",
    "p1",
    "p2",
    "t1",
    "t2",
    "time_1q",
    "time_2q",
    "sigma",
    "repetitions",
    "coupling",
    "mode",
    "fake",
    "name",
    "p01",
    "zz_angle",
    "x",
]


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v == math.inf else ("-inf" if v == -math.inf else repr(v)))
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(map(str, v)) + "]"
    return str(v)


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(TABLES), st.dictionaries(st.sampled_from(KEYS), TOML_VALUES, max_size=3), max_size=3
    )
)
def test_malformed_noise_config(tmp_path_factory, tables) -> None:
    path = tmp_path_factory.mktemp("n") / "noise.toml"
    path.write_text(
        "".join(
            f"[{t}]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in body.items()) for t, body in tables.items()
        )
    )
    check(["noise", "show", str(path)], "noise")


# Option values from each option's declared range and its complement (issue 34): inside, the command
# runs (exit 0) or refuses for another reason in one line; outside, it refuses in one line naming the
# option, before any work.
FMAX = 1.7976931348623157e308  # "any finite value": only infinity lies above
MUTATE = ["mutate", str(MODEL), "--suite", "qml", "--operators", "ALD", "--list"]
OPTION_RANGES = [  # (command and option, type, low, high, bounds: "[]" closed, "()" open, "[)" half-open)
    (["evaluate", str(MODEL), "--exact", "--json", "-", "--per-class"], int, 1, 10**7, "[]"),
    (["evaluate", str(MODEL), "--per-class", "2", "--json", "-", "--shots"], int, 1, 10**8, "[]"),
    ([*MUTATE, "--alpha"], float, 0.0, 1.0, "()"),
    ([*MUTATE, "--effect"], float, 0.0, FMAX, "[]"),
    ([*MUTATE, "--tau-rse"], float, 0.0, FMAX, "(]"),
    ([*MUTATE, "--scale"], float, 0.0, FMAX, "(]"),
    ([*MUTATE, "--null-copies"], int, 1, 10**5, "[]"),
    (["shots", "--epsilon"], float, 1e-6, 1.0, "[)"),
    (["shots", "--confidence"], float, 0.0, 1.0, "()"),
    (["shots", "--outputs"], int, 1, 10**9, "[]"),
]


def _value(kind: type, lo: float, hi: float, bounds: str, inside: bool) -> st.SearchStrategy:
    if kind is int:
        if inside:
            return st.integers(int(lo), int(hi))
        return st.one_of(st.integers(max_value=int(lo) - 1), st.integers(min_value=int(hi) + 1, max_value=10**12))
    low_open, high_open = bounds[0] == "(", bounds[1] == ")"
    if inside:
        return st.floats(lo, hi, exclude_min=low_open, exclude_max=high_open, allow_nan=False)
    below = st.floats(max_value=lo, exclude_max=not low_open, allow_nan=False, allow_infinity=True)
    above = st.floats(min_value=hi, exclude_min=not high_open, allow_nan=False, allow_infinity=True)
    return st.one_of(below, above, st.just(float("nan")))


@SETTINGS
@given(st.data())
def test_option_values_inside_and_outside_their_declared_range(data) -> None:
    args, kind, lo, hi, bounds = data.draw(st.sampled_from(OPTION_RANGES))
    inside = data.draw(st.booleans())
    value = data.draw(_value(kind, lo, hi, bounds, inside))
    option = args[-1]
    res = runner.invoke(app, [*args, repr(value) if kind is float else str(value)])
    text = res.stdout + res.stderr
    assert "Traceback" not in text and res.exit_code in (0, 2), f"exit {res.exit_code}: {text}"
    if not inside:
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and option in lines[0], f"{option} {value}: {res.stderr}"
    OUTCOMES[f"option {'inside' if inside else 'outside'}: exit {res.exit_code}"] += 1


# Run folders (issue 31): a finished run's results.jsonl damaged as kills and disks damage it (a
# torn last line, a duplicated line, a dropped line, a garbage line), then the same command again:
# it ends with the solo run's report (byte for byte) or one line, exit 2; never a traceback.
RUN_ARGS = ["mutate", str(MODEL), "--suite", "qml", "--operators", "ALD,APGC", "--exact", "--null-copies", "3", "-q"]
_SOLO: dict = {}


def _solo(tmp: Path) -> bytes:
    if "report" not in _SOLO:
        res = runner.invoke(app, [*RUN_ARGS, "--out", str(tmp / "solo"), "--json", str(tmp / "solo.json")])
        assert res.exit_code == 0, res.output
        _SOLO["report"] = (tmp / "solo.json").read_bytes()
        _SOLO["folder"] = tmp / "solo"
    return _SOLO["report"]


@settings(SETTINGS, max_examples=min(EXAMPLES, 200))
@given(st.sampled_from(["torn", "duplicate", "drop", "garbage"]), st.integers(0, 10**6), st.binary(max_size=40))
def test_damaged_run_folder_resumes_to_the_solo_report_or_one_line(tmp_path_factory, damage, where, junk) -> None:
    import shutil

    tmp = tmp_path_factory.mktemp("runfolder")
    solo = _solo(tmp_path_factory.getbasetemp())
    run = tmp / "run"
    shutil.copytree(_SOLO["folder"], run)
    log = run / "results.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    k = where % len(lines)
    if damage == "torn":
        lines[-1] = lines[-1][: max(1, where % len(lines[-1]))].rstrip(b"\n")
    elif damage == "duplicate":
        lines.insert(k, lines[k])
    elif damage == "drop":
        del lines[k]
    else:
        lines.insert(k, junk.replace(b"\n", b" ") + b"\n")
    log.write_bytes(b"".join(lines))
    res = runner.invoke(app, [*RUN_ARGS, "--out", str(run), "--json", str(tmp / "again.json")])
    text = res.stdout + res.stderr
    assert "Traceback" not in text and res.exit_code in (0, 2), f"exit {res.exit_code}: {text}"
    if res.exit_code == 0:
        assert (tmp / "again.json").read_bytes() == solo, damage
    else:
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    OUTCOMES[f"run folder {damage}: exit {res.exit_code}"] += 1


# Hostile paths and values (issue 57): a report or input path that is a FIFO, a device, a socket, a
# directory, a symlink (good, dangling, looping) or too long; CSV cells with digit separators; two
# outputs on stdout; a baseline run of another model. Every case ends in exit 0 or one line with
# exit 2, and a path that was not a regular file is the same kind of node afterwards.
PATH_KINDS = ["fifo", "null-device", "socket", "directory", "symlink", "dangling", "loop", "too-long", "plain"]


def _hostile(folder: Path, kind: str, name: str) -> tuple[Path, object]:
    """A path of `kind` in `folder` and what keeps it alive (a bound socket, a FIFO reader)."""
    import socket
    import stat as stat_mod
    import threading

    path = folder / name
    keep: object = None
    if kind == "fifo":
        os.mkfifo(path)
        keep = threading.Thread(target=lambda: path.read_bytes(), daemon=True)  # type: ignore[assignment]
        keep.start()  # type: ignore[attr-defined]
    elif kind == "null-device":
        try:
            os.mknod(path, 0o666 | stat_mod.S_IFCHR, os.makedev(1, 3))
        except OSError:
            path.write_text("")  # no mknod here: a plain file stands in
    elif kind == "socket":
        keep = socket.socket(socket.AF_UNIX)
        keep.bind(str(path))  # type: ignore[attr-defined]
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        (folder / "real").write_text("")
        path.symlink_to(folder / "real")
    elif kind == "dangling":
        path.symlink_to(folder / "nowhere")
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "too-long":
        path = folder / ("x" * 4000)
    return path, keep


def _node_kind(path: Path) -> str:
    import stat as stat_mod

    try:
        mode = path.lstat().st_mode
    except OSError:
        return "absent"
    for test, name in ((stat_mod.S_ISLNK, "link"), (stat_mod.S_ISCHR, "chr"), (stat_mod.S_ISFIFO, "fifo")):
        if test(mode):
            return name
    return "sock" if stat_mod.S_ISSOCK(mode) else ("dir" if stat_mod.S_ISDIR(mode) else "file")


@SETTINGS
@given(st.sampled_from(PATH_KINDS), st.sampled_from(["--json", "--csv", "--junit"]))
def test_hostile_output_paths(tmp_path_factory, kind, option) -> None:
    folder = tmp_path_factory.mktemp("out")
    path, keep = _hostile(folder, kind, "report")
    before = _node_kind(path)
    prof = _profile_file(tmp_path_factory.getbasetemp())
    check(["cover", str(MODEL), "--profile", str(prof), "--data", "iris:test", "-q", option, str(path)], "out path")
    assert _node_kind(path) == (before if before != "absent" else _node_kind(path)), f"{kind} replaced"
    if hasattr(keep, "close"):
        keep.close()  # type: ignore[union-attr]


@SETTINGS
@given(st.sampled_from([k for k in PATH_KINDS if k != "plain"]), st.sampled_from(["model", "data", "profile"]))
def test_hostile_input_paths(tmp_path_factory, kind, role) -> None:
    folder = tmp_path_factory.mktemp("in")
    path, keep = _hostile(folder, kind, "input.csv" if role == "data" else "input.qasm")
    if kind == "symlink":  # a link to a good file works as the file does
        target = {"model": MODEL / "model.qasm", "data": None, "profile": None}[role]
        if target is None:
            return
        (folder / "real").write_text(target.read_text())
    args = {
        "model": ["inspect", str(path)],
        "data": ["evaluate", str(MODEL), "--data", str(path), "--exact", "-q"],
        "profile": ["cover", str(MODEL), "--profile", str(path), "--data", "iris:test", "-q"],
    }[role]
    check(args, f"in path {role}")
    if hasattr(keep, "close"):
        keep.close()  # type: ignore[union-attr]


@SETTINGS
@given(st.integers(0, 3), st.integers(0, 3), st.sampled_from(["5_1", "1_0.5", "_1", "1_", "0_0_0", "1__2"]))
def test_digit_separators_in_csv_cells(tmp_path_factory, row, col, cell) -> None:
    rows = [["5.1", "3.5", "1.4", "0.2", "0"], ["6.0", "3.0", "4.8", "1.8", "2"], ["5.9", "3.0", "4.2", "1.5", "1"]]
    rows.append(["6.3", "2.5", "5.0", "1.9", "2"])
    rows[row][col] = cell
    path = tmp_path_factory.mktemp("u") / "u.csv"
    path.write_text("\n".join(",".join(r) for r in rows) + "\n")
    res = runner.invoke(app, ["evaluate", str(MODEL), "--data", str(path), "--exact", "-q"])
    assert res.exit_code == 2 and repr(cell) in res.stderr, res.stderr  # never read as a number
    OUTCOMES["digit separator: exit 2"] += 1


@SETTINGS
@given(st.lists(st.sampled_from(["--json", "--csv", "--junit"]), min_size=2, max_size=3, unique=True))
def test_two_outputs_on_stdout(tmp_path_factory, options) -> None:
    prof = _profile_file(tmp_path_factory.getbasetemp())
    args = ["cover", str(MODEL), "--profile", str(prof), "--data", "iris:test", "-q"]
    for option in options:
        args += [option, "-"]
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "write to stdout" in res.stderr, res.output
    OUTCOMES["two outputs on stdout: exit 2"] += 1


def _profile_file(tmp: Path) -> Path:
    path = tmp / "shared-profile.json"
    if not path.exists():
        path.write_text(json.dumps(_profile(tmp)))
    return path


FOREIGN = [ROOT / "data/models/zzfm-su2-iris", ROOT / "data/models/zfm-ra-iris"]


@settings(SETTINGS, max_examples=min(EXAMPLES, 20))
@given(st.sampled_from(FOREIGN), st.sampled_from(["ALD", "APGC", "ALD,APGC"]))
def test_foreign_baselines(tmp_path_factory, baseline_model, operators) -> None:
    base = tmp_path_factory.getbasetemp() / f"base-{baseline_model.name}-{operators.replace(',', '-')}"
    args = ["--suite", "qml", "--test", "iris:test", "--null-copies", "3", "-q"]
    if not base.exists():
        made = runner.invoke(app, ["mutate", str(baseline_model), *args, "--operators", operators, "--out", str(base)])
        assert made.exit_code == 0, made.output
    here = tmp_path_factory.getbasetemp() / "here-run"
    if not here.exists():
        made = runner.invoke(app, ["mutate", str(MODEL), *args, "--operators", "ALD", "--out", str(here)])
        assert made.exit_code == 0, made.output
    res = runner.invoke(app, ["report", str(here), "--against", str(base)])
    if baseline_model != MODEL:
        assert res.exit_code == 2 and "another model" in res.stderr, res.output
    else:
        assert res.exit_code == 0 and "shared mutants" in res.stdout, res.output
    OUTCOMES[f"foreign baseline: exit {res.exit_code}"] += 1
