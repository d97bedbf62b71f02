"""What a path may be: a regular file to read, or a place a report may be renamed onto.

Every file qmltest reads is checked here before it is opened (a FIFO would block the run forever),
and every atomic write asks `destination` where it may rename to (a rename over a device node
replaces it: as root, over /dev/null, the system's).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from qmltest.errors import InputError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
)


def kind(mode: int) -> str:
    """'a directory', 'a socket', ... for a stat mode that is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def shown(path: Path | str) -> str:
    """A path as an error line names it: cut to 120 characters (a 5,000-character name stays one line)."""
    text = str(path)
    return text if len(text) <= 120 else text[:100] + "..." + text[-17:]


def _stat_error(path: Path, exc: OSError) -> InputError:
    why = {
        errno.ENAMETOOLONG: "file name too long",
        errno.ELOOP: "too many levels of symbolic links",
        errno.ENOTDIR: "a part of the path is not a folder",
        errno.EACCES: "permission denied",
    }.get(exc.errno or 0, exc.strerror or str(exc))
    return InputError(f"{shown(path)}: {why}")


def readable(path: str | Path, what: str = "a file", hint: str = "") -> Path:
    """`path` if it is a regular file (symlinks followed), else one InputError naming what it is.

    Checked before opening: a FIFO or a terminal device given as a model or data file would block
    forever, a directory would fail with an OS message.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError(f"{shown(path)}: no such file{hint}") from None
    except OSError as exc:
        raise _stat_error(path, exc) from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{shown(path)}: is {kind(mode)}, not {what}")
    return path


def destination(path: str | Path) -> Path | None:
    """Where an atomic write may rename to: the path itself, or a symlink's final target (the link
    is followed and stays a link); None for a character device or FIFO, which the caller writes
    through (`--json /dev/null`, `--json >(jq .)`); an InputError for a directory, socket or block
    device, never replaced."""
    path = Path(path)
    try:
        if path.is_symlink():
            path = Path(os.path.realpath(path))  # a dangling link: its target is created; a loop: ELOOP below
        mode = path.stat().st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise _stat_error(path, exc) from None
    if stat.S_ISREG(mode):
        return path
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return None
    raise InputError(f"{shown(path)}: is {kind(mode)}, not a file to write")


def other_than_folder(path: Path) -> str | None:
    """What `path` is when it exists and is not a folder ('a file', 'a socket', ...); None for a
    folder or an absent path. Other stat errors propagate to the caller, which names its option."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(mode):
        return None
    return "a file" if stat.S_ISREG(mode) else kind(mode)


def folder(path: str | Path, what: str = "a report folder") -> Path:
    """`path` as a folder to write into, made if absent; one InputError when it (or a part above
    it) exists and is something else (an HTML report is a folder holding index.html, not a file)."""
    path = Path(path)
    try:
        name = other_than_folder(path)
        if name is not None:
            raise InputError(f"{shown(path)}: is {name}, not a folder ({what}: give a new or existing folder)")
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(f"{shown(path)}: a part of the path is a file, not a folder") from None
    except OSError as exc:
        if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP):
            raise _stat_error(path, exc) from None
        raise
    return path
