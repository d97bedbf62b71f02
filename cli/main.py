"""The `qmltest` typer app: each command lives in its own module and only parses, calls, renders."""

from __future__ import annotations

import typer
from qmltest_cli import (
    cover_cmd,
    diversity_cmd,
    evaluate_cmd,
    fuzz_cmd,
    import_cmd,
    inspect_cmd,
    mutate_cmd,
    noise_cmd,
    profile_cmd,
    report_cmd,
    suite_cmd,
    train_cmd,
    zoo_cmd,
)

app = typer.Typer(
    name="qmltest",
    help="Test quantum neural networks serialized as OpenQASM 3: coverage, mutation, fuzzing on Qiskit Aer.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(zoo_cmd.app, name="zoo")
app.add_typer(noise_cmd.app, name="noise")
app.add_typer(suite_cmd.app, name="suite")
app.command("train")(train_cmd.train)
app.command("import")(import_cmd.import_model)
app.command("inspect")(inspect_cmd.inspect)
app.command("evaluate")(evaluate_cmd.evaluate)
app.command("profile")(profile_cmd.profile)
app.command("cover")(cover_cmd.cover)
app.command("diversity")(diversity_cmd.diversity)
app.command("mutate")(mutate_cmd.mutate)
app.command("shots")(mutate_cmd.shots)
app.command("fuzz")(fuzz_cmd.fuzz)
app.command("report")(report_cmd.report)
app.command("show")(report_cmd.show)


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
    from qmltest import gctune

    # Qiskit, Aer and numpy are imported by now (~200k tracked objects that live as long as the
    # process): freezing them keeps full collections from rescanning them while a run allocates
    # (about 15% of mutant generation time on QCL), and fewer young collections halve DRNN's.
    gctune.settle()


def run() -> None:
    """Console-script entry point."""
    import sys

    from qmltest_cli import common

    common.COMMAND[:] = ["qmltest", *sys.argv[1:]]
    try:
        code = app(standalone_mode=False)
    except Exception as exc:  # usage errors (bad option values, unknown options): one line, exit 2
        if not (hasattr(exc, "format_message") and hasattr(exc, "exit_code")):
            raise
        if exc.format_message():  # empty for "no arguments: help shown"
            common.err.print(f"error: {exc.format_message()}", markup=False, soft_wrap=True)
        sys.exit(2 if exc.exit_code == 2 else exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    run()
