"""Every view of a mutation report is a function of the run folder (issue 58): `qmltest report RUN`
rebuilds the JSON, CSV, JUnit, Stryker and HTML files `mutate` wrote, byte for byte; a format is one
entry of `qmltest.report.views.VIEWS`."""

from __future__ import annotations

from pathlib import Path

from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.report import views

runner = CliRunner()
MODEL = str(Path(__file__).resolve().parents[1] / "data/models/zfm-ra-iris")
FILES = {"json": "r.json", "csv": "r.csv", "junit": "r.xml", "stryker": "s.json"}


def _flags(folder: Path) -> list[str]:
    out = []
    for name, file in FILES.items():
        out += [f"--{name}", str(folder / file)]
    return [*out, "--html", str(folder / "html")]


def test_report_rebuilds_every_view_mutate_wrote(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    args = ["mutate", MODEL, "--suite", "qml", "--operators", "ALD,APGC", "--test", "iris:test", "--null-copies", "5"]
    made = runner.invoke(app, [*args, "-q", "--out", str(tmp_path / "run"), *_flags(tmp_path / "a")])
    assert made.exit_code == 0, made.output
    again = runner.invoke(app, ["report", str(tmp_path / "run"), *_flags(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    for file in [*FILES.values(), "html/index.html", "html/stryker.html"]:
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes(), file
    assert (tmp_path / "a" / "r.csv").read_text().startswith("id,operator,cell,status,percentage,site")


def test_a_format_is_one_entry_of_the_table(tmp_path, monkeypatch) -> None:
    """A new view registered in VIEWS is written by views.write under its name."""
    monkeypatch.setitem(views.VIEWS, "count", views.View("count", "mutants", lambda r, d: f"{len(r['mutants'])}\n"))
    report = {"mutants": [{"id": "a"}, {"id": "b"}]}
    written = views.write(report, None, {"count": tmp_path / "n.txt", "json": None})
    assert written == [tmp_path / "n.txt"] and (tmp_path / "n.txt").read_text() == "2\n"
