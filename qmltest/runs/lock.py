"""One writer per run folder: an advisory lock on FOLDER/run.lock naming its holder.

`fcntl.flock` locks belong to the open file, so the kernel drops the lock when the holding process
dies (kill -9 included): a killed run's folder is taken over by the next run, with no stale-lock
guesswork. A second writer gets one line naming the holder (pid and host).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from qmltest.errors import InputError

NAME = "run.lock"


class RunLock:
    def __init__(self, folder: Path) -> None:
        import fcntl

        self.path = Path(folder) / NAME
        fh = open(self.path, "a+")  # noqa: SIM115  (held open for the run: the lock lives with it)
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise InputError(
                f"{folder}: in use by a running qmltest ({holder}): wait for it to finish or use another --out"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        """Unlock and close (idempotent); the lock file stays, naming nobody once unlocked."""
        if self._fh is None:
            return
        import fcntl

        fcntl.flock(self._fh, fcntl.LOCK_UN)
        self._fh.close()
        self._fh = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
