"""Every kind of run folder qmltest writes resumes after a kill, to outputs byte-identical to an
uninterrupted run's (issue 57): mutate with each strategy and criterion, --precision, shards
merged, and fuzz.

A kill after k records leaves the folder as the run made it up to then: run.json, original/, the
mutants saved so far and the first k lines of results.jsonl (a torn k+1-th line is cut on resume,
tests/test_runfolder.py). So each case runs once whole, then again from copies of its folder cut
back to several points (no report, no finished mark), and compares every output byte for byte.
The default run keeps one point of the cheapest cases; `make test-slow` runs the whole matrix.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "data/models/zfm-ra-iris")
QML = ["mutate", MODEL, "--suite", "qml", "--operators", "ALD,APGC,LS", "--test", "iris:test", "--null-copies", "5"]
CASES = {
    "directed-majority": [*QML],
    "directed-statistical": [*QML, "--criterion", "statistical"],
    "majority-literal-class": [*QML, "--criterion", "majority-literal", "--scoring", "class"],
    "exhaustive": [*QML, "--strategy", "exhaustive"],
    "sequential": [*QML, "--criterion", "statistical", "--sequential"],
    "precision": ["mutate", MODEL, "--suite", "qml", "--test", "iris:test", "--null-copies", "5", "--precision", "0.2"],
    "search": [
        "mutate", MODEL, "--operators", "PF,GR", "--reference", "iris:train", "--reference-per-class", "5",
        "--repeats", "5", "--shots", "100", "--k-max", "1", "--batch", "2", "--test", "iris:test",
    ],
}  # fmt: skip
FAST = {"directed-majority"}
POINTS = (0.0, 0.4, 0.8)


def _outputs(args: list[str], folder: Path, tag: str) -> dict[str, bytes]:
    """Run the command into `folder`; its JSON, CSV and JUnit outputs as bytes."""
    files = {ext: folder.parent / f"{tag}.{ext}" for ext in ("json", "csv", "xml")}
    res = runner.invoke(
        app,
        [*args, "--seed", "2", "-q", "--out", str(folder), "--json", str(files["json"]),
         "--csv", str(files["csv"]), "--junit", str(files["xml"])],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    return {ext: path.read_bytes() for ext, path in files.items()}


def _killed_copy(done: Path, target: Path, fraction: float) -> int:
    """A copy of the finished folder `done` as a kill after `fraction` of its records leaves it."""
    shutil.copytree(done, target)
    for name in ("report.json", "finished.json"):
        (target / name).unlink(missing_ok=True)
    log = target / "results.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    keep = int(len(lines) * fraction)
    log.write_bytes(b"".join(lines[:keep]) + (lines[keep][: len(lines[keep]) // 2] if keep < len(lines) else b""))
    return keep


def _case(name: str) -> object:
    return pytest.param(name, marks=() if name in FAST else pytest.mark.slow)


@pytest.mark.parametrize("name", [_case(n) for n in CASES])
def test_a_killed_mutate_run_resumes_to_the_uninterrupted_outputs(tmp_path, name) -> None:
    args = CASES[name]
    whole = _outputs(args, tmp_path / "whole", "whole")
    points = POINTS if name not in FAST else (0.5,)
    for fraction in points:
        folder = tmp_path / f"cut-{fraction}"
        _killed_copy(tmp_path / "whole", folder, fraction)
        again = _outputs(args, folder, f"cut-{fraction}")
        for ext in whole:
            assert again[ext] == whole[ext], f"{name}: {ext} differs after a kill at {fraction:.0%} of the records"


@pytest.mark.slow
def test_killed_shards_resume_and_merge_to_the_unsharded_report(tmp_path) -> None:
    args = [*QML, "--seed", "2", "-q"]
    assert (
        runner.invoke(app, [*args, "--out", str(tmp_path / "solo"), "--json", str(tmp_path / "solo.json")]).exit_code
        == 0
    )
    for k in (1, 2):
        res = runner.invoke(app, [*args, "--shard", f"{k}/2", "--out", str(tmp_path / f"s{k}")])
        assert res.exit_code == 0, res.output
    shutil.move(tmp_path / "s1", tmp_path / "s1-done")
    _killed_copy(tmp_path / "s1-done", tmp_path / "s1", 0.5)
    res = runner.invoke(app, [*args, "--shard", "1/2", "--out", str(tmp_path / "s1")])
    assert res.exit_code == 0, res.output
    merged = runner.invoke(
        app,
        [
            "merge",
            str(tmp_path / "s1"),
            str(tmp_path / "s2"),
            "--out",
            str(tmp_path / "m"),
            "--json",
            str(tmp_path / "m.json"),
        ],
    )
    assert merged.exit_code == 0, merged.output
    import json

    solo, joined = json.loads((tmp_path / "solo.json").read_text()), json.loads((tmp_path / "m.json").read_text())
    solo["meta"].pop("command"), joined["meta"].pop("command")
    assert joined == solo


@pytest.mark.parametrize(
    "cut", [pytest.param("one guide", marks=()), pytest.param("every guide", marks=pytest.mark.slow)]
)
def test_a_killed_fuzz_run_resumes_to_the_uninterrupted_outputs(tmp_path, cut) -> None:
    prof = tmp_path / "p.json"
    made = runner.invoke(app, ["profile", MODEL, "--data", "iris:train", "--per-class", "5", "--out", str(prof), "-q"])
    assert made.exit_code == 0, made.output
    args = ["fuzz", MODEL, "--profile", str(prof), "--seeds", "iris:test", "--per-class", "3", "--budget", "20"]
    args += ["--guide", "ksc", "--guide", "tsc", "--seed", "4", "-q"]

    def outputs(folder: Path, tag: str) -> dict[str, bytes]:
        files = {ext: tmp_path / f"{tag}.{ext}" for ext in ("json", "csv")}
        res = runner.invoke(
            app, [*args, "--out", str(folder), "--json", str(files["json"]), "--csv", str(files["csv"])]
        )
        assert res.exit_code == 0, res.output
        return {ext: p.read_bytes() for ext, p in files.items()}

    whole = outputs(tmp_path / "whole", "whole")
    shutil.copytree(tmp_path / "whole", tmp_path / "cut")
    gone = ["ksc"] if cut == "one guide" else ["ksc", "tsc"]  # the first guide: the other one is read back
    for guide in gone:  # a kill before these guides were saved
        for path in (tmp_path / "cut").glob(f"{guide}*"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    assert outputs(tmp_path / "cut", "cut") == whole
