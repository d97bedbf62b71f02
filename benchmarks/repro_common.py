"""Shared parts of `make reproduce`: run sizes, the model zoo names, the table record, verdicts, bar plots."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from qml_mutation import MODELS as QML_MODELS

from qmltest.mutation.strategies.generate import Settings

MODELS = Path("data/models")


@dataclass(frozen=True)
class Size:
    """Run sizes: the papers' (full) or reduced (quick)."""

    quick: bool
    profile: int  # training inputs per class for profiling
    small: int  # QCov "50 per class"
    large: int  # QCov "100 per class"
    qcov_models: tuple[str, ...]
    shots: tuple[int, ...]
    attack_models: tuple[str, ...]
    attack_methods: tuple[str, ...]
    attack_per_class: int
    fuzz_models: tuple[str, ...]
    fuzz_seeds: tuple[int, ...]
    dlfuzz_steps: int
    fuzz_budget: int
    fuzz_per_class: int
    exhaust_cap: int
    qf_per_class: int
    qf_repeats: int
    qf_shots: int
    qf_settings: Settings
    qf_operators: tuple[str, ...]  # () = all nine
    qf_models: tuple[str, ...]  # QuanForge Table 3's models (the first also feeds Tables 7 and 8)
    workers: int
    qml_models: tuple[tuple[str, str], ...]


FULL = Size(
    quick=False,
    profile=100,
    small=50,
    large=100,
    qcov_models=(
        "qcl",
        "ccqc",
        "qcnn",
        "hcqc_so4",
        "hqnn",
        "qcl-ternary",
        "ccqc-ternary",
        "qcnn-ternary",
        "hqnn-ternary",
    ),
    shots=(100, 1000, 10000, 100000),
    attack_models=("qcl", "ccqc", "qcnn", "hcqc_so4", "hqnn"),
    attack_methods=("fgsm", "jsma", "dlfuzz", "quantest", "random"),
    attack_per_class=50,
    fuzz_models=("qcl", "qcnn"),
    fuzz_seeds=tuple(range(1, 11)),
    dlfuzz_steps=500,
    fuzz_budget=1000,
    fuzz_per_class=50,
    exhaust_cap=5000,
    qf_per_class=100,
    qf_repeats=20,
    qf_shots=1000,
    qf_settings=Settings(),
    qf_operators=(),
    qf_models=("qcl", "qcnn", "drnn"),  # the paper's three columns (DRNN's: 4 min of the run)
    workers=2,
    qml_models=tuple(QML_MODELS),
)
QUICK = Size(
    quick=True,
    profile=20,
    small=10,
    large=20,
    qcov_models=("qcl",),
    shots=(100, 10000),
    attack_models=("qcl",),
    attack_methods=("fgsm", "random"),
    attack_per_class=5,
    fuzz_models=("qcl",),
    fuzz_seeds=(1,),
    dlfuzz_steps=50,
    fuzz_budget=60,
    fuzz_per_class=5,
    exhaust_cap=200,
    qf_per_class=10,
    qf_repeats=5,
    qf_shots=200,
    qf_settings=Settings(k_max=2, i=2),
    qf_operators=("RGA", "RGD", "GR", "PF"),  # one operator less than the groups: the quick run stays well under 5 min
    qf_models=("qcl",),
    workers=1,
    qml_models=(("zfm-ra-iris", "iris"),),  # quick: one model
)

ZOO = {
    "qcl": "qcl-mnist01",
    "ccqc": "ccqc-mnist01",
    "qcnn": "qcnn-mnist01",
    "hcqc_so4": "hcqc_so4-mnist01",
    "hqnn": "hqnn-mnist01",
    "drnn": "drnn-mnist01",
    "qcl-ternary": "qcl-mnist012",  # the paper's QCL-ternary classifies 2, 4 and 6
    "ccqc-ternary": "ccqc-mnist012",
    "qcnn-ternary": "qcnn-mnist379",
    "hqnn-ternary": "hqnn-mnist012",
}


@dataclass
class Table:
    paper: str
    name: str
    title: str
    claim: str
    columns: list[str]
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plot: Callable[[Table, Path], None] | None = None
    seconds: float = 0.0
    keys: tuple[str, ...] = ("model",)  # the columns that name a row in the index
    ours: str = ""  # the headline column and the paper's beside it, for the index
    theirs: str = ""


def verdict(claim_holds: bool | None, close: bool | None) -> str:
    """reproduced / same direction / differs / ours only (see the module docstring)."""
    if claim_holds is None:
        return "ours only"
    if not claim_holds:
        return "differs"
    return "reproduced" if close else "same direction"


def pct(x: float | None) -> float | None:
    return None if x is None else round(100 * float(x), 2)


