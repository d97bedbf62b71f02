"""`make reproduce`, QuanForge: Tables 3, 4, 5, 7, 8 and 9 and the Sec. 4.1 Hoeffding shots."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from repro_common import (
    MODELS,
    ZOO,
    Size,
    Table,
    _bars,
    paired_test,
    pct,
    rates_test,
    stratified_rates_test,
    tested,
)

from qmltest import suites
from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.model import artifact
from qmltest.mutation import pipeline
from qmltest.simulate import engine
from qmltest.simulate.runner import model_probabilities
from qmltest.util import parallel

# ------------------------------------------------------------------ QuanForge


QUANFORGE_TABLE3 = {  # QuanForge Table 3 (MNIST): Ori, HConf, Skewed, Small, LConf, OOD, Aug, Adv
    "qcl": {"ori": 0.7592, "hconf": 0.5523, "skewed": 0.6958, "small": 0.6656, "lconf": 0.8369}
    | {"ood": 0.8474, "aug": 0.8921, "adv": 0.8469},
    "qcnn": {"ori": 0.7327, "hconf": 0.4857, "skewed": 0.6292, "small": 0.6433, "lconf": 0.7816}
    | {"ood": 0.7938, "aug": 0.8419, "adv": 0.7675},
    "drnn": {"ori": 0.6251, "hconf": 0.4506, "skewed": 0.5905, "small": 0.5536, "lconf": 0.7016}
    | {"ood": 0.7654, "aug": 0.6953, "adv": 0.8249},
}
WEAK, STRONG = ("hconf", "skewed", "small"), ("lconf", "ood", "aug", "adv")
KINDS = ("ori",) + WEAK + STRONG


def _reference_and_suites(
    model: artifact.Model, kinds: tuple[str, ...], ref_per_class: int, per_class: int
) -> tuple[Data, list[Data], dict]:
    """The reference set (training split, seed 0) and the suites of Table 3 (QuanForge Sec. 4.3.1)
    from the rest of the MNIST sample: disjoint, as the paper keeps them (the reference decides which
    mutants are effective; the suites score them). Per kind (size, mean confidence of the true class);
    OOD draws from the digits the model does not classify."""
    ds, ref_idx = datasets.select_indices("mnist", "train", model.classes, ref_per_class, 0)
    ref = Data.of("reference", model, ds.x[ref_idx], ds.y[ref_idx], keep_raw=False)
    inside = np.setdiff1d(np.flatnonzero(np.isin(ds.y, model.classes)), ref_idx)
    others = ds.x[~np.isin(ds.y, model.classes)]
    bounds = (float(min(0.0, ds.x.min())), float(ds.x.max()))
    data, conf = [], {}
    for kind in kinds:
        sx, sy, _, _ = suites.derive(
            model, ds.x[inside], ds.y[inside], kind, per_class, 0, bounds, others, ds.image_shape
        )
        conf[kind] = (len(sy), float(suites.confidence(model, sx, sy).mean()))
        data.append(Data.of(kind, model, sx, sy, keep_raw=False))
    return ref, data, conf


def _table3_rows(t: Table, name: str, res: dict, conf: dict) -> None:
    """One model's rows of Table 3: score per suite, and each claimed ordering tested."""
    scores = {k: res["suites"][k]["mutation_score"] for k in conf}
    for kind in conf:
        score, paper = scores[kind], QUANFORGE_TABLE3[name][kind]
        if kind == "ori":  # Ori above every weak suite and below every strong one
            comparisons = [paired_test(res, "ori", w) for w in WEAK] + [paired_test(res, s, "ori") for s in STRONG]
        elif kind in STRONG:
            comparisons = [paired_test(res, kind, "ori")]
        else:
            comparisons = [paired_test(res, "ori", kind)]
        t.rows.append(
            {
                "model": name,
                "suite": kind,
                "inputs": conf[kind][0],
                "mean confidence": round(conf[kind][1], 4),
                "score": None if score is None else round(score, 4),
                "score paper": paper,
                "null kill rate": round(res["suites"][kind]["null_control_kill_rate"], 3),
                "p": round(max(p for _, p in comparisons), 4),
                "verdict": tested(comparisons, score is not None and abs(score - paper) <= 0.1),
            }
        )


