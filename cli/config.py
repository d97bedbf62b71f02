"""Run configs: option values from TOML, overridden by flags given on the command line.

`--config FILE` reads the command's table (``[mutate]``, ``[fuzz]``, ...) or, for a
``pyproject.toml``, ``[tool.qmltest.<command>]``; without `--config`, a ``qmltest.toml`` or a
``pyproject.toml`` with that table in the working folder is used. Keys are the option names
(``per-class`` or ``per_class``); a key that names no option is refused with the key named.
"""

from __future__ import annotations

import functools
import tomllib
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.markup import escape

from qmltest.errors import InputError

F = TypeVar("F", bound=Callable[..., Any])
AUTO = ("qmltest.toml", "pyproject.toml")


def _table(path: Path, command: str) -> dict | None:
    from qmltest.util.files import readable

    readable(path, "a config file", " (config)")
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("qmltest", {})
    table = data.get(command)
    if table is not None and not isinstance(table, dict):
        raise InputError(f"{path}: [{command}] must be a table of option = value")
    return table


def find(explicit: Path | None, command: str) -> tuple[Path, dict] | None:
    """The config file and the command's table, explicit or found in the working folder."""
    if explicit is not None:
        table = _table(explicit, command)
        return explicit, table or {}
    for name in AUTO:
        path = Path(name)
        if path.is_file():
            table = _table(path, command)
            if table is not None:
                return path, table
    return None


def _is_option(param: object) -> bool:
    return getattr(param, "param_type_name", "") == "option"


def apply(ctx: typer.Context, kwargs: dict, command: str, paths: frozenset[str] = frozenset()) -> dict:
    """kwargs with config values filled in wherever the flag was not given."""
    found = find(kwargs.get("config"), command)
    if found is None:
        return kwargs
    path, table = found
    params = {p.name: p for p in ctx.command.params if p.name}
    by_key = {}
    for p in params.values():
        for opt in getattr(p, "opts", []):
            by_key[opt.lstrip("-")] = p
            by_key[opt.lstrip("-").replace("-", "_")] = p
        by_key[p.name] = p
    out = dict(kwargs)
    for key, value in table.items():
        param = by_key.get(key)
        if param is None or param.name == "config" or not _is_option(param):
            known = sorted(k for k, p in by_key.items() if _is_option(p) and "_" not in k and k != "config")
            raise InputError(f"{path}: unknown key '{key}' in [{command}] (options: {', '.join(known)})")
        source = ctx.get_parameter_source(param.name)
        if source is not None and source.name != "DEFAULT":
            continue  # the command line wins
        if param.multiple and not isinstance(value, list):
            value = [value]
        try:
            out[param.name] = param.process_value(ctx, value)
        except Exception as exc:  # the CLI's own type check (BadParameter) on a config value
            raise InputError(f"{path}: [{command}] {key} = {value!r}: {getattr(exc, 'message', exc)}") from None
        if param.name in paths and out[param.name] is not None:
            out[param.name] = Path(out[param.name])
    return out


def config_option(command: str) -> Any:
    """`--config` of a command: one name and one help text everywhere."""
    return typer.Option(
        None,
        "--config",
        # escaped: Rich reads [evaluate] as a markup tag and drops it from the help
        help=escape(
            f"Run config TOML ([{command}] table; [tool.qmltest.{command}] in pyproject.toml); flags override it."
        ),
    )


def with_config(command: str) -> Callable[[F], F]:
    """Decorate a typer command with `ctx: typer.Context` and a `config` option: config fills unset flags."""

    def deco(fn: F) -> F:
        hints = typing.get_type_hints(fn)
        paths = frozenset(k for k, t in hints.items() if t is Path or Path in typing.get_args(t))

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **apply(kwargs["ctx"], kwargs, command, paths))

        return wrapper  # type: ignore[return-value]

    return deco
