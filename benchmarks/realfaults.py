"""`make realfaults`: do mutation scores predict real-fault detection? (issue 62)

Per model (shipped, and imported from qiskit-ml and PennyLane, `realfaults_models`): a pool of
test inputs; suites of varying size and quality (random subsets of 4-32 inputs, QuanForge's
Ori/HConf/LConf/Small/Skewed kinds); mutants of the three operator families (a seeded sample of
each family's sites); the catalogue's faults (`qmltest.faults`). Every mutant and every fault is
judged on every suite by the same kill criterion (QuanForge Eq. 2, `faults.detect`). Written to
results/realfaults/: per-suite tables, Kendall's tau of each predictor against the share of
faults detected (overall and within suites of one size, as Just et al. control for coverage),
the operator-fault coupling matrix, APFD of each prioritisation, a plot per model and README.md.
Usage: python benchmarks/realfaults.py [--quick] [--out DIR] [--models a,b] [--report-only]
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import realfaults_models
import realfaults_report

from qmltest import suites as suite_kinds
from qmltest.coverage import entanglement, measure, priority
from qmltest.coverage import profile as profiling
from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.faults import detect, kinds
from qmltest.model.artifact import Model
from qmltest.mutation.operators import registry
from qmltest.mutation.options import Options
from qmltest.simulate.runner import model_probabilities
from qmltest.util.seeds import seed_of

FAMILIES = ("quanforge", "qml", "classic")
SEED = 62


@dataclass(frozen=True)
class Plan:
    models: tuple[str, ...]
    pool_per_class: int
    sizes: tuple[int, ...]
    replicates: int
    kind_seeds: int
    mutants_per_family: int


FULL = Plan(realfaults_models.SHIPPED + realfaults_models.IMPORTED, 40, (4, 8, 16, 32), 8, 3, 40)
QUICK = Plan(realfaults_models.QUICK, 20, (4, 8, 16), 4, 1, 12)


def pool(model: Model, per_class: int) -> tuple[np.ndarray, np.ndarray]:
    spec = model.manifest["training"]["dataset"]
    return datasets.for_model(f"{spec}:test", "test", model, per_class, SEED)


def make_suites(model: Model, x: np.ndarray, y: np.ndarray, plan: Plan) -> list[tuple[str, str, np.ndarray]]:
    """(name, kind, indices into the pool): random subsets of each size, then QuanForge's kinds."""
    out = []
    for size in plan.sizes:
        for r in range(plan.replicates):
            rng = np.random.default_rng(seed_of(SEED, "random", size, r))
            out.append((f"random-{size}-{r}", "random", np.sort(rng.choice(len(x), min(size, len(x)), replace=False))))
    probs = model_probabilities(model, x)
    per_class = max(2, min(plan.sizes[-1] // max(model.num_classes, 1), 8))
    for kind in suite_kinds.KINDS:
        for s in range(plan.kind_seeds):
            idx = _kind(model, x, y, kind, per_class, seed_of(SEED, kind, s), probs)
            if idx is not None and len(idx) >= 2:
                out.append((f"{kind}-{s}", kind, np.sort(np.asarray(idx))))
    return out


def _kind(model: Model, x: np.ndarray, y: np.ndarray, kind: str, per_class: int, seed: int, probs) -> object:
    """A QuanForge-kind suite of the pool, with fewer inputs per class where the pool has too few
    correctly classified ones (None, and said, when even two are too many)."""
    from qmltest.errors import InputError

    for n in sorted({per_class, max(2, per_class // 2), 2}, reverse=True):
        try:
            return suite_kinds.build(model, x, y, kind, n, seed, probs)
        except InputError as exc:
            reason = str(exc)
    print(f"  {kind}: left out ({reason})", file=sys.stderr)
    return None


def mutants(model: Model, family: str, count: int) -> dict[str, Model]:
    """A seeded sample of one family's site-wise mutants."""
    made = []
    for op in registry.operators(family, None, SEED):
        for site in op.sites(model, directed=False):
            made.append((f"{family}/{op.name}@{site.describe()}", op, site))
    rng = np.random.default_rng(seed_of(SEED, "sample", family, model.sha256))
    chosen = sorted(rng.choice(len(made), min(count, len(made)), replace=False).tolist())
    return {made[i][0]: made[i][1].apply(model, made[i][2]) for i in chosen}


def errs(model: Model, candidate: Model, x: np.ndarray, y_index: np.ndarray) -> np.ndarray:
    """Inputs the candidate misclassifies (exactly) that the original classifies right."""
    right = model.predict(model_probabilities(model, x)) == y_index
    return right & (candidate.predict(model_probabilities(candidate, x)) != y_index)


def study(name: str, plan: Plan, cache: Path) -> dict:
    started = time.perf_counter()
    model = realfaults_models.load(name, cache)
    x, y = pool(model, plan.pool_per_class)
    y_index = np.asarray([model.classes.index(v) for v in y])
    specs = make_suites(model, x, y, plan)
    data = [Data.of(n, model, x[idx], y[idx]) for n, _, idx in specs]
    opts = Options(suite="qml", criterion="statistical", scoring="plain", seed=SEED)
    faulty = {f.id: f.on(model, kinds.Context(raw=x)) for f in kinds.catalogue()}
    faulty = {k: v for k, v in faulty.items() if v is not None}
    fault_v = detect.detected(model, faulty, data, opts)
    fam_models = {fam: mutants(model, fam, plan.mutants_per_family) for fam in FAMILIES}
    mut_v = {fam: detect.detected(model, ms, data, opts) for fam, ms in fam_models.items() if ms}
    train_x, _ = datasets.for_model(f"{model.manifest['training']['dataset']}:train", "train", model, 50, SEED)
    prof = profiling.build(model_probabilities(model, train_x, register="all"), model.sha256)
    trained_q = entanglement.values(model, train_x)
    pool_probs = model_probabilities(model, x, register="all")
    pool_q = entanglement.values(model, x)
    rows = []
    for sname, kind, idx in specs:
        cov = measure.cover(
            [(sname, pool_probs[idx])],
            profiling.Profile(prof.probabilities, prof.model_sha256, {}, trained_q),
            per_input=False,
            entanglement=[pool_q[idx]],
        )["totals"]
        row = {"suite": sname, "kind": kind, "size": int(len(idx)), **{c: round(float(v), 6) for c, v in cov.items()}}
        killed_all = scored_all = 0
        for fam, verdicts in mut_v.items():
            v = verdicts[sname]
            scored = [m for m, d in v.items() if d["status"] == "ok"]
            killed = sum(v[m]["detected"] for m in scored)
            row[f"score_{fam}"] = round(killed / len(scored), 6) if scored else None
            killed_all, scored_all = killed_all + killed, scored_all + len(scored)
        row["score_all"] = round(killed_all / scored_all, 6) if scored_all else None
        found = [k for k, d in fault_v[sname].items() if d["detected"]]
        row["faults_detected"] = len(found)
        row["faults"] = len(faulty)
        row["detection"] = round(len(found) / len(faulty), 6)
        row["detected"] = found
        rows.append(row)
    reveals = np.stack([errs(model, fm, x, y_index) for fm in faulty.values()], axis=1)
    kills = [np.flatnonzero(errs(model, m, x, y_index)).tolist() for ms in fam_models.values() for m in ms.values()]
    orders = {
        "coverage": priority.by_coverage(pool_probs, *profiling.bounds(prof)),
        "kills": priority.by_kills(kills, len(x)),
        "gini": priority.by_gini(model_probabilities(model, x) @ model.readout_matrix),
    }
    return {
        "model": name,
        "imported": name in realfaults_models.IMPORTED,
        "classes": model.classes,
        "pool": int(len(x)),
        "faults": sorted(faulty),
        "not_applicable": sorted({f.id for f in kinds.catalogue()} - set(faulty)),
        "mutants": {fam: len(ms) for fam, ms in fam_models.items()},
        "rows": rows,
        "fault_verdicts": {s: {k: bool(d["detected"]) for k, d in v.items()} for s, v in fault_v.items()},
        "mutant_verdicts": {
            fam: {s: {m: bool(d["detected"]) for m, d in v.items() if d["status"] == "ok"} for s, v in verdicts.items()}
            for fam, verdicts in mut_v.items()
        },
        "reveals": reveals.astype(int).tolist(),
        "orders": orders,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    plan = QUICK if quick else FULL
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else Path("results/realfaults")
    if "--models" in argv:
        plan = Plan(tuple(argv[argv.index("--models") + 1].split(",")), *list(plan.__dict__.values())[1:])
    if "--report-only" in argv:  # the statistics and files again from the stored verdicts
        import json

        doc = json.loads((out / "study.json").read_text())
        studies = [
            {k: v for k, v in st.items() if k not in ("correlations", "coupling", "apfd")} for st in doc["studies"]
        ]
        made = {k: doc[k] for k in ("commit", "code_sha256", "faults_sha256")}
        realfaults_report.write(studies, Plan(**doc["plan"]), out, doc["command"], made)
        return
    made = realfaults_report.provenance()  # before any verdict: later edits cannot move it
    cache = Path("runs/realfaults-models")
    studies = []
    for name in plan.models:
        print(f"{name} ...", file=sys.stderr, flush=True)
        studies.append(study(name, plan, cache))
        print(f"  {studies[-1]['seconds']} s", file=sys.stderr, flush=True)
    realfaults_report.write(studies, plan, out, " ".join(["python", "benchmarks/realfaults.py", *argv]), made)


if __name__ == "__main__":
    main(sys.argv[1:])