def quanforge_table3(size: Size) -> Table:
    """QuanForge Table 3: class-level mutation scores of the original, weak and strong suites."""
    t = Table(
        "quanforge",
        "table3-mutation-scores",
        f"QuanForge Table 3 (MNIST; {', '.join(m.upper() for m in size.qf_models)}): mutation scores of Ori and the "
        "weak (HConf, Skewed, Small) and strong (LConf) suites",
        "weak suites score below Ori, strong suites above: HConf, Skewed, Small < Ori < LConf, OOD, Aug, Adv",
        ["model", "suite", "inputs", "mean confidence", "score", "score paper", "null kill rate", "p", "verdict"],
    )
    effective = {}
    for name in size.qf_models:
        model = artifact.load(MODELS / ZOO[name])
        ref, data, conf = _reference_and_suites(model, KINDS, size.profile, size.qf_per_class)
        opts = pipeline.Options(
            operators=size.qf_operators, repeats=size.qf_repeats, shots=size.qf_shots, seed=1, settings=size.qf_settings
        )
        res, _ = pipeline.run(model, data, opts, ref, where=parallel.plan(size.workers))
        if name == "qcl":
            _QF_RUNS[size.quick] = res
        effective[name] = sum(v["effective"] for v in res["generation"]["cells"]["all"].values())
        _table3_rows(t, name, res, conf)
    counts = ", ".join(f"{k} {v}" for k, v in effective.items())
    t.notes.append(
        f"Effective mutants ({counts}) of operators {', '.join(size.qf_operators) or 'all nine'} "
        f"(reference: {size.profile} training inputs per class), "
        f"suites of {size.qf_per_class} inputs per class from the MNIST sample less the reference inputs "
        f"(disjoint), {size.qf_repeats} repeats x "
        f"{size.qf_shots} shots, statistical killing (alpha 0.05). OOD and Adv replace half of an Ori suite by "
        "digits the model does not classify (labelled by its prediction) / by FGSM inputs (epsilon 64/255) it still "
        "classifies correctly; Aug holds augmented inputs it still classifies correctly. Tolerance 0.1. Each claimed "
        "ordering is McNemar's exact test on the same (mutant, class) kill decisions of the two suites, Holm over a "
        "row's comparisons; p is the largest raw p of the row; 'inconclusive' when not significant at 5%."
    )
    if "drnn" not in size.qf_models:
        t.notes.append("Not run: the paper's DRNN column (about 13 more minutes on 2 cores).")
    t.plot = lambda tab, path: _bars(tab, path, "score", "score paper", lambda r: f"{r['model']}/{r['suite']}")
    t.keys, t.ours, t.theirs = ("model", "suite"), "score", "score paper"
    return t


_QF_RUNS: dict[bool, dict] = {}  # the Table 3 run, reused by Table 7 (same sizes)

QUANFORGE_TABLE7 = {  # QCL (MNIST): KR %, NR % per operator
    "RGA": (83.49, 47.44),
    "RGD": (94.32, 41.35),
    "GR": (87.11, 41.84),
    "GPM": (96.94, 37.50),
    "GSM": (91.84, 48.42),
    "GRT": (91.05, 44.47),
    "PF": (98.75, 53.75),
    "PSF": (91.74, 41.96),
    "PS": (84.20, 46.80),
}
GROUPS = {
    "Add": ("RGA",),
    "Delete": ("RGD",),
    "Replace": ("GR",),
    "Modify (gate)": ("GPM", "GSM", "GRT"),
    "Modify (param)": ("PF", "PSF", "PS"),
}
QUANFORGE_TABLE4 = {  # QCL: group -> (KR, NR) at depth 0-50%, 50-100%
    "Add": ((86.61, 42.56), (85.71, 71.55)),
    "Delete": ((90.75, 51.50), (90.50, 53.50)),
    "Replace": ((86.15, 41.15), (70.48, 68.47)),
    "Modify (gate)": ((91.26, 39.41), (84.37, 43.26)),
    "Modify (param)": ((91.96, 46.31), (86.03, 63.53)),
}
QUANFORGE_TABLE5 = {  # QCL: group -> (KR, NR) on output, non-output qubits
    "Add": ((89.27, 40.98), (85.79, 44.21)),
    "Delete": ((92.96, 41.85), (96.67, 34.33)),
    "Replace": ((82.75, 40.75), (78.95, 54.79)),
    "Modify (gate)": ((86.50, 37.00), (93.75, 32.75)),
    "Modify (param)": ((89.41, 52.56), (93.64, 56.00)),
}


def _kr_nr(cell: dict, ops: tuple[str, ...]) -> tuple[float | None, float | None, int]:
    """Mean KR and NR (%) of the operators present in a cell's generation summary, and their mutants."""
    got = [cell[o] for o in ops if o in cell and cell[o].get("KR") is not None]
    if not got:
        return None, None, 0
    kr = pct(float(np.mean([g["KR"] for g in got])))
    nr = pct(float(np.mean([g["NR"] for g in got])))
    return kr, nr, sum(g["generated"] for g in got)


