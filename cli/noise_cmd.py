"""`qmltest noise show`: what a noise config does, gate by gate on a model."""

from __future__ import annotations

from pathlib import Path

import typer
from qmltest_cli.common import handle_errors, out
from rich.table import Table

from qmltest import api
from qmltest.noise import build
from qmltest.noise.config import load as load_noise

app = typer.Typer(help="Noise configs (configs/noise/*.toml).", no_args_is_help=True)


@app.command("show")
@handle_errors
def show(
    config: Path = typer.Argument(..., help="Noise config TOML."),
    model_path: Path = typer.Option(None, "--model", help="Show the noise on each gate of this model."),
) -> None:
    """Channels, crosstalk couplings, readout and drift; with --model, gate by gate."""
    cfg = load_noise(config)
    out.print(f"{cfg.name} ({cfg.source}), mode {cfg.mode}, sha256 {cfg.sha256[:12]}", markup=False)
    for table, body in cfg.tables.items():
        if table != "noise":
            out.print(f"  [{table}] " + ", ".join(f"{k} = {v}" for k, v in body.items()), markup=False)
    out.print(f"  after 1-qubit gates: {build.describe(cfg, 1)}", markup=False)
    out.print(f"  after 2-qubit gates: {build.describe(cfg, 2)}", markup=False)
    if model_path is None:
        return
    model = api.load(model_path)
    edges = build.coupling_edges(cfg, model.ir.num_qubits) if cfg.has("crosstalk") else []
    t = Table(title=f"noise on {model.manifest['name']}")
    for col in ("#", "gate", "qubits", "channel after the gate", "crosstalk spectators"):
        t.add_column(col)
    channels = {k: build.describe(cfg, k) for k in (1, 2)}
    for i, g in enumerate(model.ir.gates):
        spectators = sorted({b if a in g.qubits else a for a, b in edges if (a in g.qubits) != (b in g.qubits)})
        channel = channels.get(len(g.qubits), "none")
        t.add_row(str(i), g.name, str(list(g.qubits)), channel, str(spectators) if len(g.qubits) == 2 else "-")
    out.print(t)
