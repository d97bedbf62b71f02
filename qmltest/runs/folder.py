"""The run folder: run.json (settings that decide the evidence), results.jsonl (append-only, last line
per id wins, a torn last line cut off) and mutants/<id>/ artifacts, locked for one writer."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from qmltest import schemas
from qmltest.errors import InputError
from qmltest.model import artifact
from qmltest.model.artifact import Model
from qmltest.model.splice import Splicer
from qmltest.runs.lock import RunLock
from qmltest.util import writers as report

_OPEN: list[RunFolder] = []
RUN_FORMAT = "qmltest.mutation-run/4"
"""The run folder's format: 4 keeps one mutant record per search draw and ids from canonical forms."""
FINISHED = "finished.json"
"""Marks a run folder whose run finished: the run's identity, the log's size and the report's hash."""


@contextmanager
def released() -> Iterator[None]:
    """Release the locks of the run folders opened inside the block, however it ends."""
    before = len(_OPEN)
    try:
        yield
    finally:
        while len(_OPEN) > before:
            _OPEN.pop().close()


class RunFolder:
    """Append-only results log (last line per id wins, a torn last line cut off before appending) +
    mutant artifacts; one writer at a time (`runlock`)."""

    def __init__(self, path: Path | None, fresh: bool, fingerprint: dict, original: Model) -> None:
        self.path = path
        self._records: dict[str, dict] | None = None if path is not None else {}
        self._original = original
        self._splicer: Splicer | None = None
        self._checked: set[str] = set()
        self._lock: RunLock | None = None
        self.models = True  # mutant model folders saved (not for a --precision run's temporary folder)
        if path is None:
            return
        self._lock = claim(path)
        _OPEN.append(self)
        log = path / "results.jsonl"
        if fresh:
            log.unlink(missing_ok=True)
            (path / FINISHED).unlink(missing_ok=True)
        if log.exists() and not (path / "run.json").exists():
            raise InputError(
                f"{path}: a run folder of an older qmltest (qmltest.mutation/1) or damaged: "
                "use --force or another --out"
            )
        settle(path, RUN_FORMAT, fingerprint, fresh, "model, data, seed, shots or repeats")
        artifact.save(original.exported(), path / "original")
        if log.is_dir():
            raise InputError(f"{log}: is a directory: this run folder is damaged; use --force or another --out")

    @property
    def records(self) -> dict[str, dict]:
        """The log's records by id, read (and checked) on first use: a finished run replayed never
        reads them (validating 3,000 records took seconds)."""
        if self._records is None:
            self._records = _read_log(self.path / "results.jsonl")  # type: ignore[operator]
        return self._records

    def finished(self, identity: str) -> tuple[dict, str] | None:
        """The report (and its text) of a run with this identity that finished here, when nothing
        has changed the folder since (results.jsonl the size it had, report.json the bytes written)."""
        if self.path is None:
            return None
        try:
            mark = json.loads((self.path / FINISHED).read_text())
            text = (self.path / "report.json").read_text()
            size = _log_bytes(self.path)
        except (OSError, ValueError):
            return None
        if not isinstance(mark, dict) or mark.get("identity") != identity or mark.get("results_bytes") != size:
            return None
        if mark.get("report_sha256") != hashlib.sha256(text.encode()).hexdigest():
            return None
        try:
            result = json.loads(text)
        except ValueError:
            return None
        return (result, text) if isinstance(result, dict) and isinstance(result.get("meta"), dict) else None

    def close(self) -> None:
        """Release the folder's lock (the run is over, or failed)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def append(self, rec: dict) -> None:
        self.records.setdefault(rec["id"], {}).update(rec)
        if self.path is None:
            return
        with open(self.path / "results.jsonl", "a") as fh:
            fh.write(report.dumps(rec) + "\n")  # non-finite numbers as null: every line reads back
            fh.flush()

    def save_model(self, mid: str, model: Model | None) -> None:
        """A mutant's model folder, its text spliced from the original's (`splice`; Qiskit's
        exporter where splicing does not apply) and its manifest checked once per distinct
        preprocessing and readout."""
        if not self.models or self.path is None or model is None:
            return
        if (self.path / "mutants" / mid / "model.json").exists():
            return
        model = _marked_unreachable(model)
        if not model.qasm_text:
            if self._splicer is None:
                self._splicer = Splicer(self._original.ir)
            text = self._splicer.text(model.ir)
            model = model.exported() if text is None else replace(model, qasm_text=text)
        key = json.dumps(
            {k: v for k, v in model.manifest.items() if k not in ("layers", "qasm_sha256")}, sort_keys=True
        )
        artifact.save(model, self.path / "mutants" / mid, validate=key not in self._checked)
        self._checked.add(key)


def _marked_unreachable(model: Model) -> Model:
    """A mutant whose readout map no longer predicts some class (a classic measurement operator
    can do that) saved with `readout.allow_unreachable`, as the manifest asks: it is a legitimate
    mutant, and its folder must load back (the run used to stop on it with exit 2)."""
    ro = model.manifest.get("readout", {})
    if "map" not in ro or ro.get("allow_unreachable"):
        return model
    if all(c in ro["map"] for c in range(len(model.manifest.get("classes", [])))):
        return model
    return model.with_manifest(readout=dict(ro, allow_unreachable=True))


def settle(path: Path, fmt: str, fingerprint: dict, fresh: bool, what: str) -> None:
    """run.json of a claimed run folder: what decides its results (`fingerprint`) under the
    folder format `fmt`. Every command that writes runs (mutate, fuzz) resumes only a folder of its
    own format and fingerprint; another is one line naming `what` decides it, unless `fresh`
    (--force) starts it over."""
    meta = path / "run.json"
    if fresh:
        meta.unlink(missing_ok=True)
    if meta.exists():
        old = report.read_json(meta)
        found = old.get("format") if isinstance(old, dict) else None
        if found != fmt:
            raise InputError(
                f"{path}: a run folder of format {found or 'unknown'}, this command resumes {fmt}: "
                "use --force or another --out"
            )
        if old.get("fingerprint") != fingerprint:
            raise InputError(f"{path}: made with other settings ({what}): use --force or another --out")
    report.write_text_atomic(meta, report.to_json({"format": fmt, "fingerprint": fingerprint}))


def claim(path: Path) -> RunLock:
    """The run folder every command writes (mutate, fuzz), made if absent and locked for this one
    writer: a path that is something else, or a folder in use, is one line."""
    from qmltest.util.files import folder

    return RunLock(folder(path, "--out: a run folder"))


@contextmanager
def claimed(path: Path | None) -> Iterator[None]:
    """`claim` for the length of a block (nothing to claim without --out)."""
    if path is None:
        yield
        return
    with claim(path):
        yield


def _read_log(log: Path) -> dict[str, dict]:
    """Records by id (last line per id wins); a torn last line is cut off first, a garbled line
    skipped (its mutant is redone), a record of the wrong shape one InputError naming its field."""
    records: dict[str, dict] = {}
    if not log.exists():
        return records
    cut_torn_tail(log)
    for n, raw in enumerate(log.read_bytes().splitlines(), 1):
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue  # an interrupted or garbled write: that mutant is simply redone
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
            raise InputError(f"{log}: line {n} is not a mutant record: use --force or another --out")
        if not schemas.is_valid("mutant-record", rec):  # the wrong shape is never used as evidence
            try:
                schemas.validate("mutant-record", rec, f"{log}: line {n}")  # names the field
            except InputError as exc:
                raise InputError(f"{exc}: use --force or another --out") from None
        records.setdefault(rec["id"], {}).update(rec)
    return records


def _log_bytes(path: Path) -> int:
    """The size of a run folder's results.jsonl (0 before its first record)."""
    log = path / "results.jsonl"
    return log.stat().st_size if log.exists() else 0


def write_report(path: Path, identity: str, result: dict) -> str:
    """report.json of the run of `identity`, and finished.json marking it finished over the log as
    it is now (a re-run with the same identity replays this report); the report's text."""
    text = report.to_json(result)
    report.write_text_atomic(path / "report.json", text)
    mark = {
        "identity": identity,
        "results_bytes": _log_bytes(path),
        "report_sha256": hashlib.sha256(text.encode()).hexdigest(),
    }
    report.write_text_atomic(path / FINISHED, report.to_json(mark))
    return text


def cut_torn_tail(log: Path) -> None:
    """A kill, ENOSPC or EFBIG can leave half a line at the end of the log: cut it off, so that the
    next record starts on a line of its own (the half line's mutant is simply redone)."""
    with open(log, "rb+") as fh:
        size = fh.seek(0, 2)
        if size == 0:
            return
        start = max(0, size - (1 << 20))
        fh.seek(start)
        tail = fh.read()
        if tail.endswith(b"\n"):
            return
        cut = tail.rfind(b"\n")
        fh.truncate(start + cut + 1 if cut >= 0 else start)