def _counts(cell: dict, op: str, key: str) -> tuple[int, int]:
    """(mutants that are `key` (killable / nontrivial), scored mutants) of one operator in a cell."""
    s = cell.get(op) or {}
    return int(s.get(key) or 0), int(s.get("scored") or 0)


def _kr_nr_row(got: tuple, paper: tuple[float, float] | None, test: tuple[bool, float] | None) -> dict:
    """The KR/NR columns of one row beside the paper's (None: N/A in the paper), the claim's test
    (direction seen, p) and its verdict (`tested`; tolerance 15 points on both)."""
    kr, nr, n = got
    close = paper is not None and kr is not None and abs(kr - paper[0]) <= 15 and abs(nr - paper[1]) <= 15
    paper = paper or (None, None)
    return {
        "generated": n,
        "KR %": kr,
        "KR paper %": paper[0],
        "NR %": nr,
        "NR paper %": paper[1],
        "p": None if test is None else float(f"{test[1]:.3g}"),
        "verdict": "ours only" if test is None else tested([test], close),
    }


def quanforge_table7(size: Size) -> Table:
    """QuanForge Table 7: each operator's capability of generating killable and non-trivial mutants."""
    t = Table(
        "quanforge",
        "table7-operator-capability",
        "QuanForge Table 7 (MNIST, QCL): KillabilityRate and NontrivialityRate of each operator's mutants",
        "every operator generates mostly killable mutants (KR > 50%), and a minority to a half of them non-trivial",
        ["operator", "generated", "KR %", "KR paper %", "NR %", "NR paper %", "p", "verdict"],
    )
    from scipy.stats import binomtest

    if size.quick not in _QF_RUNS:
        quanforge_table3(size)
    cell = _QF_RUNS[size.quick]["generation"]["cells"]["all"]
    for op, paper in QUANFORGE_TABLE7.items():
        got = _kr_nr(cell, (op,))
        k, n = _counts(cell, op, "killable")
        test = None if got[0] is None or n == 0 else (2 * k > n, float(binomtest(k, n, 0.5).pvalue))
        t.rows.append({"operator": op, **_kr_nr_row(got, paper, test)})
    t.notes.append(
        "From the Table 3 run's generation (binary search per operator). A row holds when KR > 50% by an exact "
        "two-sided binomial test of its killable mutants against 50% (p); tolerance 15 points on both."
    )
    t.plot = lambda tab, path: _bars(tab, path, "KR %", "KR paper %", lambda r: r["operator"])
    t.keys, t.ours, t.theirs = ("operator",), "KR %", "KR paper %"
    return t


def _scoped_run(size: Size, cells: list[pipeline.Cell], operators: tuple[str, ...] | None = None) -> dict:
    """The generation summary per cell of one search on QCL scored on the Ori suite (as Table 3)."""
    return _suites_run(size, size.qf_settings, ("ori",), cells, operators)["generation"]["cells"]


def _region_table(
    size: Size,
    name: str,
    title: str,
    claim: str,
    regions: list[tuple[str, object]],
    paper: dict,
    higher: tuple[str, str],
) -> Table:
    """KR and NR per operator group and region; the claim: NR of region higher[0] above that of
    higher[1], tested per group over its operators (`stratified_rates_test`)."""
    from qmltest.mutation.operators.scope import Scope

    t = Table(
        "quanforge",
        name,
        title,
        claim,
        ["group", "region", "generated", "KR %", "KR paper %", "NR %", "NR paper %", "p", "verdict"],
    )
    cells = _scoped_run(size, [pipeline.Cell(label, Scope(**kw)) for label, kw in regions])  # type: ignore[arg-type]
    hi, lo = higher
    for group, ops in GROUPS.items():
        got = {label: _kr_nr(cells[label], ops) for label, _ in regions}
        strata = [(_counts(cells[hi], o, "nontrivial"), _counts(cells[lo], o, "nontrivial")) for o in ops]
        test = None if any(v[1] is None for v in got.values()) else stratified_rates_test(strata)
        for i, (label, _) in enumerate(regions):
            t.rows.append({"group": group, "region": label, **_kr_nr_row(got[label], paper[group][i], test)})
    t.notes.append(
        "One QuanForge search per region and operator on QCL (reference and Ori suite as in Table 3); groups "
        "average their operators (Modify (gate): GPM, GSM, GRT; Modify (param): PF, PSF, PS). The claim is tested "
        "per group on the non-trivial counts of the two regions' mutants, operators as strata (Cochran-Mantel-"
        "Haenszel; Fisher's exact test for a one-operator group): p. Tolerance 15 points."
    )
    t.plot = lambda tab, path: _bars(tab, path, "NR %", "NR paper %", lambda r: f"{r['group']}\n{r['region']}")
    t.keys, t.ours, t.theirs = ("group", "region"), "NR %", "NR paper %"
    return t


