"""Start-up: `--version` and `--help` import no command module and none of the heavy libraries;
each command loads only its own module; every entry of the lazy table resolves."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("qiskit", "qiskit_aer", "scipy.stats", "statsmodels", "dask", "matplotlib", "numpy")


def _loaded_after(argv: list[str]) -> dict:
    code = (
        "import sys, json\n"
        f"sys.argv = {['qmltest', *argv]!r}\n"
        "from qmltest_cli.main import run\n"
        "try:\n    run()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(json.dumps({'code': code, 'mods': sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{sorted({h.split('.')[0] for h in HEAVY})!r} or m in {list(HEAVY)!r})}}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_version_and_help_load_no_heavy_library(argv) -> None:
    result = _loaded_after(argv)
    assert result["code"] in (0, 2, None)
    assert [m for m in result["mods"] if m in HEAVY or m.split(".")[0] in HEAVY] == []


def test_every_command_in_the_table_loads() -> None:
    from qmltest_cli import main

    for name in main.COMMANDS:
        cmd = main.load(name)
        assert cmd.name == name and main.COMMANDS[name][2]
