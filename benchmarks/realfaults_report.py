"""Statistics and files of the real-fault study (`realfaults.py`): Kendall's tau with bootstrap
intervals and permutation p-values, the same within suites of one size, the operator-fault
coupling matrix (Just et al., FSE 2014), APFD against random orders, plots and README.md."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
from repro_common import code_digest, commit
from scipy import stats

from qmltest.coverage import priority
from qmltest.faults import kinds
from qmltest.util import writers

PREDICTORS = ("score_all", "score_quanforge", "score_qml", "score_classic", "ksc", "scc", "tsc", "kec", "size")
B = 1000  # bootstrap and permutation draws
RANDOM_ORDERS = 500
JUST_COUPLED = 0.73  # Just et al. (FSE 2014): 73% of real faults coupled to common mutants


def _pairs(x: np.ndarray, y: np.ndarray, strata: np.ndarray) -> tuple[int, int]:
    """Concordant and discordant pairs among pairs of one stratum (ties in x or y left out)."""
    c = d = 0
    for s in np.unique(strata):
        i = np.flatnonzero(strata == s)
        dx = np.sign(x[i][:, None] - x[i][None, :])
        dy = np.sign(y[i][:, None] - y[i][None, :])
        prod = np.triu(dx * dy, 1)
        c += int((prod > 0).sum())
        d += int((prod < 0).sum())
    return c, d


def gamma(x: np.ndarray, y: np.ndarray, strata: np.ndarray) -> float | None:
    """Goodman-Kruskal gamma over same-stratum pairs: Kendall's concordance with the stratum
    (suite size) held fixed. None without an untied pair."""
    c, d = _pairs(x, y, strata)
    return None if c + d == 0 else (c - d) / (c + d)


def tau_b(x: np.ndarray, y: np.ndarray, strata: np.ndarray) -> float | None:
    t = stats.kendalltau(x, y).statistic
    return None if t is None or not math.isfinite(t) else float(t)


def tested(fn, x: np.ndarray, y: np.ndarray, strata: np.ndarray, seed: int) -> dict:
    """The statistic, a 95% bootstrap interval (suites resampled within strata) and a two-sided
    permutation p (y shuffled within strata)."""
    value = fn(x, y, strata)
    if value is None:
        return {"value": None, "interval": None, "p": None}
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    boot, perm = [], []
    for _ in range(B):
        i = np.concatenate([rng.choice(g, len(g)) for g in groups])
        b = fn(x[i], y[i], strata[i])
        if b is not None:
            boot.append(b)
        yp = y.copy()
        for g in groups:
            yp[g] = y[rng.permutation(g)]
        p = fn(x, yp, strata)
        perm.append(0.0 if p is None else p)
    lo, hi = np.percentile(boot, [2.5, 97.5]).tolist() if boot else [None, None]
    p_value = (1 + sum(abs(v) >= abs(value) - 1e-12 for v in perm)) / (1 + len(perm))
    return {"value": round(value, 4), "interval": [round(lo, 4), round(hi, 4)], "p": round(p_value, 4)}


def correlations(rows: list[dict], strata_key, seed: int) -> list[dict]:
    out = []
    y = np.asarray([r["detection"] for r in rows], float)
    strata = np.asarray([strata_key(r) for r in rows])
    for name in PREDICTORS:
        keep = [i for i, r in enumerate(rows) if r.get(name) is not None]
        if len(keep) < 4:
            continue
        x = np.asarray([rows[i][name] for i in keep], float)
        whole = tested(tau_b, x, y[keep], np.zeros(len(keep)), seed)
        same = tested(gamma, x, y[keep], strata[keep], seed + 1) if name != "size" else None
        out.append({"predictor": name, "suites": len(keep), "tau": whole, "within_size": same})
    return out


def coupling(study: dict) -> dict[str, dict[str, float | None]]:
    """Per family and fault: the share of the family's killed mutants coupled to the fault (every
    suite that kills the mutant detects the fault); None where no suite detects the fault."""
    suites = [r["suite"] for r in study["rows"]]
    out: dict[str, dict[str, float | None]] = {}
    for fam, verdicts in study["mutant_verdicts"].items():
        ids = sorted({m for s in suites for m in verdicts[s]})
        killed = [m for m in ids if any(verdicts[s].get(m) for s in suites)]
        out[fam] = {}
        for fault in study["faults"]:
            if not any(study["fault_verdicts"][s][fault] for s in suites) or not killed:
                out[fam][fault] = None
                continue
            coupled = [
                m for m in killed if all(study["fault_verdicts"][s][fault] for s in suites if verdicts[s].get(m))
            ]
            out[fam][fault] = round(len(coupled) / len(killed), 4)
    return out


def apfd_rows(study: dict, seed: int) -> list[dict]:
    reveals = np.asarray(study["reveals"], bool)
    if reveals.size == 0 or not reveals.any():
        return []
    rng = np.random.default_rng(seed)
    n = reveals.shape[0]
    randoms = np.asarray([priority.apfd(rng.permutation(n), reveals) for _ in range(RANDOM_ORDERS)])
    cols = np.flatnonzero(reveals.any(axis=0))
    rows = [
        {
            "method": "random",
            "apfd": round(float(randoms.mean()), 4),
            "interval": np.percentile(randoms, [2.5, 97.5]).round(4).tolist(),
            "p_vs_random": None,
        }
    ]
    for method, order in study["orders"].items():
        value = priority.apfd(order, reveals)
        boot = [priority.apfd(order, reveals[:, rng.choice(cols, len(cols))]) for _ in range(B)]
        p = (1 + int((randoms >= value - 1e-12).sum())) / (1 + len(randoms))
        rows.append(
            {
                "method": method,
                "apfd": round(float(value), 4),
                "interval": np.percentile(boot, [2.5, 97.5]).round(4).tolist(),
                "p_vs_random": round(p, 4),
            }
        )
    return rows


def coupled_share(studies: list[dict]) -> dict:
    """(model, fault) pairs some suite detects, and how many are coupled to some mutant; with a
    Clopper-Pearson interval and an exact binomial test against Just et al.'s 73%."""
    n = k = 0
    for st in studies:
        for fault in st["faults"]:
            shares = [st["coupling"][fam][fault] for fam in st["coupling"]]
            if all(s is None for s in shares):
                continue
            n += 1
            k += any((s or 0) > 0 for s in shares)
    if n == 0:
        return {"pairs": 0}
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    p = stats.binomtest(k, n, JUST_COUPLED).pvalue
    return {
        "pairs": n,
        "coupled": k,
        "share": round(k / n, 4),
        "interval": [round(ci.low, 4), round(ci.high, 4)],
        "p_vs_73": round(float(p), 4),
    }


