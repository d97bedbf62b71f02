"""The one mutant record of every suite, and the one id recipe (issue 28).

A mutant is made by an operator at a site: a QML/classic site (`qml.Site`, its arguments written in
`site`), or a QuanForge percentage draw (the gates it changed written in `site`). Its id is a
content address: the original's hash, the operator, the site and the mutant's canonical form
(`canonical`), so the same mutant of the same model has the same id in every run, on every worker
and after a resume. A QuanForge draw is identified by its content alone (site ""): two draws that
make one circuit are one mutant, as Algorithm 1's batches count them.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

from qmltest.model.artifact import Model
from qmltest.mutation.operators import delta as delta_mod
from qmltest.mutation.operators.canonical import canonical


def mutant_id(original_sha: str, operator: str, site: str, content: str) -> str:
    """sha256(original hash, operator, site, content)[:16]: the one id recipe."""
    return hashlib.sha256(f"{original_sha}\x1f{operator}\x1f{site}\x1f{content}".encode()).hexdigest()[:16]


def content(mutant: Model | None, keys: dict | None = None, fallback: str = "") -> str:
    """What the id hashes of a mutant: its canonical form's text (`fallback` when there is no model,
    e.g. an incompetent edit, identified by what the operator meant to do)."""
    return fallback if mutant is None else canonical(mutant, keys).text


@dataclass
class Mutant:
    """A generated mutant: where it came from, its model (None when incompetent, and once it is
    scored and saved), Algorithm 1's verdict on it (`search`) and the test suites' evidence.

    status while a QuanForge search runs: ok | equivalent | incompetent: ...; in the report:
    scored | not-effective | equivalent | incompetent: ...
    """

    id: str
    operator: str
    cell: str
    site: str
    model: Model | None
    status: str
    percentage: float | None = None
    search: dict = field(default_factory=dict)
    touched: list[int] = field(default_factory=list)
    evidence: dict[str, dict] = field(default_factory=dict)
    delta: delta_mod.Delta | None = None  # set instead of `model` on the way to a worker
    accuracies: np.ndarray | None = None  # a search draw's accuracies on the reference data

    @property
    def effective(self) -> bool:
        """Killable and non-trivial (QuanForge Sec. 3.2): what Algorithm 1 keeps."""
        return self.status == "ok" and bool(self.search.get("killable")) and bool(self.search.get("nontrivial"))

    @property
    def mean_accuracy(self) -> float:
        return float(np.mean(self.accuracies)) if self.accuracies is not None else math.nan

    def record(self) -> dict:
        """What the run folder keeps of a search draw for resuming: everything but the model."""
        return {
            "id": self.id,
            "operator": self.operator,
            "percentage": self.percentage,
            "site": self.site,
            "status": self.status,
            "accuracies": None if self.accuracies is None else [float(a) for a in self.accuracies],
            "search": dict(self.search),
        }

    @classmethod
    def from_record(cls, rec: dict, model: Model, cell: str = "all") -> Mutant:
        acc = rec.get("accuracies")
        return cls(
            rec["id"],
            rec["operator"],
            cell,
            str(rec.get("site", "")),
            model,
            rec["status"],
            rec.get("percentage"),
            dict(rec.get("search", {})),
            accuracies=None if acc is None else np.asarray(acc, dtype=float),
        )