def quanforge_table4(size: Size) -> Table:
    """QuanForge Table 4 (RQ2.1): KR and NR of mutants in the first and second half of the circuit."""
    return _region_table(
        size,
        "table4-depth",
        "QuanForge Table 4 (MNIST, QCL): KR and NR of mutants at depth 0-50% and 50-100%",
        "mutants in the deeper half are more often non-trivial (NR 50-100% > NR 0-50%)",
        [("0-50%", {"depth": (0.0, 0.5)}), ("50-100%", {"depth": (0.5, 1.0)})],
        QUANFORGE_TABLE4,
        ("50-100%", "0-50%"),
    )


def quanforge_table5(size: Size) -> Table:
    """QuanForge Table 5 (RQ2.2): KR and NR of mutants on output and non-output qubits."""
    model = artifact.load(MODELS / ZOO["qcl"])
    out = frozenset(model.ir.measured)
    rest = frozenset(range(model.ir.num_qubits)) - out
    return _region_table(
        size,
        "table5-qubits",
        "QuanForge Table 5 (MNIST, QCL): KR and NR of mutants on the output and the non-output qubits",
        "output-qubit changes disturb the decision boundary more easily: NR(output) < NR(non-output) "
        "(the paper's QCL column itself holds it for 3 of the 5 groups)",
        [("output", {"qubits": out}), ("non-output", {"qubits": rest})],
        QUANFORGE_TABLE5,
        ("non-output", "output"),
    )


QUANFORGE_TABLE6 = {  # QCL (MNIST): (group, gate type) -> (KR %, NR %); None: N/A in the paper
    ("Add", "controlled"): (89.63, 46.67),
    ("Add", "hadamard"): (94.86, 45.14),
    ("Add", "pauli"): (88.89, 36.19),
    ("Add", "phase"): (26.00, 100.0),
    ("Add", "rotation"): (93.68, 61.58),
    ("Add", "swap"): (92.08, 37.92),
    ("Delete", "controlled"): (100.0, 35.42),
    ("Delete", "pauli"): None,
    ("Delete", "rotation"): (94.41, 40.88),
    ("Replace", "controlled"): (87.33, 55.33),
    ("Replace", "pauli"): None,
    ("Replace", "rotation"): (74.17, 49.79),
    ("Modify (gate)", "controlled"): (99.43, 24.00),
    ("Modify (gate)", "pauli"): None,
    ("Modify (gate)", "rotation"): (82.17, 44.35),
    ("Modify (param)", "controlled"): None,
    ("Modify (param)", "pauli"): None,
    ("Modify (param)", "rotation"): (95.20, 57.20),
}
ONE_PER_GROUP = {"Add": "RGA", "Delete": "RGD", "Replace": "GR", "Modify (gate)": "GPM", "Modify (param)": "PF"}


