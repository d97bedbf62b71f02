"""The report, a pure function of the stored rows: verdicts by the criterion, scores with intervals,
the null control, per-operator and per-cell tables, the kill matrix; re-deciding needs no simulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qmltest.errors import InputError
from qmltest.model.artifact import Model
from qmltest.mutation.evidence import stats
from qmltest.mutation.judge import killing as criteria
from qmltest.mutation.operators.mutant import Mutant
from qmltest.mutation.options import FORMAT
from qmltest.mutation.strategies import sampling
from qmltest.util import intervals
from qmltest.util import writers as report
from qmltest.util.seeds import seed_of


def candidate_row(c: Mutant) -> dict:
    status = c.status
    if status == "scored":
        evs = list(c.evidence.values())
        if evs and all(e.get("status", "").startswith("incompetent") for e in evs):
            status = evs[0]["status"]
        elif evs and all(e.get("status") == "equivalent" for e in evs):
            status = "equivalent"
    return {
        "id": c.id,
        "operator": c.operator,
        "cell": c.cell,
        "site": c.site,
        "status": status,
        "percentage": c.percentage,
        "search": c.search,
        "touched": c.touched,
        "evidence": {
            k: v for k, v in sorted(c.evidence.items()) if v.get("status") == "ok" or v.get("status") == "equivalent"
        },
    }


# ---------------------------------------------------------------- the report (pure)


def build_report(data: dict, criterion: str, correction: str, scoring: str) -> dict:
    """Verdicts, scores and tables from stored rows; re-deciding needs no simulation. A
    regressor's evidence is the statistical criterion's alone, scored plain (`options.for_regressor`)."""
    if data["meta"].get("task") == "regression" and (criterion != "statistical" or scoring != "plain"):
        from qmltest.errors import InputError

        raise InputError(
            f"a regressor's mutants are decided by the statistical test on its errors with the plain score, "
            f"not --criterion {criterion} --scoring {scoring}"
        )
    meta = dict(data["meta"], criterion=criterion, correction=correction, scoring=scoring)
    alpha = meta["options"]["settings"]["alpha"]
    scored = [
        m
        for m in data["mutants"]
        if m["status"] not in ("equivalent", "not-effective") and not m["status"].startswith("incompetent")
    ]
    suites_out, matrix_rows = {}, {m["id"]: [] for m in scored}
    verdicts_by_suite = {}
    for name, info in data["suites_info"].items():
        verdicts, null = _verdicts(data, name, meta, scored)
        verdicts_by_suite[name] = verdicts
        suites_out[name] = _suite_summary(info, verdicts, null, scored, meta)
        for m in scored:
            if m["id"] in verdicts:
                matrix_rows[m["id"]].append(int(verdicts[m["id"]]["killed"]))
    sample = data["generation"].get("sampling")
    if sample:
        for summary in suites_out.values():
            summary["sampling"] = sampled_score(sample, summary["per_operator"])
    mutants = [_mutant_row(m, verdicts_by_suite) for m in data["mutants"]]
    first = next(iter(suites_out.values()), None)
    per_operator_status: dict[str, dict] = {}
    for m in mutants:
        row = per_operator_status.setdefault(m["operator"], {})
        key = "incompetent" if m["status"].startswith("incompetent") else m["status"]
        row[key] = row.get(key, 0) + 1
    warnings = [
        f"{name}: identical copies were killed {100 * s['null_control']['rate']:.1f}% of the time "
        f"({s['null_control']['killed']} of {s['null_control']['copies']}), significantly above alpha = {alpha}: "
        f"the {criterion} scores measure shot noise"
        for name, s in suites_out.items()
        if s["null_control"]["exceeds_alpha"]
    ]
    return {
        "meta": meta,
        "circuit": data["circuit"],
        "generation": data["generation"],
        "suites": suites_out,
        "mutation_score": None if first is None else first["mutation_score"],
        "mutation_score_interval": None if first is None else first["mutation_score_interval"],
        **({"sampling": first["sampling"]} if sample and first is not None else {}),
        "warnings": warnings,
        "operators": dict(sorted(per_operator_status.items())),
        "kill_matrix": {
            "suites": list(suites_out),
            "mutants": sorted(matrix_rows),
            "rows": [matrix_rows[k] for k in sorted(matrix_rows)],
        },
        "mutants": mutants,
        "stored": {"suites_info": data["suites_info"], "null": data["null"]},
    }


def _verdicts(data: dict, name: str, meta: dict, scored: list[dict]) -> tuple[dict, dict]:
    """The criterion's verdicts on one suite's mutants ('killed' follows the scoring, the whole-suite
    verdict kept beside it) and on its null copies."""
    settings = meta["options"]["settings"]
    args = (meta["classes"], meta["criterion"], meta["correction"], settings["alpha"], settings["effect"])
    labels = np.asarray(data["suites_info"][name]["labels"])
    ev = {m["id"]: m["evidence"][name] for m in scored if name in m["evidence"]}
    verdicts = criteria.decide(ev, labels, *args)
    by_class = meta["scoring"] == "class"
    for v in verdicts.values():
        v["killed_overall"] = v["killed"]
        v["killed"] = bool(v["killed_classes"]) if by_class else v["killed_overall"]
        v["undecided"] = bool(v.get("undecided_classes" if by_class else "undecided_overall"))
    return verdicts, criteria.decide(data["null"][name], labels, *args)


def sampled_score(sample: dict, per_operator: dict) -> dict:
    """A sampled run's estimate of the whole population's kill rate (killed / scored) with its
    stratified, finite-population interval (`qmltest.mutation.strategies.sampling`), and sampled k of K."""
    strata = {
        op: sampling.Stratum(
            population=size,
            sampled=sample["sampled"].get(op, 0),
            scored=(per_operator.get(op) or {}).get("total", 0),
            killed=(per_operator.get(op) or {}).get("killed", 0),
        )
        for op, size in sample["population"].items()
    }
    est = sampling.estimate(strata)
    return {
        "sampled": sum(sample["sampled"].values()),
        "population": sum(sample["population"].values()),
        "per_operator": {op: [sample["sampled"].get(op, 0), size] for op, size in sample["population"].items()},
        "seed": sample["seed"],
        "estimate": est["estimate"],
        "interval": est["interval"],
        "confidence": 0.95,
        "method": "stratified by operator, finite-population corrected (Cochran Eq. 5.6; Agresti-Coull per stratum)",
    }


def _suite_summary(info: dict, verdicts: dict, null: dict, scored: list[dict], meta: dict) -> dict:
    """One suite's scores with intervals, its null control and its per-operator / per-cell tables."""
    scoring, num_classes, alpha = meta["scoring"], meta["num_classes"], meta["options"]["settings"]["alpha"]
    null_control = null_summary(null, scoring, len(set(info["labels"])), alpha)
    s = criteria.scores(verdicts, num_classes)
    k, n = criteria.counts(verdicts, num_classes)[scoring]
    shots_used = sum(v.get("shots", 0) for v in verdicts.values())
    return {
        "inputs": info["inputs"],
        "correctly_classified": int(sum(info["correct"])),
        **({"original_mse": info["original_mse"]} if "original_mse" in info else {}),
        "scored_mutants": len(verdicts),
        "killed": sum(v["killed"] for v in verdicts.values()),
        "undecided": sum(v["undecided"] for v in verdicts.values()),
        "class_score": s["class"],
        "plain_score": s["plain"],
        "mutation_score": s[scoring],
        "mutation_score_interval": intervals.wilson(k, n),
        "null_control_kill_rate": null_control["rate"],
        "null_control": null_control,
        "shots_used": shots_used or None,
        "per_operator": _table(scored, verdicts, "operator", scoring, num_classes),
        "per_cell": _table(scored, verdicts, "cell", scoring, num_classes),
    }


