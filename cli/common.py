"""Shared CLI plumbing: one place mapping errors to exit codes, consoles, progress bars, output files."""

from __future__ import annotations

import errno
import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import typer
from qmltest_cli import options
from qmltest_cli.options import CLUSTER, WORKERS
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qmltest.errors import InputError, QmlTestError, SimulatorError
from qmltest.util.files import shown
from qmltest.util.writers import write_text_atomic

EXIT_OK, EXIT_GATE, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
WRITE_ERRORS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted (an immutable file or folder?)",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on the device (finished work is kept: rerun the command to resume)",
    errno.EDQUOT: "disk quota exceeded (finished work is kept: rerun the command to resume)",
    errno.EFBIG: "file too large for this file system",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "a part of the path is not a folder",
}
"""OS errors that mean 'this destination cannot be written': one line and exit 2, not an internal error."""
PATH_ERRORS = {
    errno.ENAMETOOLONG: "file name too long",
    errno.ELOOP: "too many levels of symbolic links",
}
"""OS errors that mean 'this path cannot name a file' (read or write): one line and exit 2."""
PLACEMENT = (WORKERS, CLUSTER)
COMMAND: list[str] = []
"""The command line as typed (set by the console entry point; empty when called from Python)."""


def command_line() -> list[str]:
    """The recorded command line, without the options that only place work (--workers, --cluster):
    they never change a result, so reports made at any worker count stay byte-identical."""
    out, skip = [], False
    for arg in COMMAND:
        if skip:
            skip = False
            continue
        if arg in PLACEMENT:
            skip = True
            continue
        if arg.split("=", 1)[0] in PLACEMENT:
            continue
        out.append(arg)
    return out


PIPE_WIDTH = 400
"""Columns of tables printed into a pipe or file: wide enough that no column is cut (rich would
assume 80 and truncate), without padding (tables keep their natural width)."""
out = Console(highlight=False, emoji=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)
err = Console(stderr=True, highlight=False, emoji=False, width=None if sys.stderr.isatty() else PIPE_WIDTH)

F = TypeVar("F", bound=Callable[..., Any])


def printable(text: str) -> str:
    """Control characters (an escape byte from a file name or value, a newline inside a parser's
    message) written as escapes, so an error stays one line and cannot drive the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def fatal(message: str, code: int = EXIT_INPUT) -> typer.Exit:
    """Print one line on stderr and return the Exit to raise."""
    err.print(f"error: {printable(message)}", markup=False, soft_wrap=True)
    return typer.Exit(code)


def handle_errors(fn: F) -> F:
    """Map qmltest's errors to exit codes: input 2, simulator/internal 3; never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            one_stdout(kwargs)
            return fn(*args, **kwargs)
        except InputError as exc:
            raise fatal(str(exc), EXIT_INPUT) from None
        except FileNotFoundError as exc:
            raise fatal(f"{exc.filename}: no such file", EXIT_INPUT) from None
        except OSError as exc:  # a destination that cannot be written: read-only, immutable, full disk
            if exc.errno in PATH_ERRORS:
                raise fatal(f"{shown(exc.filename or '')}: {PATH_ERRORS[exc.errno]}", EXIT_INPUT) from None
            if exc.errno not in WRITE_ERRORS:
                raise fatal(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL) from None
            where = shown(exc.filename) if exc.filename else "the output"
            raise fatal(f"cannot write {where}: {WRITE_ERRORS[exc.errno]}", EXIT_INPUT) from None
        except SimulatorError as exc:
            raise fatal(str(exc), EXIT_INTERNAL) from None
        except QmlTestError as exc:
            raise fatal(str(exc), EXIT_INTERNAL) from None
        except MemoryError:
            raise fatal(
                "out of memory: the job is too large for this machine (fewer inputs, qubits or cells)"
            ) from None
        except RecursionError:
            raise fatal("input nested too deeply (recursion limit)") from None
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:  # last resort: one line, exit 3 (QMLTEST_DEBUG=1 shows the traceback)
            if os.environ.get("QMLTEST_DEBUG"):
                raise
            raise fatal(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL) from None

    return wrapper  # type: ignore[return-value]