def _bars(t: Table, path: Path, ours: str, paper: str, label: Callable[[dict], str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = t.rows
    pos = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(rows) + 2), 4))
    ax.bar(pos - 0.2, [r[ours] or 0 for r in rows], 0.4, label="qmltest")
    ax.bar(pos + 0.2, [r[paper] if r[paper] is not None else 0 for r in rows], 0.4, label="paper")
    ax.set_xticks(pos, [label(r) for r in rows], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel(ours)
    ax.set_title(t.title[:90], fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def _cell(v: object) -> str:
    return "-" if v is None else str(v)


VERDICT_ROOMS = ("mutation", "coverage", "simulate", "fuzz", "model", "data", "noise", "util")
PROVENANCE_GLOBS = (
    *(
        f"qmltest/{room}/**/*.py"
        for room in ("mutation", "coverage", "simulate", "fuzz", "model", "data", "noise", "util")
    ),
    "qmltest/evaluate.py",
    "qmltest/suites.py",
    "qmltest/attacks.py",
    "qmltest/errors.py",
    "qmltest/schemas/*.json",
    "benchmarks/repro*.py",
    "benchmarks/qml_mutation.py",
    "data/models/*/model.qasm",
    "data/models/*/model.json",
)
"""What a reproduced table depends on: the verdict code (mutation, coverage, simulation, fuzzing and what
they read: models, data, noise, utilities), the scripts, the shipped models; not the CLI, the reports'
rendering, the interop importers or the fault catalogue."""


def code_digest(root: Path = Path(".")) -> str:
    """sha256 over the files a table depends on (path and bytes, sorted): a committed table whose
    digest differs from the working tree's was made by other code (tests/test_reproduce.py)."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted({p for pattern in PROVENANCE_GLOBS for p in root.glob(pattern)}):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def commit(root: Path = Path(".")) -> str:
    """The commit the tables were made at, '+dirty' when tracked files differ from it."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "-uno"], cwd=root, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip()[:12] + ("+dirty" if dirty.stdout.strip() else "")


ALPHA = 0.05


def kill_units(res: dict, suite: str, operators: tuple[str, ...] | None = None) -> dict[tuple[str, str], bool]:
    """(mutant id, class) -> killed by `suite`: the units of a class-level mutation score, over the
    mutants the suite decided (undecided ones left out)."""
    classes = [str(c) for c in res["meta"]["classes"]]
    out = {}
    for m in res["mutants"]:
        v = m["verdicts"].get(suite)
        if v is None or v.get("undecided") or (operators and m["operator"] not in operators):
            continue
        killed = {str(c) for c in v["killed_classes"]}
        out.update({(m["id"], c): c in killed for c in classes})
    return out


def paired_test(res: dict, a: str, b: str, operators: tuple[str, ...] | None = None) -> tuple[bool, float]:
    """Does suite `a` kill more than `b` on the same (mutant, class) units, and McNemar's exact
    two-sided p of the difference (discordant units only)."""
    from scipy.stats import binomtest

    ua, ub = kill_units(res, a, operators), kill_units(res, b, operators)
    keys = ua.keys() & ub.keys()
    only_a = sum(ua[k] and not ub[k] for k in keys)
    only_b = sum(ub[k] and not ua[k] for k in keys)
    p = binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
    return only_a > only_b, float(p)


def seeds_test(a: list[float], b: list[float]) -> tuple[bool, float]:
    """Is `a` above `b` over paired campaign seeds, and the two-sided Wilcoxon signed-rank p (1.0
    with fewer than two pairs or no difference): fuzzing campaigns are the replication unit."""
    from scipy.stats import wilcoxon

    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    holds = float(np.mean(diff)) > 0
    if len(diff) < 2 or not np.any(diff):
        return holds, 1.0
    return holds, float(wilcoxon(diff).pvalue)


def rates_test(a: tuple[int, int], b: tuple[int, int]) -> tuple[bool, float]:
    """Is rate a = (successes, trials) above rate b, and Fisher's exact two-sided p (two sets of
    different mutants: independent samples). 1.0 where either has no trials."""
    from scipy.stats import fisher_exact

    if a[1] == 0 or b[1] == 0:
        return False, 1.0
    return a[0] / a[1] > b[0] / b[1], float(fisher_exact(_table(a, b)).pvalue)


def _table(a: tuple[int, int], b: tuple[int, int]) -> np.ndarray:
    """The 2x2 table (successes, failures) x (a, b) of two rates given as (successes, trials)."""
    return np.array([[a[0], a[1] - a[0]], [b[0], b[1] - b[0]]], dtype=float)


def stratified_rates_test(strata: list[tuple[tuple[int, int], tuple[int, int]]]) -> tuple[bool, float]:
    """`rates_test` over strata (one per operator, whose rates differ): Cochran-Mantel-Haenszel,
    the direction from the pooled odds ratio. Strata where a side has no trials are left out; one
    stratum left: Fisher's exact test on it."""
    from statsmodels.stats.contingency_tables import StratifiedTable

    kept = [(a, b) for a, b in strata if a[1] > 0 and b[1] > 0]
    if not kept:
        return False, 1.0
    if len(kept) == 1:
        return rates_test(*kept[0])
    tables = [_table(a, b) for a, b in kept]
    st = StratifiedTable(tables)
    odds = float(st.oddsratio_pooled)
    p = float(st.test_null_odds(correction=True).pvalue)
    return odds > 1.0, p if p == p else 1.0


BOOTSTRAP = 200
"""Resamples per bootstrap comparison (the smallest two-sided p is 1/200; 14 ms per coverage of 200 inputs)."""


def bootstrap_test(
    stat: Callable[[str, np.ndarray], np.ndarray],
    sizes: dict[str, int],
    a: str,
    b: str,
    seed: int = 0,
    paired: bool = False,
) -> list[tuple[bool, float]]:
    """Is each statistic of suite `a` above suite `b`'s: both suites' inputs resampled with replacement
    (`sizes[x]` inputs each), `stat(x, idx)` the statistics (a vector) of suite x's inputs `idx`.
    Per statistic: (a's full-suite value above b's, two-sided bootstrap p of the difference: twice
    the smaller share of resampled differences on either side of 0, at least 1 / BOOTSTRAP). For
    numbers such as coverage, which are not sums over inputs and have no closed-form variance.
    `paired`: a and b are two measurements of the same inputs (one resample serves both)."""
    rng = np.random.default_rng(seed)
    full = stat(a, np.arange(sizes[a])) - stat(b, np.arange(sizes[b]))

    def one() -> np.ndarray:
        ia = rng.integers(0, sizes[a], sizes[a])
        return stat(a, ia) - stat(b, ia if paired else rng.integers(0, sizes[b], sizes[b]))

    diffs = np.array([one() for _ in range(BOOTSTRAP)])
    return [bootstrap_p(float(d), diffs[:, j] if diffs.ndim > 1 else diffs) for j, d in enumerate(np.atleast_1d(full))]


def paired_bootstrap(stat: Callable[[str, np.ndarray], np.ndarray], keys: list[str], n: int, seed: int = 0) -> dict:
    """key -> (BOOTSTRAP, k) statistics of several measurements of the same n inputs, one resample of
    the inputs shared by all keys per round (compare two with `bootstrap_p`)."""
    rng = np.random.default_rng(seed)
    rounds = [rng.integers(0, n, n) for _ in range(BOOTSTRAP)]
    return {key: np.array([np.atleast_1d(stat(key, idx)) for idx in rounds]) for key in keys}


def permutation_test(
    stat: Callable[[np.ndarray, np.ndarray], np.ndarray], n_a: int, n_b: int, seed: int = 0
) -> list[tuple[bool, float]]:
    """Is each statistic of set a (items 0..n_a-1 of a pooled set) above set b's (the rest):
    `stat(ia, ib)` gives the differences for a split; p two-sided, from BOOTSTRAP random splits of
    the pooled items ((1 + splits at least as extreme) / (1 + splits)). For statistics a resample
    with replacement would distort (nearest-neighbour fidelity: a duplicate is its own closest)."""
    rng = np.random.default_rng(seed)
    full = np.atleast_1d(stat(np.arange(n_a), np.arange(n_a, n_a + n_b)))
    perms = [rng.permutation(n_a + n_b) for _ in range(BOOTSTRAP)]
    split = np.array([np.atleast_1d(stat(p[:n_a], p[n_a:])) for p in perms])
    extreme = (np.abs(split) >= np.abs(full)[None, :] - 1e-12).sum(axis=0)
    return [(bool(f > 0), float((1 + e) / (1 + BOOTSTRAP))) for f, e in zip(full, extreme)]


def bootstrap_p(full: float, diffs: np.ndarray) -> tuple[bool, float]:
    """(the full-data difference above 0, two-sided bootstrap p: twice the smaller share of the
    resampled differences on either side of 0, at least 1 / len(diffs))."""
    side = min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0)))
    return bool(full > 0), min(1.0, max(2 * side, 1 / len(diffs)))


def tested(comparisons: list[tuple[bool, float]], close: bool | None, alpha: float = ALPHA) -> str:
    """The verdict of a claim made of ordered comparisons, each (claimed direction seen, p), Holm
    over them: 'differs' when one is significant against the claim, reproduced / same direction when
    every one is significant for it, 'inconclusive' otherwise (the data cannot tell)."""
    from qmltest.mutation.judge.killing import adjust

    if not comparisons:
        return "ours only"
    adjusted = adjust([p for _, p in comparisons], "holm")
    if any(not holds and p < alpha for (holds, _), p in zip(comparisons, adjusted)):
        return "differs"
    if all(holds and p < alpha for (holds, _), p in zip(comparisons, adjusted)):
        return "reproduced" if close else "same direction"
    return "inconclusive"