def quanforge_table6(size: Size) -> Table:
    """QuanForge Table 6 (RQ2.3): KR and NR of mutants restricted to one gate type (Table 1's
    categories: the type added for Add, the type of the gates mutated for the others)."""
    from qmltest.mutation.operators.scope import Scope

    t = Table(
        "quanforge",
        "table6-gate-types",
        "QuanForge Table 6 (MNIST, QCL): KR and NR of mutants targeted at each gate type",
        "adding Hadamard or SWAP gates is more disruptive (lower NR) than adding phase or rotation gates; deleting "
        "or modifying controlled gates is more disruptive than rotation gates on amplitude-encoded QCL (the paper's "
        "QCL column holds it for Delete and Modify (gate), not Replace)",
        ["group", "gate type", "generated", "KR %", "KR paper %", "NR %", "NR paper %", "p", "verdict"],
    )
    added = ("controlled", "hadamard", "pauli", "phase", "rotation", "swap")
    mutated, groups_mutated = ("controlled", "pauli", "rotation"), tuple(g for g in GROUPS if g != "Add")
    if size.quick:  # two types for Add and for Delete
        added, mutated, groups_mutated = ("hadamard", "rotation"), ("controlled", "rotation"), ("Delete",)
    got: dict[tuple[str, str], tuple] = {}
    counts: dict[tuple[str, str], tuple[int, int]] = {}  # (non-trivial, scored)
    for types, groups in ((added, ("Add",)), (mutated, groups_mutated)):
        ops = tuple(ONE_PER_GROUP[g] for g in groups)
        cells = _scoped_run(size, [pipeline.Cell(k, Scope(gate_types=(k,))) for k in types], ops)
        got |= {(g, k): _kr_nr(cells[k], (ONE_PER_GROUP[g],)) for g in groups for k in types}
        counts |= {(g, k): _counts(cells[k], ONE_PER_GROUP[g], "nontrivial") for g in groups for k in types}

    def above(g: str, high: tuple[str, ...], low: tuple[str, ...]) -> tuple[bool, float] | None:
        """NR of the `high` types (pooled) above the `low` ones: Fisher's exact test."""
        if any(got.get((g, k), (None, None, 0))[1] is None for k in high + low):
            return None
        pooled = [tuple(sum(counts[(g, k)][i] for k in ks) for i in (0, 1)) for ks in (high, low)]
        return rates_test(pooled[0], pooled[1])  # type: ignore[arg-type]

    for (g, k), row in got.items():
        if g == "Add":
            disruptive = tuple(x for x in ("hadamard", "swap") if x in added)
            test = above(g, tuple(x for x in ("phase", "rotation") if x in added), disruptive)
        else:
            test = above(g, ("rotation",), ("controlled",)) if k in ("controlled", "rotation") else None
        t.rows.append({"group": g, "gate type": k, **_kr_nr_row(row, QUANFORGE_TABLE6.get((g, k)), test)})
    t.notes.append(
        "One QuanForge search per gate type with one operator per group (RGA, RGD, GR, GPM, PF; the paper averages "
        "GPM, GSM, GRT and PF, PSF, PS), reference and Ori suite as Table 3. Add rows hold when the mean NR of adding "
        "Hadamard and SWAP gates is below that of phase and rotation gates; Delete, Replace and Modify rows when NR "
        "of controlled gates is below NR of rotation gates: Fisher's exact test on the pooled non-trivial counts (p). "
        "In Qiskit's names our QCL has cx, rx and rz (cx is both "
        "controlled and Pauli in Table 1), so the paper's N/A cells can hold mutants here. Tolerance 15 points."
    )
    t.plot = lambda tab, path: _bars(tab, path, "NR %", "NR paper %", lambda r: f"{r['group']}\n{r['gate type']}")
    t.keys, t.ours, t.theirs = ("group", "gate type"), "NR %", "NR paper %"
    return t


def quanforge_hoeffding(size: Size) -> Table:
    """QuanForge Sec. 4.1: shots from Hoeffding's bound, s >= ln(2q / (1 - delta)) / (2 eps^2), and how
    often 1000 shots miss a measured qubit's exact marginal by eps or more on real inputs."""
    from qmltest.mutation.evidence.stats import hoeffding_shots

    t = Table(
        "quanforge",
        "sec4.1-hoeffding-shots",
        "QuanForge Sec. 4.1: measurements per prediction from Hoeffding's inequality (eps 0.05, delta 0.95)",
        "1000 shots suffice for binary (q = 2) and ternary (q = 3) outputs: the bound is at most 1000, and with "
        "1000 shots fewer than 1 - delta = 5% of predictions miss a qubit's probability by eps or more",
        ["model", "q", "bound shots", "paper shots", "inputs x repeats", "miss rate %", "p", "verdict"],
    )
    from scipy.stats import binomtest

    for name in ("qcl", "qcl-ternary"):
        model = artifact.load(MODELS / ZOO[name])
        q = len(model.ir.measured)
        bound = hoeffding_shots(0.05, 0.95, q)
        x, _ = datasets.select("mnist", "test", model.classes, size.large, seed=1)
        p = model_probabilities(model, x)  # over the measured qubits
        rng = np.random.default_rng(7)
        reps = 20
        miss = 0
        for _ in range(reps):
            est = engine.sample_counts(p, 1000, rng) / 1000
            worst = np.zeros(len(p))
            for i in range(q):  # marginal of measured qubit i: outcome bit i
                bit = (np.arange(p.shape[1]) >> i) & 1
                worst = np.maximum(worst, np.abs(est[:, bit == 1].sum(1) - p[:, bit == 1].sum(1)))
            miss += int(np.sum(worst >= 0.05))
        rate = 100 * miss / (reps * len(p))
        test = (rate < 5, float(binomtest(miss, reps * len(p), 0.05).pvalue))  # the miss rate against 5%
        found = tested([test], True) if bound <= 1000 else "differs"
        t.rows.append(
            {
                "model": name,
                "q": q,
                "bound shots": bound,
                "paper shots": 1000,
                "inputs x repeats": f"{len(p)} x {reps}",
                "miss rate %": round(rate, 3),
                "p": float(f"{test[1]:.3g}"),
                "verdict": found,
            }
        )
    t.notes.append(
        "The bound is qmltest.mutation.evidence.stats.hoeffding_shots; the miss rate samples 1000 shots per input, "
        "tested "
        "against 5% by an exact two-sided binomial test (p)."
    )
    t.keys, t.ours, t.theirs = ("model", "q"), "bound shots", "paper shots"
    t.plot = lambda tab, path: _bars(tab, path, "bound shots", "paper shots", lambda r: f"{r['model']} q={r['q']}")
    return t


