"""A screenshot of every page of the built site (site/), rendered by Debian's headless chromium.

Usage: python docs/screenshots.py [--site site] [--out docs/screenshots] [PAGE ...]
Each page of mkdocs.yml's nav becomes docs/screenshots/<page>.png (1280 x 1400, the top of the page).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pages(site: Path) -> list[Path]:
    """The built pages, one PAGE.html per nav entry (use_directory_urls off: the site opens from disk)."""
    skip = ("assets", "search", "stylesheets")
    return sorted(p for p in site.rglob("*.html") if not set(skip) & set(p.parts) and p.name != "404.html")


def shoot(page: Path, png: Path, browser: str, size: str = "1280,1400") -> None:
    png.parent.mkdir(parents=True, exist_ok=True)
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--window-size={size}"]
    cmd += [f"--screenshot={png}", page.resolve().as_uri()]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, default=ROOT / "site")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("only", nargs="*", help="page names (e.g. tutorial, reference/cli); default: all")
    args = ap.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("no chromium on this machine (apt install chromium)", file=sys.stderr)
        return 2
    for page in pages(args.site):
        rel = page.relative_to(args.site).with_suffix("").as_posix()
        if args.only and rel not in args.only:
            continue
        png = args.out / f"{rel.replace('/', '-')}.png"
        shoot(page, png, browser)
        print(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