def one_stdout(kwargs: dict[str, Any]) -> None:
    """At most one output may be '-' (stdout): two reports on one stream interleave into neither."""
    dashes = [name for name, value in kwargs.items() if isinstance(value, Path) and str(value) == "-"]
    if len(dashes) > 1:
        shown = " and ".join("--" + n.removesuffix("_out").replace("_", "-") for n in dashes)
        both = "both" if len(dashes) == 2 else "all"
        raise InputError(f"{shown} {both} write to stdout ('-'): give all but one of them a file")


def interrupted(command: list[str]) -> str:
    """The line Ctrl-C prints: what is kept and how to go on (a run folder resumes where it stopped)."""
    folder = next((command[i + 1] for i, a in enumerate(command[:-1]) if a == "--out"), None)
    folder = folder or next((a.split("=", 1)[1] for a in command if a.startswith("--out=")), None)
    if folder is None:
        return "interrupted: nothing was written"
    return f"interrupted: finished work is kept in {folder}; run the same command again to resume"


def show_progress(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


@contextmanager
def progress_bar(description: str, total: int | None, quiet: bool) -> Iterator[Callable[..., None]]:
    """Yield an `advance(k, more=0)` callback (`more` grows the total as work is discovered, for
    runs that learn their size as they go); a rich bar with the total, elapsed time and ETA on a
    terminal, nothing in pipelines or with --quiet."""
    if not show_progress(quiet):
        yield lambda k=1, more=0: None
        return
    from rich.progress import TimeRemainingColumn

    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(description, total=total)

        def advance(k: int = 1, more: int = 0) -> None:
            if more:
                bar.update(task, total=(bar.tasks[task].total or 0) + more)
            bar.advance(task, k)

        yield advance


def write_output(path: Path | None, text: str) -> None:
    """Write a report atomically, or to stdout for '-'."""
    if path is None:
        return
    if str(path) == "-":
        sys.stdout.write(text)
    else:
        write_text_atomic(path, text)


def check_range(name: str, value: int | float | None, low: float, high: float) -> None:
    """One clear error for an option outside its sensible range (`qmltest.api.check_range`)."""
    from qmltest import api

    api.check_range(name, value, low, high)


def parse_list(text: str | None, option: str, cast: type = int) -> list | None:
    """A comma-separated option value as a list of `cast` values (None stays None)."""
    if text is None:
        return None
    try:
        return [cast(c) for c in text.split(",") if c.strip()]
    except ValueError:
        what = "integers" if cast is int else "numbers"
        raise InputError(f"{option} must be comma-separated {what}, got '{text}'") from None


def parse_classes(text: str | None) -> list[int] | None:
    return parse_list(text, "--classes")


def workers_option() -> Any:
    """`--workers` (declared once, in `options.run_options`)."""
    return options.run_options()["workers"][1]


def cluster_option() -> Any:
    """`--cluster` (declared once, in `options.run_options`)."""
    return options.run_options()["cluster"][1]


def backend_option() -> Any:
    """`--backend` (declared once, in `options.run_options`; its help read from the registry)."""
    return options.run_options()["backend"][1]


def with_backend(fn: F) -> F:
    """Check the command's `--backend` against the registry before any work (an unknown name is
    one line and exit 2); the command passes the name on to every library call it makes."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from qmltest.simulate.backends import REGISTRY

        REGISTRY.check(kwargs.get("backend") or "auto")
        return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def model_data(model: Any, spec: str | None, split: str, option: str) -> str:
    """The data spec, defaulting to the model's own data set (`qmltest.api.model_data`)."""
    from qmltest import api

    return api.model_data(model, spec, split, option)


def data_option() -> Any:
    """`--data` (declared once, in `options.data_options`)."""
    return options.data_options()["data"][1]


def split_option() -> Any:
    """`--split` (declared once, in `options.data_options`)."""
    return options.data_options()["split"][1]


def manifest_option() -> Any:
    """`--manifest` (declared once, in `options.model_options`)."""
    return options.model_options()["manifest"][1]


def drop_option() -> Any:
    """`--drop-unknown-labels` (declared once, in `options.data_options`)."""
    return options.data_options()["drop_unknown_labels"][1]


def noise_option() -> Any:
    """`--noise` (declared once, in `options.noise_options`)."""
    return options.noise_options()["noise"][1]


def target_option() -> Any:
    """`--target` (declared once, in `options.noise_options`)."""
    return options.noise_options()["target"][1]


def noise_of(noise: Path | None, target: str | None, hardware: bool = False) -> object | None:
    """The noise config of `--noise FILE` or `--target` (`qmltest.api.noise_of`)."""
    from qmltest import api

    return api.noise_of(noise, target, hardware)


def parse_gates(specs: list[str]) -> dict[str, float]:
    """--fail-under ksc=40 (percent, on cover and fuzz; mutate takes one percent) -> {'ksc': 0.40}."""
    gates = {}
    for spec in specs:
        name, _, value = spec.partition("=")
        from qmltest.coverage import criteria as coverage_criteria  # numpy: not at --help time

        known = coverage_criteria.names(None)
        if name not in known or not value:
            raise InputError(f"--fail-under takes {', '.join(f'{n}=P' for n in known)} (percent), got '{spec}'")
        try:
            gates[name] = float(value) / 100.0
        except ValueError:
            raise InputError(f"--fail-under: '{value}' is not a number") from None
    return gates


def gate_coverage(coverage: dict[str, dict[str, float]], gates: dict[str, float]) -> None:
    """Exit 1 with one line naming each value and its bar when a coverage misses a --fail-under
    gate (`coverage`: criterion values by name; '' for a single, unnamed one)."""
    failed = [line for name, cov in coverage.items() for line in below(cov, gates, f"{name}: " if name else "")]
    if failed:
        err.print("coverage below the bar: " + "; ".join(failed), markup=False)
        raise typer.Exit(EXIT_GATE)
    if gates:  # the verdict either way: a passing gate says what it passed
        met = [
            f"{name + ': ' if name else ''}{k} {100 * cov.get(k, 0.0):.2f}% >= {100 * bar:.2f}%"
            for name, cov in coverage.items()
            for k, bar in gates.items()
        ]
        err.print("coverage gate passed: " + "; ".join(met), markup=False)


def wrote(what: str, path: Path | str) -> None:
    """One stderr line saying where a report went (stdout stays the data a pipeline reads)."""
    err.print(f"wrote {what}: {path}", markup=False)


def below(values: dict[str, float], gates: dict[str, float], what: str = "") -> list[str]:
    """'ksc 12.50% < 40.00%' for each gate the measured values miss (the value and the bar)."""
    return [
        f"{what}{name} {100 * values.get(name, 0.0):.2f}% < {100 * bar:.2f}%"
        for name, bar in gates.items()
        if values.get(name, 0.0) < bar
    ]


def route_warnings() -> None:
    """qmltest's DataWarnings as one 'warning:' line each on stderr; every other Python warning
    (numpy's RuntimeWarnings, libraries' deprecations) stays off the user's terminal."""
    import warnings

    from qmltest.errors import DataWarning, Notice

    def show(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
        if issubclass(category, DataWarning):
            err.print(f"warning: {printable(str(message))}", markup=False, soft_wrap=True)
        elif issubclass(category, Notice) and sys.stderr.isatty():
            err.print(printable(str(message)), markup=False, soft_wrap=True)

    warnings.showwarning = show
    warnings.simplefilter("default", DataWarning)
    warnings.simplefilter("default", Notice)
