"""Option groups: each option declared once, in a group every command that takes it shares.

A group is a function returning {parameter name: (type, typer.Option)} (fresh Option objects per
command); `grouped(...)` appends the groups' parameters to a command's own signature, so a
command reads `**kw` and hands it to the library (`qmltest.api`), which checks the ranges.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.markup import escape

F = TypeVar("F", bound=Callable[..., Any])
Group = dict[str, tuple[Any, Any]]

WORKERS, CLUSTER = "--workers", "--cluster"


def run_options() -> Group:
    """Where the work runs: worker processes, a Dask scheduler, the simulator backend."""
    from qmltest.simulate.backends import REGISTRY

    return {
        "workers": (
            int,
            typer.Option(1, WORKERS, help="Parallel worker processes (a local Dask cluster); 1 runs in-process."),
        ),
        "cluster": (str, typer.Option(None, CLUSTER, help="An existing Dask scheduler, e.g. tcp://scheduler:8786.")),
        "backend": (str, typer.Option("auto", "--backend", help=escape(REGISTRY.help() + "."))),  # qmltest[gpu]
    }


def noise_options() -> Group:
    """Noise: a config file or a target (one of them)."""
    return {
        "noise": (
            Path,
            typer.Option(
                None,
                "--noise",
                help="Noise config TOML (configs/noise/): density matrices on numpy or gpu where they fit, else Aer.",
            ),
        ),
        "target": (
            str,
            typer.Option(
                None, "--target", help="Where the model runs: ideal, noise:FILE or fake:NAME (the device's noise)."
            ),
        ),
    }


def model_options() -> Group:
    """The manifest of a bare .qasm model file."""
    return {"manifest": (Path, typer.Option(None, help="Manifest for a bare .qasm file."))}


def data_options() -> Group:
    """The data a command reads the model's inputs from: a spec or a file, and the split."""
    return {
        "data": (
            str,
            typer.Option(
                None,
                help="Dataset: name[:split] or a file (.npz/.csv/idx:IMAGES,LABELS); default: the model's own data.",
            ),
        ),
        "split": (str, typer.Option("test", help="train, test or all.")),
        "drop_unknown_labels": (
            bool,
            typer.Option(
                False,
                "--drop-unknown-labels",
                help="Leave out a file's rows whose labels are not classes of the model (default: refuse, exit 2).",
            ),
        ),
    }


PANELS = {
    "kill": "Killing: criterion, alpha, effect, shots",
    "search": "QuanForge search (strategy search)",
    "sampling": "Sampling and precision",
    "data": "Test data",
    "output": "Reports and gates",
    "ci": "CI: shards, cache, reruns",
    "run": "Running: backend, workers, seed",
    "noise": "Noise and device targets",
    "model": "Model",
}
"""The --help panel of each option group, named for the person reading it."""


def grouped(*groups: Callable[[], Group]) -> Callable[[F], F]:
    """Append the groups' options to a command's signature (after its own parameters); the
    command takes them as `**kw`."""

    def deco(fn: F) -> F:
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        hints = typing.get_type_hints(fn)
        extra: dict[str, tuple[Any, Any]] = {}
        for group in groups:
            key = group.__name__.removesuffix("_options")
            panel = PANELS.get(key, key.replace("_", " ").capitalize())
            for name, (ann, default) in group().items():
                default.rich_help_panel = default.rich_help_panel or panel  # --help lists the groups
                extra[name] = (ann, default)
        params = own + [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann)
            for name, (ann, default) in extra.items()
        ]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {
            **{k: v for k, v in hints.items() if k != "return"},
            **{k: a for k, (a, _) in extra.items()},
        }
        return wrapper  # type: ignore[return-value]

    return deco