def _table(scored: list[dict], verdicts: dict, key: str, scoring: str, num_classes: int) -> dict:
    """Kill counts and scores (with Wilson intervals) grouped by the mutants' operator or cell."""
    table: dict[str, dict] = {}
    for m in scored:
        v = verdicts.get(m["id"])
        if v is None:
            continue
        row = table.setdefault(
            m[key], {"total": 0, "killed": 0, "killed_overall": 0, "killed_classes": 0, "undecided": 0}
        )
        if v["undecided"]:
            row["undecided"] += 1
            continue
        row["total"] += 1
        row["killed"] += int(v["killed"])
        row["killed_overall"] += int(v["killed_overall"])
        row["killed_classes"] += len(v["killed_classes"])
    for row in table.values():
        t = row["total"]
        row["class_score"] = row["killed_classes"] / (t * num_classes) if t and num_classes else None
        row["plain_score"] = row["killed_overall"] / t if t else None
        row["mutation_score"] = row[f"{scoring}_score"]
        hits, trials = (row["killed_classes"], t * num_classes) if scoring == "class" else (row["killed"], t)
        row["interval"] = intervals.wilson(hits, trials)
    return dict(sorted(table.items()))


def _mutant_row(m: dict, verdicts_by_suite: dict) -> dict:
    """A mutant's report row: its stored facts, its verdict per suite and its final status."""
    row = {k: m[k] for k in ("id", "operator", "cell", "site", "status", "percentage", "search", "touched", "evidence")}
    verdicts = {name: by[m["id"]] for name, by in verdicts_by_suite.items() if m["id"] in by}
    row["verdicts"] = verdicts
    if verdicts and row["status"] == "scored":
        if any(v["killed"] for v in verdicts.values()):
            row["status"] = "killed"
        elif any(v["undecided"] for v in verdicts.values()):
            row["status"] = "undecided"
        else:
            row["status"] = "survived"
    return row


