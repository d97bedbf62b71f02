"""Null-control false-kill rates of every kill criterion on every shipped model (issue: verdicts).

For each model and suite (Ori and LConf, QuanForge Sec. 4.3.1, 100 inputs per class where the data
allow, else 50), 200 identical copies are scored like mutants (20 repeats x 1000 shots) and judged
by each criterion at its default family control; prints kills / copies with the Clopper-Pearson 95%
interval, and whether the rate is significantly above alpha = 0.05 (one-sided, 1%).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from qmltest import suites
from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.errors import InputError
from qmltest.model import artifact
from qmltest.mutation import pipeline
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.judge import killing as criteria
from qmltest.util import intervals

ROOT = Path(__file__).resolve().parents[1]
COPIES = 200


def dataset_of(name: str) -> str:
    data = name.split("-", 2)[-1]
    return {"mnist01": "mnist", "mnist012": "mnist"}.get(data, data) + ":all"


def rates(model: artifact.Model, data: Data) -> dict[str, dict]:
    opts = pipeline.Options(suite="qml")
    evaluator = Evaluator(model, opts.repeats, opts.shots, opts.seed)
    mask = pipeline.correct_mask(model, evaluator, data)
    ev = {c.id: pipeline.evidence_for(c, data, mask, evaluator, opts) for c in pipeline.null_copies(model, COPIES)}
    out = {}
    for criterion in criteria.CRITERIA:
        v = criteria.decide(
            ev, data.y, model.classes, criterion, criteria.REGISTRY[criterion].default_correction, 0.05, 0.5
        )
        out[criterion] = pipeline.null_summary(v, "plain", len(set(data.y.tolist())), 0.05)
    return out


def main() -> None:
    rows = []
    names = sys.argv[1:] or sorted(p.name for p in (ROOT / "data" / "models").iterdir())
    for name in names:
        model = artifact.load(ROOT / "data" / "models" / name)
        x, labels = datasets.select(dataset_of(name), "all", model.classes, None, 0)
        for kind in ("ori", "lconf"):
            for per_class in (100, 50, 20):
                try:
                    idx = suites.build(model, x, labels, kind, per_class, 0)
                    break
                except InputError:
                    continue
            else:
                continue
            data = Data.of(kind, model, x[idx], labels[idx])
            r = rates(model, data)
            cells = [
                f"{s['killed']:3d}/{s['trials']} {intervals.fmt(s['rate'], s['interval'], True)}"
                + (" !" if s["exceeds_alpha"] else "")
                for s in r.values()
            ]
            print(f"{name:24s} {kind:6s} {per_class:4d}/class  " + "  |  ".join(cells), flush=True)
            rows.append({"model": name, "suite": kind, "per_class": per_class, **r})
    out = ROOT / "runs" / "bench" / "null-control.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    print("columns:", ", ".join(criteria.CRITERIA), "('!': significantly above alpha)")


if __name__ == "__main__":
    main()