def _p(p: float) -> str:
    """A permutation p; at its floor 1 / (B + 1) it says so."""
    return f"p<{1 / B:.3f}" if p <= round(1 / (B + 1), 4) + 1e-9 else f"p={p:.3f}"


def _fmt(t: dict | None) -> str:
    if not t or t.get("value") is None:
        return "-"
    return f"{t['value']:+.3f} [{t['interval'][0]:+.3f}, {t['interval'][1]:+.3f}], {_p(t['p'])}"


def _plot(study: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in study["rows"] if r["score_all"] is not None]
    fig, ax = plt.subplots(figsize=(5, 3.6), dpi=110)
    sc = ax.scatter(
        [r["score_all"] for r in rows],
        [r["detection"] for r in rows],
        c=[r["size"] for r in rows],
        cmap="viridis",
        s=22,
    )
    fig.colorbar(sc, label="suite size")
    ax.set_xlabel("mutation score (all families)")
    ax.set_ylabel("share of real faults detected")
    ax.set_title(study["model"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def provenance() -> dict:
    """The commit, the verdict code's digest and the fault catalogue's digest, now."""
    return {"commit": commit(), "code_sha256": code_digest(), "faults_sha256": catalogue_digest()}


def catalogue_digest() -> str:
    h = hashlib.sha256()
    for p in sorted([*Path("qmltest/faults").glob("*.py"), Path("data/faults/catalogue.toml")]):
        h.update(p.as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _verdict(t: dict | None, positive: bool = True) -> str:
    if not t or t.get("value") is None:
        return "not measurable"
    if t["p"] < 0.05 and (t["value"] > 0) == positive:
        return "holds"
    if t["p"] < 0.05:
        return "reversed"
    return "not shown (not significant at 5%)"


def write(studies: list[dict], plan: object, out: Path, command: str, made: dict | None = None) -> None:
    """Statistics, tables, plots and README of `studies`; `made` keeps the provenance of verdicts
    computed earlier (--report-only), else it is taken now."""
    out.mkdir(parents=True, exist_ok=True)
    for i, st in enumerate(studies):
        st["correlations"] = correlations(st["rows"], lambda r: r["size"], 1000 + i)
        st["coupling"] = coupling(st)
        st["apfd"] = apfd_rows(st, 2000 + i)
        cols = [
            "suite",
            "kind",
            "size",
            *[p for p in PREDICTORS if p != "size"],
            "faults_detected",
            "faults",
            "detection",
        ]
        writers.write_text_atomic(
            out / f"{st['model']}.csv", writers.to_csv([{c: r.get(c) for c in cols} for r in st["rows"]])
        )
        _plot(st, out / f"{st['model']}.png")
    pooled_rows = [dict(r, model=st["model"]) for st in studies for r in st["rows"]]
    pooled = correlations(pooled_rows, lambda r: f"{r['model']}/{r['size']}", 7)
    share = coupled_share(studies)
    matrix = _matrix(studies)
    writers.write_text_atomic(out / "coupling.csv", writers.to_csv(matrix))
    doc = {
        **(made or provenance()),
        "command": command,
        "plan": dict(plan.__dict__),  # type: ignore[attr-defined]
        "pooled": pooled,
        "coupled_share": share,
        "coupling_matrix": matrix,
        "studies": studies,
    }
    writers.write_text_atomic(out / "study.json", writers.to_json(doc))
    writers.write_text_atomic(out / "README.md", readme(studies, pooled, share, matrix, doc))


def _matrix(studies: list[dict]) -> list[dict]:
    """family x fault: the mean coupled share over the models where some suite detects the fault."""
    rows = []
    for fam in ("quanforge", "qml", "classic"):
        row: dict = {"family": fam}
        for f in kinds.catalogue():
            vals = [st["coupling"].get(fam, {}).get(f.id) for st in studies]
            vals = [v for v in vals if v is not None]
            row[f.id] = round(float(np.mean(vals)), 3) if vals else None
        rows.append(row)
    return rows


def _against(share: dict) -> str:
    if share["p_vs_73"] >= 0.05:
        return "consistent with"
    return "more than" if share["share"] > JUST_COUPLED else "fewer than"


def reading(studies: list[dict], pooled: list[dict], share: dict) -> list[str]:
    """What holds and what does not, in words, from the tests above (no figure typed by hand)."""
    by = {c["predictor"]: c for c in pooled}
    held = [n for n, c in by.items() if n != "size" and _verdict(c["within_size"]) == "holds"]
    flat = [n for n, c in by.items() if n != "size" and _verdict(c["within_size"]).startswith("not shown")]
    per_model = [{x["predictor"]: x for x in st["correlations"]}.get("score_all") for st in studies]
    positive = sum(1 for c in per_model if c and _verdict(c["within_size"]) == "holds")
    out = [
        f"- With suite size held fixed, these predict the share of real faults a suite detects: "
        f"{', '.join(held) or 'none'}; these do not (not significant at 5%): {', '.join(flat) or 'none'}.",
        f"- Per model, the mutation score's within-size association is significantly positive on {positive} of "
        f"{len(studies)} models; the table below gives each with its interval.",
    ]
    if share.get("pairs"):
        out.append(
            f"- {share['share']:.0%} of the real faults some suite detects are coupled to at least one mutant "
            f"({_against(share)} Just et al.'s 73% for Java, "
            f"exact binomial p={share['p_vs_73']:.3f})."
        )
    better = sorted({r["method"] for st in studies for r in st["apfd"] if (r["p_vs_random"] or 1) < 0.05})
    out.append(
        f"- Prioritisations that beat random order on at least one model (one-sided p < 0.05): "
        f"{', '.join(better) or 'none'}; per model below (with eight models, some of these are expected by chance)."
    )
    return out


def _apfd_cell(r: dict | None) -> str:
    if r is None:
        return "-"
    p = "" if r["p_vs_random"] is None else f", p={r['p_vs_random']:.3f}"  # floor 1/501
    return f"{r['apfd']:.3f} [{r['interval'][0]:.3f}, {r['interval'][1]:.3f}]{p}"


def readme(studies: list[dict], pooled: list[dict], share: dict, matrix: list[dict], doc: dict) -> str:
    by = {c["predictor"]: c for c in pooled}
    score, size = by.get("score_all"), by.get("size")
    lines = [
        "# Do mutation scores predict real-fault detection?",
        "",
        f"Made by `{doc['command']}` at commit {doc['commit']} (verdict code sha256 {doc['code_sha256'][:12]}, "
        f"fault catalogue sha256 {doc['faults_sha256'][:12]}); every figure below is in `study.json`.",
        "",
        f"{len(studies)} models ({sum(s['imported'] for s in studies)} imported from qiskit-machine-learning and "
        f"PennyLane), {sum(len(s['rows']) for s in studies)} suites (random subsets and QuanForge's kinds), "
        f"{sum(sum(s['mutants'].values()) for s in studies)} mutants of the three operator families and the "
        f"catalogue's {len(kinds.catalogue())} real fault kinds (`data/faults/catalogue.toml`; "
        f"{sum(len(s['faults']) for s in studies)} (model, fault) pairs apply). A mutant is killed and a fault "
        "detected by one test: QuanForge's Eq. 2 (GLM p < 0.05 and Cohen's d >= 0.5 on 20 repeats of 1000 shots).",
        "",
        "## Claims",
        "",
        "Kendall's tau-b over all suites; 'within size' is Goodman-Kruskal gamma over pairs of suites of one "
        "model and one size (size held fixed, as Just et al. hold coverage fixed). 95% intervals: bootstrap of the "
        "suites within strata; p: permutation within strata (two-sided).",
        "",
        "| claim | statistic | verdict |",
        "|---|---|---|",
        f"| mutation score rises with the share of real faults detected | tau {_fmt(score and score['tau'])} | "
        f"{_verdict(score and score['tau'])} |",
        f"| ... with suite size held fixed | gamma {_fmt(score and score['within_size'])} | "
        f"{_verdict(score and score['within_size'])} |",
        f"| larger suites detect more real faults | tau {_fmt(size and size['tau'])} | "
        f"{_verdict(size and size['tau'])} |",
    ]
    for name in ("ksc", "scc", "tsc", "kec", "score_quanforge", "score_qml", "score_classic"):
        c = by.get(name)
        if c:
            lines.append(
                f"| {name} rises with detection, size held fixed | gamma {_fmt(c['within_size'])} | "
                f"{_verdict(c['within_size'])} |"
            )
    if share.get("pairs"):
        lines.append(
            f"| real faults are coupled to some mutant (Just et al.: 73%) | {share['coupled']} of {share['pairs']} "
            f"detectable (model, fault) pairs = {share['share']:.2f} [{share['interval'][0]:.2f}, "
            f"{share['interval'][1]:.2f}], binomial p vs 0.73 = {share['p_vs_73']:.3f} | "
            f"{_against(share)} 73% |"
        )
    lines += ["", "## Reading", "", *reading(studies, pooled, share)]
    lines += [
        "",
        "## Per model",
        "",
        "| model | suites | mutants | faults | score vs detection, size fixed | KSC vs detection, size fixed |",
        "|---|---|---|---|---|---|",
    ]
    for st in studies:
        c = {x["predictor"]: x for x in st["correlations"]}
        lines.append(
            f"| {st['model']}{' (imported)' if st['imported'] else ''} | {len(st['rows'])} | "
            f"{sum(st['mutants'].values())} | {len(st['faults'])} | "
            f"{_fmt(c.get('score_all', {}).get('within_size'))} | {_fmt(c.get('ksc', {}).get('within_size'))} |"
        )
    lines += [
        "",
        "Plots: `MODEL.png` (mutation score against the share of faults detected, coloured by size); "
        "per-suite rows: `MODEL.csv`.",
        "",
        "## Operator-fault coupling",
        "",
        "Share of each family's killed mutants coupled to the fault (every suite that kills the mutant "
        "detects the fault), averaged over the models where some suite detects the fault; '-': no model.",
        "",
    ]
    faults = [f.id for f in kinds.catalogue()]
    lines += ["| fault | " + " | ".join(r["family"] for r in matrix) + " |", "|---|" + "---|" * len(matrix)]
    for f in faults:
        lines.append(f"| {f} | " + " | ".join("-" if r[f] is None else f"{r[f]:.2f}" for r in matrix) + " |")
    lines += [
        "",
        "## Test prioritisation (APFD on the real faults)",
        "",
        "An input reveals a fault when the faulty model misclassifies it (exactly) and the original does not. "
        "Random: the mean of 500 orders and their 2.5-97.5 percentiles; a method's interval: bootstrap over "
        "the faults; p: the share of random orders at least as good (one-sided).",
        "",
        "| model | random | coverage | kills | gini |",
        "|---|---|---|---|---|",
    ]
    for st in studies:
        cells = {r["method"]: r for r in st["apfd"]}
        shown = [_apfd_cell(cells.get(m)) for m in ("random", "coverage", "kills", "gini")]
        lines.append(f"| {st['model']} | " + " | ".join(shown) + " |")
    lines += ["", "## Not applicable", ""]
    for st in studies:
        lines.append(f"- {st['model']}: {', '.join(st['not_applicable']) or 'none'}")
    lines += [
        "",
        "## Limits",
        "",
        "- The faults are injected by transforms written from public reports, not mined from user repositories: "
        "no such corpus exists for QNN models. Each is a kind of fault that happened, not the instance that did.",
        "- Suites are drawn from one test pool per model, so suites of one size overlap; the intervals resample "
        "suites, not pools.",
        "- Mutants are a seeded sample of each family's sites; `plan` in `study.json` gives the sizes.",
        "",
    ]
    return "\n".join(lines)