QUANFORGE_TABLE8 = {  # (threshold, value) -> (effective mutants, Ori, HConf, LConf); QCL, MNIST (tau_RSE) and
    # FashionMNIST (tau_trivial; not shipped offline, so ours runs on MNIST); at tau_RSE 1% the paper finds no
    # sufficiently stable mutant within its budget (0, no scores)
    ("tau_rse", 0.01): (0, None, None, None),
    ("tau_rse", 0.03): (97, 0.5795, 0.3636, 0.7841),
    ("tau_rse", 0.05): (75, 0.7312, 0.3855, 0.8067),
    ("tau_rse", 0.10): (23, 0.6739, 0.5000, 0.7174),
    ("tau_trivial", 0.60): (111, 0.7388, 0.5991, 0.7982),
    ("tau_trivial", 0.75): (81, 0.5274, 0.3642, 0.5432),
    ("tau_trivial", 0.90): (42, 0.6667, 0.2500, 0.6547),
    ("tau_trivial", 0.95): (23, 0.6074, 0.2174, 0.7174),
}


def _suites_run(
    size: Size,
    settings: object,
    kinds: tuple[str, ...],
    cells: list[pipeline.Cell] | None = None,
    operators: tuple[str, ...] | None = None,
) -> dict:
    """One QuanForge search on QCL (per cell, if given) and the scores of the given suites (sizes and
    seeds as Table 3)."""
    model = artifact.load(MODELS / ZOO["qcl"])
    ref, data, _ = _reference_and_suites(model, kinds, size.profile, size.qf_per_class)
    ops = size.qf_operators if operators is None else operators
    opts = pipeline.Options(operators=ops, repeats=size.qf_repeats, shots=size.qf_shots, seed=1, settings=settings)
    res, _ = pipeline.run(model, data, opts, ref, cells=cells, where=parallel.plan(size.workers))
    return res


