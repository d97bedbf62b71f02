"""A mutation run against a baseline run (`qmltest report RUN --against BASE`): what a reviewer of a
pull request needs. Per suite both scores with their intervals, the difference with a two-sided
Fisher test (the two runs' mutants taken as independent samples), and the mutants that survive now
but were killed in the baseline (matched by content id), and the reverse."""

from __future__ import annotations

from qmltest.util import intervals


def _counts(suite: dict, scoring: str, num_classes: int) -> tuple[int, int]:
    per_op = suite["per_operator"].values()
    if scoring == "class":
        return sum(r["killed_classes"] for r in per_op), sum(r["total"] for r in per_op) * num_classes
    return sum(r["killed"] for r in per_op), sum(r["total"] for r in per_op)


def against(run: dict, base: dict) -> dict:
    """The comparison of two mutation reports (the same suites by name; others are listed apart).

    Both must be runs of one model: a baseline of another model shares no mutant (ids hold the
    original's hash), so a score difference and its test would compare two mutant populations
    as if they were one; such a baseline is one InputError."""
    from qmltest.errors import InputError

    here, there = run["meta"].get("model_sha256"), base["meta"].get("model_sha256")
    if here != there:
        raise InputError(
            f"--against: the baseline is a run of another model ({base['meta'].get('model')}, hash"
            f" {str(there)[:12]}...; this run: {str(here)[:12]}...): it shares no mutant to compare"
        )
    scoring = run["meta"]["scoring"]
    suites = {}
    for name, s in run["suites"].items():
        b = base["suites"].get(name)
        if b is None:
            continue
        k1, n1 = _counts(s, scoring, run["meta"]["num_classes"])
        k0, n0 = _counts(b, base["meta"]["scoring"], base["meta"]["num_classes"])
        suites[name] = {
            "score": s["mutation_score"],
            "interval": s["mutation_score_interval"],
            "baseline_score": b["mutation_score"],
            "baseline_interval": b["mutation_score_interval"],
            "difference": None
            if s["mutation_score"] is None or b["mutation_score"] is None
            else s["mutation_score"] - b["mutation_score"],
            "p_value": intervals.two_proportions(k1, n1, k0, n0),
        }
    status = {m["id"]: m for m in run["mutants"]}
    before = {m["id"]: m for m in base["mutants"]}
    shared = sorted(set(status) & set(before))
    return {
        "criterion": run["meta"]["criterion"],
        "baseline_criterion": base["meta"]["criterion"],
        "same_criterion": run["meta"]["criterion"] == base["meta"]["criterion"],
        "suites": suites,
        "suites_only_here": sorted(set(run["suites"]) - set(base["suites"])),
        "suites_only_in_baseline": sorted(set(base["suites"]) - set(run["suites"])),
        "mutants_shared": len(shared),
        "newly_survived": [
            {"id": i, "operator": status[i]["operator"], "site": status[i]["site"]}
            for i in shared
            if status[i]["status"] == "survived" and before[i]["status"] == "killed"
        ],
        "newly_killed": [
            {"id": i, "operator": status[i]["operator"], "site": status[i]["site"]}
            for i in shared
            if status[i]["status"] == "killed" and before[i]["status"] == "survived"
        ],
    }