def null_summary(null: dict[str, dict], scoring: str, classes_present: int, alpha: float) -> dict:
    """The null control's false-kill count, rate, Clopper-Pearson interval, and whether it is
    significantly above alpha (one-sided exact binomial test at 1%)."""
    if not null:
        return {"copies": 0, "killed": 0, "rate": None, "interval": None, "exceeds_alpha": False}
    if scoring == "class":
        k, n = sum(len(v["killed_classes"]) for v in null.values()), len(null) * max(classes_present, 1)
    else:
        k, n = sum(bool(v.get("killed_overall", v["killed"])) for v in null.values()), len(null)
    return {
        "copies": len(null),
        "killed": k,
        "trials": n,
        "rate": k / n,
        "interval": intervals.clopper_pearson(k, n),
        "exceeds_alpha": intervals.exceeds(k, n, alpha),
    }


def redecide(
    result: dict, criterion: str | None = None, correction: str | None = None, scoring: str | None = None
) -> dict:
    """The same run judged by another criterion / correction / scoring (from a report alone)."""
    meta = result["meta"]
    data = {
        "meta": {k: v for k, v in meta.items() if k not in ("criterion", "correction", "scoring")},
        "circuit": result["circuit"],
        "generation": result["generation"],
        "suites_info": result["stored"]["suites_info"],
        "null": result["stored"]["null"],
        "mutants": [
            dict(m, status="scored" if m["status"] in ("killed", "survived", "undecided") else m["status"])
            for m in result["mutants"]
        ],
    }
    for name, value, allowed in (
        ("criterion", criterion, tuple(criteria.REGISTRY)),
        ("correction", correction, criteria.CORRECTIONS),
        ("scoring", scoring, criteria.SCORINGS),
    ):
        if value is not None and value not in allowed:
            raise InputError(f"--{name} must be one of {', '.join(allowed)}, got '{value}'")
    chosen = criterion or meta["criterion"]
    if correction is None:  # a new criterion brings its own default family control
        correction = meta["correction"] if chosen == meta["criterion"] else criteria.REGISTRY[chosen].default_correction
    return build_report(data, chosen, correction, scoring or meta["scoring"])


def read_report(path: Path) -> dict:
    """A finished run's report.json (a run folder or the file); older formats refused by name."""
    file = path / "report.json" if path.is_dir() else path
    data = report.read_json(file)
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        raise InputError(f"{file}: not a qmltest mutation report")
    fmt = data["meta"].get("format")
    if fmt != FORMAT:
        raise InputError(f"{file}: format '{fmt}' is not {FORMAT}: re-run the mutation with this qmltest")
    return data


def null_kill_rate(
    probs: np.ndarray,
    y: np.ndarray,
    model: Model,
    repeats: int,
    shots: int,
    trials: int,
    seed: int,
    alpha: float = 0.05,
    effect: float = 0.5,
) -> float:
    """Fraction of `trials` in which an identical copy of the model is killed (must stay near alpha)."""
    kills = 0
    for t in range(trials):
        rng = np.random.default_rng(seed_of(seed, "null", t))
        base = stats.accuracy_distribution(probs, y, model.readout_matrix, model.num_classes, repeats, shots, rng)
        copy = stats.accuracy_distribution(probs, y, model.readout_matrix, model.num_classes, repeats, shots, rng)
        kills += stats.is_killed(base, copy, alpha, effect).killed
    return kills / trials


def fixed_design(result: dict) -> dict:
    """A sequential run judged by its fixed design instead (the first `repeats` of its evidence,
    which every sequential run stores): how the two designs' verdicts compare needs one run."""
    import copy

    out = copy.deepcopy(result)
    for m in out["mutants"]:
        for e in m["evidence"].values():
            e.pop("sequential", None)
    for per in out["stored"]["null"].values():
        for e in per.values():
            e.pop("sequential", None)
    return redecide(out)
