"""The `qmltest` typer app: each command lives in its own module and only parses, calls, renders.

Commands load lazily: `qmltest --version` and `qmltest --help` import no command module (and so
none of qiskit, scipy.stats, statsmodels, dask, matplotlib), and `qmltest CMD` imports only CMD's
module. The table below gives each command's module, attribute and one-line help for the top-level
help page; a test loads every entry.
"""

from __future__ import annotations

import importlib

import typer
from typer import _click as click
from typer.core import TyperGroup

COMMANDS: dict[str, tuple[str, str, str]] = {
    "import": ("import_cmd", "import_model", "Import a trained circuit as a qmltest model and print what was decided."),
    "inspect": ("inspect_cmd", "inspect", "Show the layer/block/gate structure, parameters and readout of a model."),
    "evaluate": (
        "evaluate_cmd",
        "evaluate",
        "Classify a dataset split with the model; print accuracy and per-class accuracy.",
    ),
    "predict": (
        "predict_cmd",
        "predict",
        "Predict every input: its label, prediction and class probabilities (or scores).",
    ),
    "profile": ("profile_cmd", "profile", "Profile l(s), u(s), mean, std, median and MAD per basis state."),
    "cover": ("cover_cmd", "cover", "Coverage of a test suite: totals, per-state detail, growth per input, per part."),
    "diversity": (
        "diversity_cmd",
        "diversity",
        "Input diversity: JS divergence of fidelity distributions vs Haar states.",
    ),
    "mutate": (
        "mutate_cmd",
        "mutate",
        "Mutation testing: one pipeline, any generation strategy with any kill criterion.",
    ),
    "shots": ("mutate_cmd", "shots", "Shots per prediction from Hoeffding's inequality with a union bound."),
    "fuzz": ("fuzz_cmd", "fuzz", "Mutate seeds, keep mutants that raise coverage, collect misclassified ones."),
    "suite": ("suite_cmd", "app", "Test suites of varying quality and attacks (QuanForge Sec. 4.3.1, QCov Table 14)."),
    "diff": ("diff_cmd", "diff", "Where two models, or one model on two targets, answer differently."),
    "merge": ("ci_cmd", "merge", "Join the shards of one mutate run: the report an unsharded run gives."),
    "cache": ("ci_cmd", "cache_app", "The mutate result cache: info, prune."),
    "report": ("report_cmd", "report", "Rebuild a report's views from its JSON alone (no simulation)."),
    "show": ("report_cmd", "show", "One mutant: operator, site, status, verdicts per suite, and its QASM diff."),
    "train": ("train_cmd", "train", "Train with exact adjoint gradients on the batched engine."),
    "noise": ("noise_cmd", "app", "Noise configs (configs/noise/*.toml)."),
    "zoo": ("zoo_cmd", "app", "Benchmark architectures and shipped pretrained models."),
}


def load(name: str) -> click.Command:
    """The click command of one entry, importing its module now."""
    module, attr, _ = COMMANDS[name]
    obj = getattr(importlib.import_module(f"qmltest_cli.{module}"), attr)
    if isinstance(obj, typer.Typer):
        group = typer.main.get_group(obj)
        group.name = name
        return group
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    single.command(name)(obj)
    return typer.main.get_command(single)


class LazyGroup(TyperGroup):
    """Lists commands from COMMANDS and imports one only when it runs (or shows its own help)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load(cmd_name) if cmd_name in COMMANDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry[2]) for name, entry in COMMANDS.items()])


app = typer.Typer(
    name="qmltest",
    cls=LazyGroup,
    help="Test quantum neural networks serialized as OpenQASM 3: coverage, mutation, fuzzing on Qiskit Aer.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain top-level help: it lists COMMANDS without importing them
)


def _version(value: bool) -> None:
    if value:
        import qmltest

        typer.echo(f"qmltest {qmltest.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Test quantum neural networks serialized as OpenQASM 3: coverage, mutation, fuzzing on Qiskit Aer."""
    from qmltest.util import gctune

    # Qiskit, Aer and numpy are imported by now (~200k tracked objects that live as long as the
    # process): freezing them keeps full collections from rescanning them while a run allocates
    # (about 15% of mutant generation time on QCL), and fewer young collections halve DRNN's.
    gctune.settle()


INTERRUPTED = 130
"""Exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it)."""


def run() -> None:
    """Console-script entry point."""
    import sys

    from qmltest_cli import common

    common.COMMAND[:] = ["qmltest", *sys.argv[1:]]
    common.route_warnings()
    try:
        code = app(standalone_mode=False)
    except KeyboardInterrupt:  # outside the command (typer turns one inside into exit code 130)
        code = INTERRUPTED
    except Exception as exc:  # usage errors (bad option values, unknown options): one line, exit 2
        if not (hasattr(exc, "format_message") and hasattr(exc, "exit_code")):
            raise
        if type(exc).__name__ == "NoArgsIsHelpError" and not common.COMMAND[1:]:  # bare `qmltest`: help, as --help
            common.out.print(exc.format_message(), markup=False, highlight=False, soft_wrap=True)
            sys.exit(0)
        if exc.format_message():  # empty for "no arguments: help shown"
            common.err.print(f"error: {exc.format_message()}", markup=False, soft_wrap=True)
        sys.exit(2 if exc.exit_code == 2 else exc.exit_code)
    if code == INTERRUPTED:
        common.err.print(common.interrupted(common.COMMAND), markup=False, soft_wrap=True)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    run()
