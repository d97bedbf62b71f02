"""The HTML reports in a real headless browser (issue 30): Debian's chromium driven by Playwright
renders the mutation page, its embedded Stryker viewer loads the report and shows the mutant
count, and the source view shows the model's QASM3. `make test-browser`; skipped cleanly without
Playwright or a chromium."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

pytestmark = pytest.mark.browser
MODEL = Path(__file__).resolve().parents[1] / "data" / "models" / "zfm-ra-iris"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def page():
    sync_api = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("no chromium on this machine (apt install chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser.new_page()
        browser.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("html")
    args = ["mutate", str(MODEL), "--suite", "qml", "--operators", "APC,DFC,ALD", "--shots", "500"]
    args += ["--null-copies", "10", "--html", str(tmp / "html"), "--stryker", str(tmp / "s.json"), "--quiet"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return tmp, json.loads((tmp / "s.json").read_text())


def test_the_viewer_loads_the_report_and_counts_the_mutants(page, report) -> None:
    tmp, doc = report
    total = sum(len(f["mutants"]) for f in doc["files"].values())
    page.goto((tmp / "html" / "stryker.html").as_uri())
    cells = page.locator("td")  # Playwright's locators pierce the viewer's shadow DOM
    cells.first.wait_for(timeout=20_000)
    row = cells.all_inner_texts()
    assert row[0] == "All files" and str(total) in row[:15]
    page.goto((tmp / "html" / "stryker.html").as_uri() + "#mutant/model.qasm")
    page.locator("text=OPENQASM 3.0;").first.wait_for(timeout=20_000)


def test_the_mutation_page_embeds_the_viewer(page, report) -> None:
    tmp, _ = report
    page.goto((tmp / "html" / "index.html").as_uri())
    assert "mutation score" in page.locator("body").inner_text()
    frame = page.frame_locator("iframe[title='Stryker viewer']")
    frame.locator("td").first.wait_for(timeout=20_000)
    assert frame.locator("td").first.inner_text() == "All files"
    images = page.locator("img")
    assert images.count() >= 2 and all(
        page.evaluate("(img) => img.complete && img.naturalWidth > 0", images.nth(i).element_handle())
        for i in range(images.count())
    )


def test_the_fuzz_and_coverage_pages_render_with_their_plots(page, tmp_path) -> None:
    """Every image of the fuzz and coverage pages loads; failures carry their true and predicted labels."""
    model = str(MODEL)
    runner = CliRunner()
    prof = tmp_path / "p.json"
    assert runner.invoke(app, ["profile", model, "--per-class", "20", "--out", str(prof), "-q"]).exit_code == 0
    cover = runner.invoke(app, ["cover", model, "--profile", str(prof), "--html", str(tmp_path / "cov"), "-q"])
    assert cover.exit_code == 0, cover.output
    fuzz = ["fuzz", model, "--profile", str(prof), "--per-class", "10", "--budget", "200", "--out", str(tmp_path / "f")]
    assert runner.invoke(app, [*fuzz, "--html", str(tmp_path / "fz"), "-q"]).exit_code == 0
    for index in (tmp_path / "cov" / "index.html", tmp_path / "fz" / "index.html"):
        page.goto(index.as_uri())
        images = page.locator("img")
        assert images.count() >= 2
        for i in range(images.count()):
            assert page.evaluate("(img) => img.complete && img.naturalWidth > 0", images.nth(i).element_handle())
    captions = page.locator("figcaption").all_inner_texts()
    assert all(c.startswith("true ") and ", predicted " in c for c in captions)
