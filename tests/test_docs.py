"""Issue 49: a short README and a documentation site that cannot drift from the code.

- The generated reference pages (CLI from --help, config keys, schemas, operators, performance)
  equal what docs/gen_ref.py makes now: a changed option fails here until `make docs` is run.
- The README stays under 200 lines and its five-minute tour runs as written, with the figures it
  quotes; the API page's example runs with the figures it quotes.
- Every page is in mkdocs.yml's nav, and every relative link between pages points at a page.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_ref", DOCS / "gen_ref.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_reference_pages_are_current() -> None:
    gen = _gen()
    for rel, make in gen.PAGES.items():
        assert (DOCS / rel).read_text() == make(), f"docs/{rel} is stale: run `make docs`"


def test_the_cli_reference_is_every_command_s_help() -> None:
    """Each command of the app has a section holding exactly its --help (so an option added,
    renamed or re-documented changes the page)."""
    gen = _gen()
    page = (DOCS / "reference" / "cli.md").read_text()
    paths = [p for p, _ in gen._tree()]
    assert len(paths) > 20 and ["mutate"] in paths and ["cache", "prune"] in paths
    for path in paths:
        title = " ".join(["qmltest", *path])
        section = page.split(f"## `{title}`\n\n```text\n", 1)[1].split("\n```\n", 1)[0]
        assert section == gen.help_text(path), title
    assert "--fail-under-lower" in page and "--changed-since" in page


def test_readme_is_short_and_links_the_site() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < 200
    assert "make demo" in text and "make test" in text and "docs/index.md" in text
    assert max(len(line) for line in text.splitlines()) <= 160


def _block(text: str, name: str) -> list[str]:
    block = re.search(rf"<!-- {name} -->\n```\n(.*?)```\n<!-- /{name} -->", text, re.DOTALL)
    assert block, f"lost the {name} block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_tour_runs_as_written_and_says_what_it_prints(tmp_path) -> None:
    readme = (ROOT / "README.md").read_text()
    cmds = _block(readme, "tour")
    assert cmds == _block((DOCS / "tutorial.md").read_text(), "tour")  # the tutorial starts with it
    (tmp_path / "data").symlink_to(ROOT / "data")
    env = dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="200")
    out = {}
    for cmd in cmds:
        argv = shlex.split(cmd)
        assert argv[0] == "qmltest"
        res = subprocess.run(
            [sys.executable, "-m", "qmltest_cli.main", *argv[1:]], cwd=tmp_path, capture_output=True, text=True, env=env
        )
        assert res.returncode == 0, (cmd, res.stderr[-2000:])
        out[cmd] = res.stdout + res.stderr
    text = "\n".join(out.values())
    for figure in ("83.3% [66.4, 92.7]", "16.75%", "6.25%", "31.25%", "0.0% [0.0, 1.8]"):
        assert figure in text and figure in readme, figure
    report = json.loads((tmp_path / "work" / "mutation.json").read_text())
    (suite,) = report["suites"].values()
    low, high = suite["mutation_score_interval"]
    assert (
        f"{100 * suite['mutation_score']:.1f}% [{100 * low:.1f}, {100 * high:.1f}] from {suite['scored_mutants']}"
        in readme
    )
    assert high - low <= 2 * 0.05 + 1e-12  # --precision 0.05: at most 0.05 on either side
    assert "80%" in readme and "keep no" not in text
    assert (tmp_path / "work" / "cover" / "index.html").is_file() and (tmp_path / "work" / "mutation.xml").is_file()


def test_the_api_page_example_runs_with_the_figures_it_quotes(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    page = (DOCS / "reference" / "api.md").read_text()
    code = re.search(r"```python\n(.*?)```", page, re.DOTALL).group(1)
    scope: dict = {}
    exec(compile(code, "docs/reference/api.md", "exec"), scope)
    assert round(scope["result"].score, 3) == 0.933 and [round(v, 3) for v in scope["result"].interval] == [0.769, 1.0]
    assert scope["result"].survivors[0]["operator"] == "DFC"


def test_every_page_is_in_the_nav_and_links_resolve() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, re.MULTILINE))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if p.name != "performance.head.md"}
    assert pages == listed, (pages - listed, listed - pages)
    for rel in pages:
        for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", (DOCS / rel).read_text()):
            assert (DOCS / rel).parent.joinpath(target).resolve().is_file(), (rel, target)


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="the [docs] extra is not installed")
def test_the_site_builds_strict(tmp_path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    site = tmp_path / "site"
    api = (site / "reference" / "api.html").read_text()
    assert "qmltest.api.mutate" in api and "assert_mutation_score" in api  # mkdocstrings read the docstrings
    assert "(issue" not in api
    _opens_from_disk(site)
    ci = (site / "howto" / "ci.html").read_text()
    for template in ("github-actions.yml", "github-actions-shards.yml", "gitlab-ci.yml"):
        first = (DOCS / "ci" / template).read_text().splitlines()[0]
        assert html.escape(first, quote=False) in ci, template  # each template is shown on the page
    assert "qmltest from Python" in (site / "examples" / "quickstart.html").read_text()  # the notebook


def _opens_from_disk(site: Path) -> None:
    """Every page's links and pictures point at files that exist (page.html, not a folder a
    browser would list from disk), and search reads its index from a script, not a fetch."""
    pages = [p for p in site.rglob("*.html") if "assets" not in p.parts and p.name != "404.html"]  # 404: servers only
    assert len(pages) > 20
    for page in pages:
        text = page.read_text()
        for ref in re.findall(r'(?:href|src)="([^"#?]+)', text):
            if ref.startswith(("http:", "https:", "mailto:", "data:")):
                continue
            target = (page.parent / ref).resolve()
            assert target.is_file(), (page.relative_to(site), ref)
    assert (site / "search" / "search_index.js").is_file()
    pictures = (("concepts/mutation.html", "mutation-report.png"), ("concepts/coverage.html", "fuzz-report.png"))
    for page, picture in pictures:
        assert f'src="../{picture}"' in (site / page).read_text()


@pytest.mark.browser
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="the [docs] extra is not installed")
def test_site_pages_render_in_headless_chromium(tmp_path) -> None:
    """The built tutorial and CLI pages in Debian's chromium: a screenshot with the theme's header
    colour on top and text below (not a blank or an error page)."""
    import shutil

    import matplotlib.image as mpimg

    if shutil.which("chromium") is None:
        pytest.skip("no chromium on this machine (apt install chromium)")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(site)], cwd=ROOT, check=True, env=env
    )
    cmd = [
        sys.executable,
        str(DOCS / "screenshots.py"),
        "--site",
        str(site),
        "--out",
        str(tmp_path),
        "tutorial",
        "reference/cli",
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    for name in ("tutorial", "reference-cli"):
        img = mpimg.imread(tmp_path / f"{name}.png")[..., :3]
        header, body = img[10:40, 300:900], img[200:1200, 300:1000]
        assert (
            header.std(axis=(0, 1)).max() < 0.05 and header[..., 2].mean() > header[..., 0].mean() + 0.2
        )  # indigo bar
        assert body.std() > 0.1  # dark text on white, not an empty page