def quanforge_table8(size: Size) -> Table:
    """QuanForge Table 8 (Sec. 4.7.2): effective mutants and mutation scores as tau_RSE (stability,
    Algorithm 1's RSE threshold) and tau_trivial (Eq. 3's accuracy threshold) vary, one at a time."""
    t = Table(
        "quanforge",
        "table8-thresholds",
        "QuanForge Table 8 (QCL): effective mutants and mutation scores under different tau_RSE and tau_trivial",
        "effective mutants fall as tau_RSE grows (a looser stability threshold stops accumulating mutants "
        "sooner) and as tau_trivial grows (a stricter accuracy constraint), and the strong suite (LConf) still "
        "scores above the weak one (HConf) in every setting",
        [
            "threshold",
            "value",
            "effective",
            "effective paper",
            "Ori",
            "Ori paper",
            "HConf",
            "HConf paper",
            "LConf",
            "LConf paper",
            "p",
            "verdict",
        ],
    )
    kinds = ("ori", "hconf", "lconf")
    values = {"tau_rse": (0.01, 0.03, 0.05, 0.10), "tau_trivial": (0.60, 0.75, 0.90, 0.95)}  # the paper's whole grid
    if size.quick:
        values = {"tau_trivial": (0.75, 0.95)}  # one search beside Table 3's: reproduce-quick stays < 5 min
    # full: one operator per group (five searches of nine operators took 23 min of the 60-minute budget)
    operators = size.qf_operators if size.quick else tuple(ONE_PER_GROUP.values())
    runs: dict[object, dict] = {}  # both sweeps meet at the defaults: one search for that setting
    if operators == size.qf_operators and size.quick in _QF_RUNS:
        runs[size.qf_settings] = _QF_RUNS[size.quick]  # the Table 3 run has these settings, operators, suites, seeds
    for knob, sweep in values.items():
        previous = None
        for value in sweep:
            settings = replace(size.qf_settings, **{knob: value})
            if settings not in runs:
                runs[settings] = _suites_run(size, settings, kinds, operators=operators)
            res = runs[settings]
            effective = sum(v["effective"] for v in res["generation"]["cells"]["all"].values())
            scores = {k: res["suites"][k]["mutation_score"] for k in kinds}
            paper = QUANFORGE_TABLE8[(knob, value)]
            fewer = previous is None or effective <= previous
            test = None if scores["lconf"] is None or scores["hconf"] is None else paired_test(res, "lconf", "hconf")
            close = scores["ori"] is not None and paper[1] is not None and abs(scores["ori"] - paper[1]) <= 0.1
            found = "ours only" if test is None else tested([test], close)
            if not fewer and found in ("reproduced", "same direction"):
                found = "inconclusive"  # one search per setting: a count that did not fall is not a test
            if effective == 0 and paper[0] == 0:
                found = "reproduced"  # the paper's row: no sufficiently stable mutant within the budget
            t.rows.append(
                {
                    "threshold": knob,
                    "value": value,
                    "effective": effective,
                    "effective paper": paper[0],
                    "Ori": None if scores["ori"] is None else round(scores["ori"], 4),
                    "Ori paper": paper[1],
                    "HConf": None if scores["hconf"] is None else round(scores["hconf"], 4),
                    "HConf paper": paper[2],
                    "LConf": None if scores["lconf"] is None else round(scores["lconf"], 4),
                    "LConf paper": paper[3],
                    "p": None if test is None else float(f"{test[1]:.3g}"),
                    "verdict": found,
                }
            )
            previous = effective or previous  # a setting with no stable mutant (1%) starts no trend
    t.notes.append(
        "One QuanForge search per setting on QCL, the other threshold at its default (tau_RSE 5%, tau_trivial 75%), "
        f"operators {', '.join(operators)} (the paper's nine at full size would take 23 min); reference, suites, "
        "repeats and shots as Table 3. A row holds when LConf kills more than HConf (McNemar's exact test on the same "
        "mutants' class-level kills, p) and the setting leaves no more effective mutants than the previous (smaller) "
        "value: one search per setting, so a count that rises makes the row inconclusive, not differ. "
        "The paper's tau_trivial rows are on FashionMNIST, "
        "which is not shipped offline: ours are on MNIST. At tau_RSE 1% no batch becomes stable within the budget "
        "(every binary-search step runs k_max rounds of growing batches), as in the paper: no effective mutant, no "
        "scores, and the row reads 'reproduced' when both counts are 0; the trend starts at the first setting that "
        "has mutants. The paper's Aug and depth columns are not run (time; the quick run has only 75% and 95%). "
        "Tolerance 0.1 on Ori."
    )
    t.plot = lambda tab, path: _bars(
        tab, path, "effective", "effective paper", lambda r: f"{r['threshold']}={r['value']}"
    )
    t.keys, t.ours, t.theirs = ("threshold", "value"), "effective", "effective paper"
    return t


QUANFORGE_TABLE9 = {  # noisy HCQC_TTN (MNIST): group -> Ori, HConf, Skewed, Small, LConf, OOD, Aug, Adv
    "Add": (0.7701, 0.3834, 0.5822, 0.7123, 0.9112, 0.7923, 0.7922, 0.9403),
    "Delete": (0.6046, 0.1792, 0.5633, 0.5384, 0.8823, 0.7564, 0.8412, 0.8974),
    "Replace": (0.5534, 0.1292, 0.5323, 0.5104, 0.6681, 0.8428, 0.8292, 0.9514),
    "Modify (gate)": (0.7153, 0.2500, 0.6633, 0.5400, 0.8533, 0.7833, 0.8567, 0.9486),
    "Modify (param)": (0.5371, 0.1736, 0.5914, 0.5593, 0.7272, 0.7650, 0.7657, 0.8550),
}
NOISY_MODEL, NOISE_CONFIG = "hcqc_so4", "configs/noise/hardware-like.toml"


