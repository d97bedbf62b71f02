"""Work a run need not redo (issue 47): a content-addressed result cache shared across runs, the
mutants a previous run killed (`--iterate`), the sites an edit of the model left alone
(`--changed-since`), and this run's shard of the mutants (`--shard k/n`).

A cached result is keyed by everything that decides a mutant's evidence: the run fingerprint
(model hash, data fingerprints, seed, shots, repeats, null copies, backend, noise, sequential
design), the mutant's content-derived id (`mutant.mutant_id`: original hash, operator, site,
canonical program), the suites' names (they seed the draws) and the package versions. Entries are
written to a temporary file and renamed into place, so concurrent writers never tear one; two
writers of one key write the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from qmltest import schemas
from qmltest.errors import InputError
from qmltest.util import writers as report

CACHE_FORMAT = "qmltest.cache/1"
ENV = "QMLTEST_CACHE"
_ENTRY = re.compile(r"[0-9a-f]{64}\.json")


@dataclass(frozen=True)
class Reuse:
    """What a run may skip: a cache folder, ids killed before, the gates an edit changed
    (None: every site), and the shard (k, n) of the mutants this run evaluates."""

    cache: Path | None = None
    killed: frozenset[str] = frozenset()
    changed: frozenset[int] | None = None
    shard: tuple[int, int] | None = None

    def left_out(self, position: int, mid: str) -> str | None:
        """Why the mutant made at `position` (generation order) with id `mid` is not this run's
        ("other_shards", "killed_before"), or None where it is."""
        if self.shard is not None and position % self.shard[1] != self.shard[0] - 1:
            return "other_shards"
        return "killed_before" if mid in self.killed else None


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """'k/n' with 1 <= k <= n (one line otherwise)."""
    if text is None:
        return None
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise InputError(f"--shard must be k/n (e.g. 2/3), got '{text}'") from None
    if not 1 <= k <= n:
        raise InputError(f"--shard k/n needs 1 <= k <= n, got '{text}'")
    return k, n


def key(fingerprint: dict, mid: str, suites: list[str]) -> str:
    """The cache key of one mutant's evidence in one run setting (module docstring)."""
    doc = {
        "format": CACHE_FORMAT,
        "fingerprint": fingerprint,
        "id": mid,
        "suites": suites,
        "versions": report.versions(),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def _path(cache: Path, k: str) -> Path:
    return cache / k[:2] / f"{k}.json"


def get(cache: Path, k: str) -> dict | None:
    """The cached record ({suites, touched}), or None (absent or unreadable: then it is redone)."""
    try:
        rec = json.loads(_path(cache, k).read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(rec, dict) and isinstance(rec.get("suites"), dict) and isinstance(rec.get("touched"), list)
    return rec if ok and schemas.is_valid("mutant-record", dict(rec, id=k)) else None  # damaged: redone


def put(cache: Path, k: str, rec: dict) -> None:
    """Write one entry atomically (temporary file in the same folder, then rename)."""
    path = _path(cache, k)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as fh:
            fh.write(report.to_json(rec))
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"--cache {cache}: cannot write ({exc.strerror or exc})") from None


def folder(cache: Path | str) -> Path:
    """The cache folder, checked: a path that exists and is not a folder is one InputError (a
    file given as --cache used to read as an empty cache)."""
    from qmltest.util.files import other_than_folder, shown

    cache = Path(cache)
    try:
        what = other_than_folder(cache)
    except OSError as exc:
        raise InputError(f"--cache {shown(cache)}: {exc.strerror or exc}") from None
    if what is not None:
        raise InputError(f"--cache {shown(cache)}: is {what}, not a cache folder")
    return cache


def entries(cache: Path) -> list[Path]:
    """The cache's entry files: only names this cache writes (<2 hex>/<64 hex>.json), so prune
    never removes a file of a folder given by mistake."""
    if not folder(cache).is_dir():
        return []
    return sorted(f for f in cache.glob("??/*.json") if _ENTRY.fullmatch(f.name) and f.name[:2] == f.parent.name)


def info(cache: Path) -> dict:
    """Entries, bytes and the oldest and newest entry's age in days."""
    files = entries(cache)
    now = time.time()
    ages = [(now - f.stat().st_mtime) / 86400 for f in files]
    return {
        "cache": str(cache),
        "entries": len(files),
        "bytes": sum(f.stat().st_size for f in files),
        "oldest_days": max(ages, default=None),
        "newest_days": min(ages, default=None),
    }


def prune(cache: Path, older_than_days: float | None = None) -> int:
    """Remove entries older than the given days (all without it); how many were removed."""
    now, removed = time.time(), 0
    for f in entries(cache):
        if older_than_days is None or (now - f.stat().st_mtime) / 86400 > older_than_days:
            f.unlink(missing_ok=True)
            removed += 1
    return removed


def changed_gates(old_ir, new_ir) -> frozenset[int]:
    """Indices of the new model's gates that differ from the old model's at the same index (every
    gate from the first difference on when the gate count changed)."""
    old, new = list(old_ir.gates), list(new_ir.gates)
    if len(old) != len(new):
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        return frozenset(range(first, len(new)))
    return frozenset(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
