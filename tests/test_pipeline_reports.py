"""One mutation pipeline and its reports: strategies x criteria share one schema, re-deciding from a
report equals running with that criterion, Stryker files validate, HTML links only existing files,
`show`, `report`, run configs with flag precedence, `--version`, readable report files."""

from __future__ import annotations

import json
import os
import stat
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

import qmltest
from qmltest import schemas

runner = CliRunner()
MODEL = "data/models/zfm-ra-iris"
SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "stryker-report-schema.json").read_text())
SEARCH = [
    "--operators",
    "PSF,RGD",
    "--reference",
    "iris:train",
    "--reference-per-class",
    "20",
    "--repeats",
    "10",
    "--shots",
    "200",
    "--k-max",
    "3",
    "--batch",
    "4",
]
SITES = ["--suite", "qml", "--operators", "APC,ALD", "--shots", "200"]


def _run(tmp: Path, name: str, args: list[str], criterion: str) -> dict:
    folder = tmp / name
    res = runner.invoke(
        app,
        [
            "mutate",
            MODEL,
            *args,
            "--criterion",
            criterion,
            "--test",
            "iris:test",
            "--seed",
            "3",
            "--out",
            str(folder),
            "--json",
            str(tmp / f"{name}.json"),
            "--stryker",
            str(tmp / f"{name}.stryker.json"),
            "-q",
        ],
    )
    assert res.exit_code == 0, res.output
    return json.loads((tmp / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("pipe")
    out = {}
    for strategy, args in (("search", SEARCH), ("sites", SITES)):
        for criterion in ("statistical", "majority"):
            out[(strategy, criterion)] = _run(tmp, f"{strategy}-{criterion}", args, criterion)
    return tmp, out


def _shape(obj: object) -> object:
    """Keys (recursively, first list item) without values: the schema of a report."""
    if isinstance(obj, dict):
        return {
            k: _shape(v)
            for k, v in obj.items()
            if k
            not in (
                "cells",
                "per_operator",
                "per_cell",
                "operators",
                "suites_info",
                "null",
                "evidence",
                "verdicts",
                "search",
            )
        }
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        return [_shape(obj[0])]
    return None


def test_every_strategy_under_every_criterion_gives_one_schema(runs) -> None:
    _, out = runs
    for r in out.values():
        schemas.validate("mutation-report", r, "report")  # the published schema
    shapes = {k: _shape({k2: v for k2, v in r.items() if k2 != "generation"}) for k, r in out.items()}
    first = next(iter(shapes.values()))
    assert all(s == first for s in shapes.values())
    for (_, criterion), r in out.items():
        assert r["meta"]["format"] == "qmltest.mutation/3" and r["meta"]["criterion"] == criterion
        suite = r["suites"]["iris:test"]
        assert suite["scored_mutants"] == sum(m["status"] in ("killed", "survived") for m in r["mutants"])
        assert 0 <= suite["null_control_kill_rate"] <= 0.2  # identical copies are (almost) never killed
        killed = sum(m["status"] == "killed" for m in r["mutants"])
        assert suite["killed"] == killed


def test_redecide_equals_a_run_with_that_criterion(runs) -> None:
    from qmltest.mutation import pipeline

    tmp, out = runs
    for strategy in ("search", "sites"):
        again = pipeline.redecide(out[(strategy, "majority")], criterion="statistical")
        direct = out[(strategy, "statistical")]
        assert again["suites"] == direct["suites"]
        assert [m["verdicts"] for m in again["mutants"]] == [m["verdicts"] for m in direct["mutants"]]
        res = runner.invoke(
            app,
            [
                "report",
                str(tmp / f"{strategy}-majority"),
                "--criterion",
                "statistical",
                "--json",
                str(tmp / f"{strategy}-re.json"),
            ],
        )
        assert res.exit_code == 0, res.output
        assert json.loads((tmp / f"{strategy}-re.json").read_text())["suites"] == direct["suites"]


def test_holm_never_kills_more_than_no_correction(runs) -> None:
    from qmltest.mutation import pipeline

    _, out = runs
    for strategy in ("search", "sites"):
        base = out[(strategy, "statistical")]
        holm = pipeline.redecide(base, correction="holm")
        bh = pipeline.redecide(base, correction="bh")
        k = lambda r: r["suites"]["iris:test"]["killed"]  # noqa: E731
        assert k(holm) <= k(bh) <= k(base)


def test_stryker_files_validate_against_the_official_schema(runs) -> None:
    tmp, out = runs
    for (strategy, criterion), r in out.items():
        doc = json.loads((tmp / f"{strategy}-{criterion}.stryker.json").read_text())
        jsonschema.validate(doc, SCHEMA)
        (key,) = doc["files"]
        assert key == os.path.relpath(Path(MODEL) / "model.qasm") and doc["files"][key]["source"].startswith(
            "OPENQASM 3"
        )
        assert sum(len(f["mutants"]) for f in doc["files"].values()) == len(r["mutants"])
        killed = [m for m in doc["files"][key]["mutants"] if m["status"] == "Killed"]
        assert killed and all(m["killedBy"] == ["iris:test"] for m in killed)
        lines = doc["files"][key]["source"].splitlines()
        for m in doc["files"][key]["mutants"]:  # the run folder gives every mutant its mutated QASM3
            start, end = m["location"]["start"], m["location"]["end"]
            assert "replacement" in m and 1 <= start["line"] <= end["line"] <= len(lines), m
            assert end["column"] <= len(lines[end["line"] - 1]) + 1
        assert set(doc["testFiles"]) == {"iris:test"}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.tags = 0

    def handle_starttag(self, tag, attrs):
        self.tags += 1
        for k, v in attrs:
            if k in ("src", "href") and v:
                self.links.append(v)


def _check_html(folder: Path) -> list[str]:
    parser = _Links()
    parser.feed((folder / "index.html").read_text())
    assert parser.tags > 10
    for link in parser.links:
        assert not link.startswith(("http:", "https:", "//")), link  # self-contained
        assert (folder / link).is_file(), link
    return parser.links


def test_html_reports_link_only_files_that_exist(runs, tmp_path) -> None:
    tmp, _ = runs
    for name in ("search-statistical", "sites-majority"):
        res = runner.invoke(app, ["report", str(tmp / name), "--html", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
        links = _check_html(tmp_path / name)
        assert "score-per-suite.png" in links and "kill-matrix.png" in links
    assert "kr-cells.png" in _check_html(tmp_path / "search-statistical")
    html = (tmp_path / "sites-majority" / "index.html").read_text()
    assert "Surviving mutants" in html and "Kill rate over the circuit" in html


def test_cover_and_fuzz_html(tmp_path) -> None:
    prof = tmp_path / "p.json"
    assert runner.invoke(app, ["profile", MODEL, "--data", "iris:train", "--out", str(prof), "-q"]).exit_code == 0
    cover = ["cover", MODEL, "--profile", str(prof), "--data", "iris:test", "--k", "10"]
    res = runner.invoke(app, [*cover, "--html", str(tmp_path / "cov"), "--json", str(tmp_path / "cov.json"), "-q"])
    assert res.exit_code == 0, res.output
    assert "ksc-cells.png" in _check_html(tmp_path / "cov")
    schemas.validate("coverage-report", json.loads((tmp_path / "cov.json").read_text()), "cov.json")
    schemas.validate("profile", json.loads(prof.read_text()), "p.json")
    res = runner.invoke(
        app,
        [
            "fuzz",
            MODEL,
            "--profile",
            str(prof),
            "--seeds",
            "iris:test",
            "--per-class",
            "3",
            "--guide",
            "all",
            "--budget",
            "20",
            "--k",
            "10",
            "--out",
            str(tmp_path / "fz"),
            "--html",
            str(tmp_path / "fzh"),
            "-q",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "tsr-per-guide.png" in _check_html(tmp_path / "fzh")
    schemas.validate("fuzz-report", json.loads((tmp_path / "fz" / "report.json").read_text()), "fuzz report")


def test_show_prints_the_diff_of_a_known_mutant(runs) -> None:
    tmp, out = runs
    r = out[("sites", "majority")]
    m = next(m for m in r["mutants"] if m["operator"] == "ALD")
    res = runner.invoke(app, ["show", str(tmp / "sites-majority"), m["id"][:8]])
    assert res.exit_code == 0, res.output
    assert f"mutant {m['id']}: ALD" in res.stdout
    removed = [line for line in res.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed  # ALD deletes gates: the diff shows them
    assert runner.invoke(app, ["show", str(tmp / "sites-majority"), "zzzz"]).exit_code == 2


def test_config_values_and_flag_precedence(tmp_path, monkeypatch) -> None:
    cfg = tmp_path / "qmltest.toml"
    cfg.write_text('[mutate]\nsuite = "qml"\noperators = "APC"\nshots = 100\nseed = 5\ntest = ["iris:test"]\n')
    res = runner.invoke(
        app, ["mutate", MODEL, "--config", str(cfg), "--seed", "6", "--json", str(tmp_path / "a.json"), "-q"]
    )
    assert res.exit_code == 0, res.output
    meta = json.loads((tmp_path / "a.json").read_text())["meta"]
    assert meta["options"]["suite"] == "qml" and meta["options"]["operators"] == ["APC"]
    assert meta["options"]["shots"] == 100 and meta["seed"] == 6  # the flag wins over the config
    monkeypatch.chdir(tmp_path)  # found without --config in the working folder
    res = runner.invoke(app, ["mutate", str(Path(__file__).resolve().parents[1] / MODEL), "--json", "b.json", "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads(Path("b.json").read_text())["meta"]["seed"] == 5
    cfg.write_text('[mutate]\nsuite = "qml"\nbogus = 1\n')
    res = runner.invoke(app, ["mutate", "x", "--config", str(cfg)])
    assert res.exit_code == 2 and "unknown key 'bogus'" in res.stderr
    cfg.write_text('[mutate]\nshots = "many"\n')
    res = runner.invoke(app, ["mutate", "x", "--config", str(cfg)])
    assert res.exit_code == 2 and "shots" in res.stderr


def test_version_and_report_file_mode(runs) -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"qmltest {qmltest.__version__}"
    tmp, _ = runs
    mode = stat.S_IMODE((tmp / "sites-majority.json").stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_old_run_folder_is_refused(tmp_path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    (old / "results.jsonl").write_text('{"id": "abc", "status": "ok"}\n')
    res = runner.invoke(app, ["mutate", MODEL, *SITES, "--test", "iris:test", "--out", str(old), "-q"])
    assert res.exit_code == 2 and "older qmltest" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_a_run_folder_of_the_previous_record_format_is_refused_naming_it(tmp_path) -> None:
    """Format 3 folders kept QuanForge draws under QASM-text ids: resuming one would re-simulate
    every mutant under new ids, so it is refused in one line that names both formats."""
    old = tmp_path / "v3"
    old.mkdir()
    (old / "run.json").write_text('{"format": "qmltest.mutation/3", "fingerprint": {}}')
    (old / "results.jsonl").write_text('{"id": "abc", "status": "ok"}\n')
    res = runner.invoke(app, ["mutate", MODEL, *SITES, "--test", "iris:test", "--out", str(old), "-q"])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "format qmltest.mutation/3" in res.stderr and "qmltest.mutation-run/4" in res.stderr