def quanforge_table9(size: Size) -> Table:
    """QuanForge Table 9 (Sec. 4.7.3): mutation scores per operator group of the weak and strong
    suites on a noisy HCQC: every channel inserted at random positions with probability 1%."""
    from qmltest.noise.config import load

    t = Table(
        "quanforge",
        "table9-noisy",
        "QuanForge Table 9 (MNIST, noisy HCQC): mutation scores per operator group, every channel inserted at "
        "random positions with probability 1%",
        "under noise every strong suite (LConf, OOD, Aug, Adv) still scores above every weak one (HConf, Skewed, "
        "Small), and HConf lowest",
        ["group", "suite", "mutants", "score", "score paper", "p", "verdict"],
    )
    kinds = KINDS
    model = artifact.load(MODELS / ZOO[NOISY_MODEL])
    # quick: one channel everywhere and one operator (every mutant's channels are back-propagated
    # once per noise repetition, 0.14 s on this 8-qubit model: the full setting takes minutes)
    # full: one operator per group and a shorter search (a noisy mutant costs 0.45 s on 20 inputs:
    # three drift repetitions, each compiled and back-propagated)
    config = "configs/noise/depolarizing-1pct.toml" if size.quick else NOISE_CONFIG
    operators = ("PF",) if size.quick else tuple(ONE_PER_GROUP.values())
    settings = replace(size.qf_settings, k_max=1 if size.quick else 2, i=3)
    noise = load(config)
    per_class = max(5, size.qf_per_class // 4)
    ref, data, _ = _reference_and_suites(model, kinds, per_class, per_class)
    opts = pipeline.Options(
        operators=operators, repeats=size.qf_repeats, shots=size.qf_shots, seed=1, settings=settings
    )
    res, _ = pipeline.run(model, data, opts, ref, noise=noise, where=parallel.plan(size.workers))
    classes = model.num_classes
    for group, ops in GROUPS.items():
        scores: dict[str, float | None] = {}
        total = 0
        for kind in kinds:
            rows = [res["suites"][kind]["per_operator"].get(op) for op in ops]
            rows = [r for r in rows if r is not None]
            total = sum(r["total"] for r in rows)
            scores[kind] = sum(r["killed_classes"] for r in rows) / (total * classes) if total else None
        if not total:  # the quick run mutates with one operator only
            continue
        known = [scores[k] for k in kinds]
        comparisons: dict[str, list] = dict.fromkeys(kinds, [])
        if all(v is not None for v in known):  # a strong suite beats every weak one, a weak one loses to every strong
            for k in kinds:
                if k in STRONG:
                    comparisons[k] = [paired_test(res, k, w, ops) for w in WEAK]
                elif k in WEAK:
                    comparisons[k] = [paired_test(res, s, k, ops) for s in STRONG]
                else:  # Ori's row: HConf scores lowest of all
                    comparisons[k] = [paired_test(res, o, "hconf", ops) for o in kinds if o != "hconf"]
        for i, kind in enumerate(kinds):
            score, paper = scores[kind], QUANFORGE_TABLE9[group][i]
            t.rows.append(
                {
                    "group": group,
                    "suite": kind,
                    "mutants": total,
                    "score": None if score is None else round(score, 4),
                    "score paper": paper,
                    "p": round(max((p for _, p in comparisons[kind]), default=1.0), 4),
                    "verdict": tested(comparisons[kind], score is not None and abs(score - paper) <= 0.15),
                }
            )
    effective = sum(v["effective"] for v in res["generation"]["cells"]["all"].values())
    t.notes.append(
        f"Model {ZOO[NOISY_MODEL]} (HCQC with the SO(4) ansatz; the paper trains a smaller HCQC with U_TTN), noise "
        f"`{config}` (at full size: depolarizing, bit and phase flip, amplitude and phase damping, thermal relaxation "
        f"and crosstalk at random positions with probability 1%, readout error and drift), simulated by qmltest's "
        f"density-matrix engine (equal to Aer's to 1e-9). {effective} effective mutants; reference and suites of "
        f"{per_class} inputs per class, {size.qf_repeats} repeats x {size.qf_shots} shots, operators "
        f"{', '.join(operators)} (one per group; search k_max {settings.k_max}, i {settings.i}), class-level "
        "scores per operator group, suites built as in Table 3. A strong suite's row holds when it beats every weak "
        "suite, a weak suite's when it stays below every strong one, Ori's when HConf is lowest. Tolerance 0.15. "
        "Each ordering is McNemar's exact test on the same (mutant, class) kill decisions, Holm over a row's "
        "comparisons; p is the row's largest raw p; 'inconclusive' when the data cannot tell at 5%."
    )
    t.plot = lambda tab, path: _bars(tab, path, "score", "score paper", lambda r: f"{r['group']}\n{r['suite']}")
    t.keys, t.ours, t.theirs = ("group", "suite"), "score", "score paper"
    return t
