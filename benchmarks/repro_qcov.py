"""`make reproduce`, QCov: Tables 2-3, 6, 9/12 and 14, Sec. 4.5 sampling cost, RQ3 fuzzing."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import numpy as np
from repro_common import (
    BOOTSTRAP,
    MODELS,
    ZOO,
    Size,
    Table,
    _bars,
    bootstrap_p,
    bootstrap_test,
    paired_bootstrap,
    pct,
    permutation_test,
    seeds_test,
    tested,
)

from qmltest import attacks, suites
from qmltest.coverage import measure
from qmltest.coverage.criteria import Bounds
from qmltest.coverage.diversity import diversity, input_states
from qmltest.coverage.profile import bounds as profile_bounds
from qmltest.coverage.profile import build as build_profile
from qmltest.data import datasets
from qmltest.evaluate import label_indices
from qmltest.fuzz.loop import guides
from qmltest.fuzz.run import campaign
from qmltest.model import artifact
from qmltest.simulate import engine, program
from qmltest.simulate.runner import model_probabilities
from qmltest.util import parallel

# ------------------------------------------------------------------ QCov


QCOV_TABLE3 = {  # QCov Table 3 (MNIST): KSC, SCC, TSC (%)
    "qcl": {
        "50": (45.72, 36.28, 2.64),
        "100": (59.79, 54.10, 4.10),
        "1": (56.95, 46.63, 2.93),
        "2": (59.58, 50.98, 4.10),
    },
    "ccqc": {
        "50": (44.18, 33.89, 1.95),
        "100": (58.34, 53.91, 2.44),
        "1": (55.22, 44.48, 2.44),
        "2": (57.71, 50.29, 2.44),
    },
    "qcnn": {
        "50": (45.59, 33.74, 1.66),
        "100": (59.19, 52.10, 2.84),
        "1": (56.16, 48.67, 2.05),
        "2": (59.33, 48.68, 2.84),
    },
    "hcqc_so4": {
        "50": (37.09, 38.38, 1.37),
        "100": (50.01, 51.22, 1.86),
        "1": (48.91, 48.73, 1.66),
        "2": (50.05, 50.2, 2.15),
    },
    "hqnn": {
        "50": (31.21, 34.96, 0.39),
        "100": (43.97, 49.22, 0.39),
        "1": (29.22, 30.91, 0.20),
        "2": (44.63, 49.02, 0.39),
    },
    "qcl-ternary": {
        "50": (49.97, 32.13, 6.74),
        "100": (61.30, 49.27, 10.84),
        "1": (59.31, 42.77, 8.11),
        "2": (60.55, 46.73, 8.79),
        "3": (61.35, 46.83, 9.08),
    },
    "ccqc-ternary": {
        "50": (46.84, 32.47, 3.32),
        "100": (57.93, 48.88, 4.49),
        "1": (52.99, 41.06, 2.34),
        "2": (57.21, 46.19, 3.42),
        "3": (57.70, 49.41, 4.49),
    },
    "qcnn-ternary": {
        "50": (38.56, 30.57, 0.98),
        "100": (48.10, 46.34, 1.46),
        "1": (42.94, 40.53, 1.07),
        "2": (46.99, 47.51, 1.46),
        "3": (48.04, 48.63, 1.56),
    },
    "hqnn-ternary": {
        "50": (23.13, 33.30, 1.86),
        "100": (33.44, 48.10, 1.86),
        "1": (21.43, 33.25, 1.17),
        "2": (29.97, 41.16, 1.37),
        "3": (33.86, 54.05, 2.15),
    },
}
QCOV_TABLE2 = {"qcl": {"50": 0.9966, "100": 0.9956, "1": 0.9999}, "hqnn": {"50": 0.6346, "100": 0.6111, "1": 1.0}}
STRATEGIES = {
    "50": "50 per class",
    "100": "100 per class",
    "1": "single class",
    "2": "two classes",
    "3": "three classes",
}


CRITERIA = ("ksc", "scc", "tsc")


def _totals(parts: list, prof: object, criteria: tuple[str, ...] = CRITERIA, **options: object) -> np.ndarray:
    """Suite-level coverage of `parts` ((name, probabilities) pairs) on profile `prof`, as a vector of
    `criteria`: the statistic every table and bootstrap here reads."""
    tot = measure.cover(parts, prof, per_input=False, **options)["totals"]  # type: ignore[arg-type]
    return np.array([tot[c] for c in criteria])


def _profiled(name: str, size: Size) -> tuple[artifact.Model, object]:
    model = artifact.load(MODELS / ZOO[name])
    x, _ = datasets.select("mnist", "train", model.classes, size.profile, seed=0)
    return model, build_profile(model_probabilities(model, x, register="all"), model.sha256)


def qcov_table3(size: Size) -> Table:
    """QCov Table 3 (and Table 2's JS divergence, Sec. 4.2): coverage of suites of growing diversity."""
    t = Table(
        "qcov",
        "table3-coverage",
        "QCov Tables 2-3 (MNIST): KSC/SCC/TSC and input diversity of 50- vs 100-per-class and single- vs "
        "multi-class suites",
        "more diverse suites cover more: 100/class > 50/class on KSC and SCC; more classes >= single class on KSC",
        [
            "model",
            "suite",
            "inputs",
            "KSC",
            "KSC paper",
            "SCC",
            "SCC paper",
            "TSC",
            "TSC paper",
            "JS",
            "JS paper",
            "p",
            "verdict",
        ],
    )
    t.notes.append(
        f"Profile: {size.profile} MNIST training inputs per class, all qubits, k=100, top-1, min/max bounds, exact "
        f"probabilities. Suites from the MNIST test split: '50 per class' = {size.small}/class, '100 per class' and "
        f"'two classes' (the paper uses the same set for both; ternary models: the first two classes) = "
        f"{size.large}/class, 'single class' = up to {2 * size.large} inputs of the first class (the offline MNIST "
        "sample has 100 test images per digit, so 100: half the two-class suite). Each claim is tested by a "
        f"bootstrap of both suites' inputs ({BOOTSTRAP} resamples with replacement; Holm over KSC and SCC for "
        "100 vs 50 per class): p is the largest raw p of the row. Tolerance: 10 points on every criterion."
    )
    for name in size.qcov_models:
        model, prof = _profiled(name, size)
        runs = {
            "50": datasets.select("mnist", "test", model.classes, size.small, seed=1)[0],
            "100": datasets.select("mnist", "test", model.classes, size.large, seed=1)[0],
            "1": datasets.select("mnist", "test", model.classes[:1], 2 * size.large, seed=1)[0],
        }
        if len(model.classes) > 2:  # ternary: two of the three classes, and all three
            runs["2"] = datasets.select("mnist", "test", model.classes[:2], size.large, seed=1)[0]
            runs["3"] = runs["100"]
        else:
            runs["2"] = runs["100"]
        got, probs = {}, {}
        for key, x in runs.items():
            probs[key] = model_probabilities(model, x, register="all")
            ksc, scc, tsc = _totals([("suite", probs[key])], prof)
            js = diversity(input_states(model, x))["js_divergence"]
            got[key] = (pct(ksc), pct(scc), pct(tsc), round(float(js), 4), len(x))

        def ksc_scc(key: str, idx: np.ndarray, probs: dict = probs, prof: object = prof) -> np.ndarray:
            return _totals([("s", probs[key][idx])], prof, ("ksc", "scc"))

        sizes = {k: len(v) for k, v in probs.items()}
        more = bootstrap_test(ksc_scc, sizes, "100", "50")  # KSC and SCC: 100 per class above 50
        wider = {k: bootstrap_test(ksc_scc, sizes, k, "1")[:1] for k in ("2", "3") if k in probs}  # KSC only
        for key, label in STRATEGIES.items():
            if key not in got:
                continue
            ours, paper = got[key], QCOV_TABLE3.get(name, {}).get(key)
            comparisons = more if key in ("50", "100") else wider[key if key != "1" else "2"]
            close = paper is not None and all(abs(o - p) <= 10 for o, p in zip(ours[:3], paper))
            t.rows.append(
                {
                    "model": name,
                    "suite": label,
                    "inputs": ours[4],
                    "KSC": ours[0],
                    "KSC paper": paper[0] if paper else None,
                    "SCC": ours[1],
                    "SCC paper": paper[1] if paper else None,
                    "TSC": ours[2],
                    "TSC paper": paper[2] if paper else None,
                    "JS": ours[3],
                    "JS paper": QCOV_TABLE2.get(name, {}).get(key if key != "2" else "100"),
                    "p": float(f"{max(p for _, p in comparisons):.3g}"),
                    "verdict": tested(comparisons, close) if paper else "ours only",
                }
            )
    t.plot = lambda tab, path: _bars(tab, path, "KSC", "KSC paper", lambda r: f"{r['model']}\n{r['suite']}")
    t.keys, t.ours, t.theirs = ("model", "suite"), "KSC", "KSC paper"
    return t


def qcov_sec462(size: Size) -> Table:
    """QCov Sec. 4.6.2 (Fig. paramchoice, MNIST): the input-diversity comparison of Table 3 (single
    class vs two classes) under the default parameters (k=100, top-1, min/max bounds) and the
    alternative ones (k=200, top-2, LB = l - sigma, UB = u + sigma)."""
    t = Table(
        "qcov",
        "sec4.6.2-parameter-choice",
        "QCov Sec. 4.6.2 (MNIST): coverage of single- and two-class suites under k=100/top-1/min-max and "
        "k=200/top-2/+-sigma",
        "the alternative setting lowers KSC and SCC and raises TSC, and two classes still cover more than one",
        ["model", "setting", "suite", "inputs", "KSC", "SCC", "TSC", "paper", "p", "verdict"],
    )
    settings = {"default": (100, 1, "minmax"), "k=200, top-2, +-sigma": (200, 2, "sigma")}
    for name in size.qcov_models:
        model, prof = _profiled(name, size)
        suites = {
            "single class": datasets.select("mnist", "test", model.classes[:1], 2 * size.large, seed=1)[0],
            "two classes": datasets.select("mnist", "test", model.classes[:2], size.large, seed=1)[0],
        }
        probs = {k: model_probabilities(model, x, register="all") for k, x in suites.items()}
        got: dict[tuple[str, str], dict] = {}
        for setting, (k, top, method) in settings.items():
            for suite, p in probs.items():
                tot = _totals([("suite", p)], prof, k=k, top_k=top, method=method)
                got[setting, suite] = {c: pct(v) for c, v in zip(CRITERIA, tot)}

        def stat(key: str, idx: np.ndarray, probs: dict = probs, prof: object = prof) -> np.ndarray:
            setting, suite = key.split("|")
            k, top, method = settings[setting]
            return _totals([("s", probs[suite][idx])], prof, k=k, top_k=top, method=method)

        sizes = {f"{s}|{u}": len(probs[u]) for s in settings for u in suites}
        trend = {s: bootstrap_test(stat, sizes, f"{s}|two classes", f"{s}|single class")[0] for s in settings}
        for setting in settings:
            for suite in suites:
                g = got[setting, suite]
                comparisons = [trend[setting]]
                if setting != "default":  # lower KSC and SCC, higher TSC than the default on the same inputs
                    drop = bootstrap_test(stat, sizes, f"default|{suite}", f"{setting}|{suite}", paired=True)
                    comparisons += [drop[0], drop[1], (not drop[2][0], drop[2][1])]
                t.rows.append(
                    {
                        "model": name,
                        "setting": setting,
                        "suite": suite,
                        "inputs": len(suites[suite]),
                        "KSC": g["ksc"],
                        "SCC": g["scc"],
                        "TSC": g["tsc"],
                        "paper": None,
                        "p": float(f"{max(p for _, p in comparisons):.3g}"),
                        "verdict": tested(comparisons, False),
                    }
                )
    t.notes.append(
        f"Profile: {size.profile} MNIST training inputs per class, all qubits, exact probabilities. Suites from the "
        f"MNIST test split: 'single class' = up to {2 * size.large} inputs of the first class, 'two classes' = "
        f"{size.large}/class of the first two. The paper gives this study as a figure without numbers, so the best "
        "verdict is 'same direction': on the default rows the claim is two classes >= one on KSC; on the "
        "alternative rows, KSC and SCC lower and TSC higher than the default's on the same inputs, with the two-class "
        f"trend kept; each by a bootstrap of the inputs ({BOOTSTRAP} resamples, paired across settings), Holm over "
        "a row's comparisons, p the largest raw p."
    )
    t.plot = lambda tab, path: _bars(tab, path, "KSC", "paper", lambda r: f"{r['model']} {r['suite']}\n{r['setting']}")
    t.keys, t.ours, t.theirs = ("model", "setting", "suite"), "KSC", "paper"
    return t


def qcov_sampling(size: Size) -> Table:
    """QCov Sec. 4.5 (Fig. 6): coverage from sampled probability vectors against the exact one."""
    t = Table(
        "qcov",
        "sec4.5-sampling-cost",
        "QCov Sec. 4.5 (Fig. 6, MNIST, QCL): coverage from 1e2-1e5 shots per input against exact probabilities",
        "coverage approaches the exact value as shots grow (about 1e5 needed); SCC may fluctuate",
        ["shots", "KSC", "SCC", "TSC", "KSC exact", "SCC exact", "TSC exact", "dev KSC", "dev TSC", "p", "verdict"],
    )
    model, _ = _profiled("qcl", size)
    xp, _ = datasets.select("mnist", "train", model.classes, size.profile, seed=0)
    xs, _ = datasets.select("mnist", "test", model.classes, size.large, seed=1)
    p_prof, p_suite = model_probabilities(model, xp, register="all"), model_probabilities(model, xs, register="all")

    def totals(pp: np.ndarray, ps: np.ndarray) -> tuple[float, float, float]:
        ksc, scc, tsc = _totals([("suite", ps)], build_profile(pp, model.sha256))
        return pct(ksc), pct(scc), pct(tsc)  # type: ignore[return-value]

    exact = totals(p_prof, p_suite)
    rows = []
    vectors = {"exact": (p_prof, p_suite)}
    for shots in size.shots:
        rng = np.random.default_rng(shots)
        sampled = [engine.sample_counts(p, shots, rng) / shots for p in (p_prof, p_suite)]
        vectors[str(shots)] = (sampled[0], sampled[1])
        rows.append((shots, *totals(*sampled)))
    profiles = {k: build_profile(v[0], model.sha256) for k, v in vectors.items()}

    def stat(key: str, idx: np.ndarray) -> np.ndarray:
        """KSC and TSC of the suite's inputs idx, profile and suite from the same vectors (exact or sampled)."""
        return _totals([("s", vectors[key][1][idx])], profiles[key], ("ksc", "tsc"))

    boot = paired_bootstrap(stat, list(vectors), len(p_suite))
    lo, hi = str(size.shots[0]), str(size.shots[-1])
    full = {k: stat(k, np.arange(len(p_suite))) for k in vectors}
    comparisons = [  # the fewest shots deviate more from the exact coverage than the most shots, KSC and TSC
        bootstrap_p(
            float(abs(full[lo][j] - full["exact"][j]) - abs(full[hi][j] - full["exact"][j])),
            np.abs(boot[lo][:, j] - boot["exact"][:, j]) - np.abs(boot[hi][:, j] - boot["exact"][:, j]),
        )
        for j in (0, 1)
    ]
    for shots, ksc, scc, tsc in rows:
        t.rows.append(
            {
                "shots": shots,
                "KSC": ksc,
                "SCC": scc,
                "TSC": tsc,
                "KSC exact": exact[0],
                "SCC exact": exact[1],
                "TSC exact": exact[2],
                "dev KSC": round(abs(ksc - exact[0]), 2),
                "dev TSC": round(abs(tsc - exact[2]), 2),
                "p": float(f"{max(p for _, p in comparisons):.3g}"),
                "verdict": tested(comparisons, abs(rows[-1][1] - exact[0]) <= 2),
            }
        )
    t.notes.append(
        "Both the profile and the suite are built from sampled vectors (counts / shots, seeded), as on hardware; "
        "the paper gives this as a figure, so the verdict tests its stated trend, not numbers: the deviation from "
        "the exact KSC and TSC is larger at the fewest shots than at the most, by a bootstrap of the suite's inputs "
        f"({BOOTSTRAP} resamples, paired across shot counts; profiles fixed), Holm over the two, p the largest raw p."
    )
    t.plot = _sampling_plot
    t.keys, t.ours, t.theirs = ("shots",), "dev KSC", ""
    return t


def qcov_fig7(size: Size) -> Table:
    """QCov Sec. 4.5 (Fig. 7, MNIST, QCL): the input-diversity comparison under finite sampling,
    profile and suites from sampled vectors at each shot count."""
    t = Table(
        "qcov",
        "fig7-finite-sampling-diversity",
        "QCov Fig. 7 (MNIST, QCL): KSC/SCC/TSC of 50- vs 100-per-class suites from sampled probabilities",
        "under finite sampling every criterion still rises with the more diverse suite",
        ["shots", "suite", "inputs", "KSC", "SCC", "TSC", "paper", "p", "verdict"],
    )
    model, _ = _profiled("qcl", size)
    xp, _ = datasets.select("mnist", "train", model.classes, size.profile, seed=0)
    suites = {
        "50 per class": datasets.select("mnist", "test", model.classes, size.small, seed=1)[0],
        "100 per class": datasets.select("mnist", "test", model.classes, size.large, seed=1)[0],
    }
    p_prof = model_probabilities(model, xp, register="all")
    p_suites = {k: model_probabilities(model, x, register="all") for k, x in suites.items()}
    for shots in size.shots:
        rng = np.random.default_rng(shots)
        prof = build_profile(engine.sample_counts(p_prof, shots, rng) / shots, model.sha256)
        got, sampled = {}, {}
        for name, p in p_suites.items():
            sampled[name] = engine.sample_counts(p, shots, rng) / shots
            got[name] = {c: pct(v) for c, v in zip(CRITERIA, _totals([("suite", sampled[name])], prof))}

        def stat(name: str, idx: np.ndarray, sampled: dict = sampled, prof: object = prof) -> np.ndarray:
            return _totals([("s", sampled[name][idx])], prof)

        sizes = {k: len(v) for k, v in sampled.items()}
        comparisons = bootstrap_test(stat, sizes, "100 per class", "50 per class")
        for name in suites:
            t.rows.append(
                {
                    "shots": shots,
                    "suite": name,
                    "inputs": len(suites[name]),
                    "KSC": got[name]["ksc"],
                    "SCC": got[name]["scc"],
                    "TSC": got[name]["tsc"],
                    "paper": None,
                    "p": float(f"{max(p for _, p in comparisons):.3g}"),
                    "verdict": tested(comparisons, False),
                }
            )
    t.notes.append(
        f"Profile: {size.profile} MNIST training inputs per class, suites {size.small} and {size.large} test inputs "
        "per class, all qubits, k=100, top-1, min/max bounds; every vector is counts / shots (seeded). The paper "
        "shows this as a figure, so the best verdict is 'same direction': the claim holds at a shot count when the "
        "larger suite's KSC, SCC and TSC are each significantly above the smaller one's (a bootstrap of the sampled "
        f"vectors, {BOOTSTRAP} resamples, Holm over the three; p the largest raw p)."
    )
    t.plot = lambda tab, path: _bars(tab, path, "KSC", "paper", lambda r: f"{r['shots']} {r['suite']}")
    t.keys, t.ours, t.theirs = ("shots", "suite"), "KSC", "paper"
    return t


QCOV_TABLE9 = {  # QCov Table 9 (MNIST): KSC, SCC (%) per training distribution (Org, Imbalance, OOD, Near, Away)
    "qcl": ((59.79, 54.10), (60.61, 56.35), (57.09, 47.61), (57.15, 47.66), (67.08, 73.29)),
    "ccqc": ((58.34, 53.91), (59.05, 57.09), (56.17, 49.95), (56.13, 50.29), (67.4, 71.73)),
    "qcnn": ((59.19, 52.10), (60.13, 58.06), (56.92, 46.14), (54.52, 43.55), (66.25, 71.78)),
    "hcqc_so4": ((50.01, 51.22), (51.04, 55.81), (46.81, 43.75), (46.65, 43.6), (57.44, 66.89)),
    "hqnn": ((26.27, 50.0), (19.30, 64.50), (21.53, 29.83), (27.21, 25.06), (35.28, 59.72)),
    "qcl-ternary": ((62.08, 52.29), (63.10, 53.03), (61.43, 50.24), (60.21, 46.88), (66.26, 60.25)),
    "ccqc-ternary": ((59.39, 49.17), (63.93, 60.74), (57.59, 47.41), (57.28, 48.93), (67.68, 66.65)),
    "qcnn-ternary": ((56.12, 51.81), (60.39, 58.50), (54.87, 51.27), (54.51, 49.07), (63.64, 65.23)),
    "hqnn-ternary": ((35.39, 51.42), (31.21, 62.55), (24.46, 32.57), (22.29, 33.59), (44.19, 68.75)),
}
QCOV_TABLE12 = ((75.89, 73.97), (73.32, 76.42), (74.58, 73.68), (73.28, 74.71), (72.99, 80.86))  # QCL, MAD bounds
DISTRIBUTIONS = ("Org.", "Imbalance", "OOD", "Near", "Away")


def _training_sets(model: artifact.Model, per_class: int) -> dict[str, np.ndarray]:
    """QCov Sec. 4.6.1's profiling sets, all of the same size: Org. (per_class of each class), Imbalance
    (the first class only), OOD (digits the model never saw), Near / Away (the least / most confident
    correctly classified training inputs: near / far from the decision boundary)."""
    total = per_class * len(model.classes)
    org = datasets.select("mnist", "train", model.classes, per_class, seed=0)[0]
    imbalance = datasets.select("mnist", "train", model.classes[:1], total, seed=0)[0]
    unseen = [d for d in range(10) if d not in model.classes]
    ood = datasets.select("mnist", "train", unseen, -(-total // len(unseen)), seed=0)[0][:total]
    xa, ya = datasets.select("mnist", "train", model.classes)
    near = xa[suites.build(model, xa, ya, "lconf", per_class, 0)]
    away = xa[suites.build(model, xa, ya, "hconf", per_class, 0)]
    return dict(zip(DISTRIBUTIONS, (org, imbalance, ood, near, away)))


PROFILE_BOOTSTRAP = BOOTSTRAP
"""Resamples of the Table 9/12 bootstrap (each rebuilds five profiles; 3 ms per coverage)."""


def _cover_full(model: artifact.Model, profile_probs: np.ndarray, suite: np.ndarray, method: str) -> np.ndarray:
    return _totals([("s", suite)], build_profile(profile_probs, model.sha256), ("ksc", "scc"), method=method)


def _profile_bootstrap(
    model: artifact.Model, sets: dict[str, np.ndarray], suite: np.ndarray, methods: tuple[str, ...]
) -> dict[tuple[str, str], np.ndarray]:
    """(bounds, profile data) -> (PROFILE_BOOTSTRAP, 2) KSC and SCC: per resample, the suite's inputs
    once and each profile's inputs drawn with replacement, the profile rebuilt, every bounds method
    on the same draws."""
    rng = np.random.default_rng(0)
    out: dict[tuple[str, str], list] = {(m, d): [] for m in methods for d in sets}
    for _ in range(PROFILE_BOOTSTRAP):
        s = suite[rng.integers(0, len(suite), len(suite))]
        for d, p in sets.items():
            prof = p[rng.integers(0, len(p), len(p))]
            for m in methods:
                out[m, d].append(_cover_full(model, prof, s, m))
    return {k: np.array(v) for k, v in out.items()}


def _boot_above(
    full: dict[tuple[str, str], np.ndarray], boot: dict[tuple[str, str], np.ndarray], a: tuple, b: tuple, j: int
) -> tuple[bool, float]:
    """Criterion j (0 KSC, 1 SCC) under (bounds, profile data) a above b's: the full-data difference's
    sign and the paired bootstrap's p."""
    return bootstrap_p(float(full[a][j] - full[b][j]), boot[a][:, j] - boot[b][:, j])


QCOV_TABLE13 = {  # HQNN, binary MNIST: (average, closest) fidelities
    "Within Org. output": (0.4441, 0.9899),
    "Within Near output": (0.3465, 0.9622),
    "Between Org. and Near input": (None, 0.9603),
}


def _fidelities(a: np.ndarray, b: np.ndarray | None = None) -> tuple[float, float]:
    """(average pairwise fidelity, average fidelity to the closest other state): within `a`, or
    from each state of `b` to its closest state of `a` (average None then)."""
    gram = np.abs(a.conj() @ (a if b is None else b).T) ** 2
    if b is not None:
        return float("nan"), float(np.mean(gram.max(axis=0)))
    np.fill_diagonal(gram, np.nan)
    return float(np.nanmean(gram)), float(np.mean(np.nanmax(gram, axis=1)))


def qcov_table13(size: Size) -> Table:
    """QCov Table 13 (Sec. 4.6.1, HQNN, binary MNIST): fidelities between the output states of the Org.
    and Near training sets, and between their input states."""
    from qmltest.simulate import statevector

    t = Table(
        "qcov",
        "table13-fidelity",
        "QCov Table 13 (HQNN, binary MNIST): fidelity within Org. and Near output states and between their inputs",
        "Near inputs give less similar output states than Org. ones (lower average and closest-neighbour "
        "fidelity), the reason the paper gives for Near lowering SCC on MNIST",
        ["states", "average", "average paper", "closest", "closest paper", "p", "verdict"],
    )
    model = artifact.load(MODELS / ZOO["hqnn"])
    sets = _training_sets(model, size.profile)
    n = model.ir.num_qubits

    def outputs(raw: np.ndarray) -> np.ndarray:
        enc = model.encode(raw)
        values = {p: enc[:, i] for i, p in enumerate(model.ir.inputs)}
        return statevector.run(program.of_model(model).ops, statevector.zero_states(len(enc), n), values, n)

    org, near = outputs(sets["Org."]), outputs(sets["Near"])
    got = {
        "Within Org. output": _fidelities(org),
        "Within Near output": _fidelities(near),
        "Between Org. and Near input": _fidelities(
            input_states(model, sets["Org."]), input_states(model, sets["Near"])
        ),
    }
    pooled = np.concatenate([org, near])
    gram = np.abs(pooled.conj() @ pooled.T) ** 2
    np.fill_diagonal(gram, np.nan)

    def within(ix: np.ndarray) -> np.ndarray:
        g = gram[np.ix_(ix, ix)]
        return np.array([np.nanmean(g), np.mean(np.nanmax(g, axis=1))])

    # Org.'s average and closest fidelities above Near's: a permutation test over the pooled output states
    comparisons = permutation_test(lambda ia, ib: within(ia) - within(ib), len(org), len(near))
    for name, (avg, closest) in got.items():
        pa, pc = QCOV_TABLE13[name]
        close = abs(closest - pc) <= 0.1 and (pa is None or abs(avg - pa) <= 0.1)
        claim = name != "Between Org. and Near input"
        t.rows.append(
            {
                "states": name,
                "average": None if np.isnan(avg) else round(avg, 4),
                "average paper": pa,
                "closest": round(closest, 4),
                "closest paper": pc,
                "p": float(f"{max(p for _, p in comparisons):.3g}") if claim else None,
                "verdict": tested(comparisons, close) if claim else "ours only",
            }
        )
    t.notes.append(
        f"Org. and Near: {size.profile} training inputs per class each, as Table 9 builds them (Near: the least "
        "confident correctly classified ones). Output states: the whole circuit on |0...0>; input states: after the "
        "leading feature map. Average: mean |<a|b>|^2 over pairs; closest: mean over states of the largest fidelity "
        "to another state (between the sets: from each Near input to its closest Org. input). The claim rows hold "
        "when Near's average and closest fidelities are both below Org.'s, each by a permutation test over the "
        f"pooled output states ({BOOTSTRAP} random splits), Holm over the two, p the larger raw p. Tolerance 0.1."
    )
    t.plot = lambda tab, path: _bars(tab, path, "closest", "closest paper", lambda r: r["states"])
    t.keys, t.ours, t.theirs = ("states",), "closest", "closest paper"
    return t


def qcov_table9(size: Size) -> Table:
    """QCov Tables 9 and 12: KSC and SCC of one test suite under profiles from unrepresentative data."""
    t = Table(
        "qcov",
        "table9-12-training-distribution",
        "QCov Tables 9 and 12 (MNIST): KSC/SCC of the 100-per-class test suite when the profile comes from "
        "imbalanced, OOD, near-boundary or far-from-boundary data (min/max bounds; MAD and +-sigma bounds on QCL)",
        "against Org.: Imbalance raises SCC; Away raises KSC and SCC; OOD and Near lower them; +-sigma bounds "
        "(Sec. 4.6.2) give no higher SCC than min/max",
        ["model", "bounds", "profile data", "KSC", "KSC paper", "SCC", "SCC paper", "p", "verdict"],
    )
    for name in size.qcov_models:
        model = artifact.load(MODELS / ZOO[name])
        xs = datasets.select("mnist", "test", model.classes, size.large, seed=1)[0]
        suite = model_probabilities(model, xs, register="all")
        sets = {
            d: model_probabilities(model, x, register="all") for d, x in _training_sets(model, size.profile).items()
        }
        methods = (("minmax", QCOV_TABLE9.get(name)), ("mad", QCOV_TABLE12), ("sigma", None))
        methods = methods if name == "qcl" else methods[:1]
        boot = _profile_bootstrap(model, sets, suite, tuple(m for m, _ in methods))
        full = {(m, d): _cover_full(model, p, suite, m) for m, _ in methods for d, p in sets.items()}
        above = partial(_boot_above, full, boot)  # (a, b, criterion j): a's coverage above b's
        for method, paper_rows in methods:
            got = {d: (pct(full[method, d][0]), pct(full[method, d][1])) for d in sets}
            if method == "sigma":  # Sec. 4.6.2: (l - sigma, u + sigma) shrinks the corner regions: SCC no higher
                for d in DISTRIBUTIONS:
                    test = above(("minmax", d), ("sigma", d), 1)
                    t.rows.append(
                        {"model": name, "bounds": method, "profile data": d, "KSC": got[d][0], "KSC paper": None}
                        | {"SCC": got[d][1], "SCC paper": None, "p": float(f"{test[1]:.3g}")}
                        | {"verdict": tested([test], False)}
                    )
                continue
            m = method
            claims = {
                "Imbalance": [above((m, "Imbalance"), (m, "Org."), 1)],
                "Away": [above((m, "Away"), (m, "Org."), j) for j in (0, 1)],
                "OOD": [above((m, "Org."), (m, "OOD"), j) for j in (0, 1)],
                "Near": [above((m, "Org."), (m, "Near"), j) for j in (0, 1)],
            }
            for i, d in enumerate(DISTRIBUTIONS):
                paper = paper_rows[i] if paper_rows else None
                close = paper is not None and all(abs(a - b) <= 10 for a, b in zip(got[d], paper))
                if paper is None:
                    found = "ours only"
                elif d == "Org.":  # no claim beyond the numbers themselves
                    found = "reproduced" if close else "differs"
                else:
                    found = tested(claims[d], close)
                t.rows.append(
                    {
                        "model": name,
                        "bounds": method,
                        "profile data": d,
                        "KSC": got[d][0],
                        "KSC paper": paper[0] if paper else None,
                        "SCC": got[d][1],
                        "SCC paper": paper[1] if paper else None,
                        "p": float(f"{max(p for _, p in claims[d]):.3g}") if d in claims else None,
                        "verdict": found,
                    }
                )
    t.notes.append(
        f"Claims are tested by a bootstrap ({PROFILE_BOOTSTRAP} resamples): each resample draws the test suite's "
        "inputs and every profile's inputs with replacement (one suite resample shared by all profiles and bounds of "
        "a model, so comparisons are paired on it); Holm over a row's comparisons, p the largest raw p. A claim "
        "that a coverage is no higher than another is tested as 'lower': equal coverage is inconclusive."
    )
    t.notes.append(
        f"Every profile has {size.profile} inputs per class of the model ({size.profile * 2} for binary models); the "
        f"test suite is {size.large} MNIST test inputs per class. Org. rows: 'reproduced' within 10 points, else "
        "'differs'. MAD bounds: 0.99 confidence (Table 12 is QCL only). Sigma rows (no paper table; Sec. "
        "4.6.2's setting LB = l - sigma, UB = u + sigma) hold when SCC is no higher than with min/max bounds. Tables "
        "10-11 (FashionMNIST, CIFAR10) need data not shipped offline. Tolerance 10 points."
    )
    t.plot = lambda tab, path: _bars(
        tab, path, "SCC", "SCC paper", lambda r: f"{r['model']} {r['bounds']}\n{r['profile data']}"
    )
    t.keys, t.ours, t.theirs = ("model", "bounds", "profile data"), "SCC", "SCC paper"
    return t


QCOV_TABLE6 = {  # QCov Table 6 (MNIST): KSC, SCC, TSC (%) of Org. (50/class) and Org. + each attack's inputs
    "qcl": {
        "org": (45.72, 36.28, 2.64),
        "random": (58.42, 45.17, 5.67),
        "fgsm": (59.13, 55.22, 5.69),
        "dlfuzz": (58.87, 54.79, 6.25),
        "jsma": (59.74, 53.31, 5.86),
        "quantest": (58.74, 46.34, 3.81),
    },
    "ccqc": {
        "org": (44.54, 38.43, 1.76),
        "random": (56.96, 47.85, 1.95),
        "fgsm": (58.43, 57.03, 2.25),
        "dlfuzz": (57.93, 56.79, 2.25),
        "jsma": (58.73, 56.15, 3.12),
        "quantest": (57.77, 50.29, 2.25),
    },
    "qcnn": {
        "org": (45.39, 34.37, 1.66),
        "random": (57.97, 45.36, 1.86),
        "fgsm": (59.33, 53.91, 4.1),
        "dlfuzz": (58.68, 52.49, 3.81),
        "jsma": (59.21, 51.85, 3.61),
        "quantest": (54.65, 45.95, 3.02),
    },
    "hcqc_so4": {
        "org": (36.43, 37.06, 0.97),
        "random": (46.49, 45.95, 0.98),
        "fgsm": (46.79, 57.76, 0.98),
        "dlfuzz": (47.93, 57.03, 1.17),
        "jsma": (49.18, 54.44, 1.76),
        "quantest": (48.29, 47.65, 1.37),
    },
    "hqnn": {
        "org": (32.25, 32.37, 0.39),
        "random": (53.70, 48.73, 0.59),
        "fgsm": (53.42, 58.35, 0.39),
        "dlfuzz": (40.42, 43.99, 0.39),
        "jsma": (60.79, 59.08, 0.98),
        "quantest": (45.32, 44.87, 0.39),
    },
}


def qcov_table6(size: Size) -> Table:
    """QCov Table 6 (Sec. 4.3): coverage of the original suite and of it plus each attack's inputs."""
    t = Table(
        "qcov",
        "table6-abnormal-inputs",
        "QCov Table 6 (MNIST): KSC/SCC/TSC of Org. (50 per class) and of Org. plus the adversarial or noisy "
        "version of every input",
        "abnormal inputs raise coverage, and adversarial ones raise SCC more than random noise does",
        ["model", "suite", "KSC", "KSC paper", "SCC", "SCC paper", "TSC", "TSC paper", "p", "verdict"],
    )
    for name in size.attack_models:
        model = artifact.load(MODELS / ZOO[name])
        xt, _ = datasets.select("mnist", "train", model.classes, size.profile, seed=0)
        prof = build_profile(model_probabilities(model, xt, register="all"), model.sha256)
        x, y = datasets.select("mnist", "test", model.classes)
        idx = suites.build(model, x, y, "ori", size.attack_per_class, 0)
        x, yi = x[idx], label_indices(model, y[idx])
        org = model_probabilities(model, x, register="all")
        added = {}
        for method in size.attack_methods:
            adv = attacks.attack(
                model, x, yi, method, 64 / 255, 0.0, 255.0, np.random.default_rng(0), dlfuzz_steps=size.dlfuzz_steps
            )
            added[method] = model_probabilities(model, adv, register="all")

        def stat(
            key: str, idx: np.ndarray, org: np.ndarray = org, added: dict = added, prof: object = prof
        ) -> np.ndarray:
            """KSC, SCC, TSC of Org. (inputs idx) and, for an attack, its versions of the same inputs."""
            parts = [("Org.", org[idx])] + ([] if key == "org" else [(key, added[key][idx])])
            return _totals(parts, prof)

        keys = ["org", *added]
        full = {k: stat(k, np.arange(len(org))) for k in keys}
        boot = paired_bootstrap(stat, keys, len(org))

        def above(a: str, b: str, j: int, full: dict = full, boot: dict = boot) -> tuple[bool, float]:
            return bootstrap_p(float(full[a][j] - full[b][j]), boot[a][:, j] - boot[b][:, j])

        vals = {k: (pct(v[0]), pct(v[1]), pct(v[2])) for k, v in full.items()}
        for key, ours in vals.items():
            paper = QCOV_TABLE6.get(name, {}).get(key)
            if key == "org":
                comparisons = [above(m, "org", 0) for m in added]
            elif key == "random":
                comparisons = [above("random", "org", 0)]
            else:
                comparisons = [above(key, "random", 1) if "random" in added else above(key, "org", 0)]
            close = paper is not None and all(abs(a - b) <= 10 for a, b in zip(ours, paper))
            t.rows.append(
                {
                    "model": name,
                    "suite": "Org." if key == "org" else f"Org.+{key}",
                    "KSC": ours[0],
                    "KSC paper": paper[0] if paper else None,
                    "SCC": ours[1],
                    "SCC paper": paper[1] if paper else None,
                    "TSC": ours[2],
                    "TSC paper": paper[2] if paper else None,
                    "p": float(f"{max(p for _, p in comparisons):.3g}"),
                    "verdict": tested(comparisons, close) if paper else "ours only",
                }
            )
    t.notes.append(
        f"Org.: {size.attack_per_class} correctly classified MNIST test inputs per class; each attack as in Table 14; "
        f"profile {size.profile} training inputs per class. Claims: Org. rows, every addition raises KSC; random "
        "rows, KSC rises; attack rows, SCC exceeds Org.+random's. Each by a paired bootstrap of the inputs "
        f"({BOOTSTRAP} resamples: an input and its attacked versions travel together), Holm over a row's "
        "comparisons, p the largest raw p. Tolerance 10 points."
    )
    t.plot = lambda tab, path: _bars(tab, path, "SCC", "SCC paper", lambda r: f"{r['model']}\n{r['suite']}")
    t.keys, t.ours, t.theirs = ("model", "suite"), "SCC", "SCC paper"
    return t


QCOV_TABLE14 = {
    "qcl": {"fgsm": 100, "dlfuzz": 86, "jsma": 100, "quantest": 100},
    "ccqc": {"fgsm": 89, "dlfuzz": 72, "jsma": 100, "quantest": 100},
    "qcnn": {"fgsm": 100, "dlfuzz": 85, "jsma": 100, "quantest": 100},
    "hcqc_so4": {"fgsm": 100, "dlfuzz": 84, "jsma": 100, "quantest": 100},
    "hqnn": {"fgsm": 11.5, "dlfuzz": 11.16, "jsma": 53.18, "quantest": 6.47},
}


def qcov_attacks(size: Size) -> Table:
    """QCov Table 14: attack success rates on correctly classified MNIST inputs."""
    t = Table(
        "qcov",
        "table14-attacks",
        "QCov Table 14 (MNIST): attack success rate (ASR) of FGSM (eps 64/255), JSMA, DLFuzz, QuanTest, random noise",
        "the attacks break the circuit-body QNNs almost always and the hybrid HQNN far less often",
        ["model", "attack", "inputs", "ASR %", "ASR paper %", "seconds", "p", "verdict"],
    )
    from scipy.stats import binomtest

    for name in size.attack_models:
        model = artifact.load(MODELS / ZOO[name])
        x, y = datasets.select("mnist", "test", model.classes)
        idx = suites.build(model, x, y, "ori", size.attack_per_class, 0)
        x, yi = x[idx], label_indices(model, y[idx])
        for method in size.attack_methods:
            start = time.perf_counter()
            adv = attacks.attack(
                model, x, yi, method, 64 / 255, 0.0, 255.0, np.random.default_rng(0), dlfuzz_steps=size.dlfuzz_steps
            )
            asr = 100 * attacks.success_rate(model, x, adv, yi)
            paper = QCOV_TABLE14.get(name, {}).get(method)
            broken = round(asr * len(x) / 100)  # inputs the attack broke
            p = float(binomtest(broken, len(x), 0.5).pvalue)
            test = None if paper is None else ((asr > 50) if paper >= 50 else (asr < 50), p)
            t.rows.append(
                {
                    "model": name,
                    "attack": method,
                    "inputs": len(x),
                    "ASR %": round(asr, 2),
                    "ASR paper %": paper,
                    "seconds": round(time.perf_counter() - start, 1),
                    "p": float(f"{p:.3g}"),
                    "verdict": "ours only" if test is None else tested([test], abs(asr - paper) <= 10),  # type: ignore[operator]
                }
            )
    t.notes.append(
        f"DLFuzz: {size.dlfuzz_steps} signed-gradient steps of epsilon/10 inside the epsilon ball (QCov runs 500). "
        "Verdict: 'same direction' when our rate is significantly on the paper's side of 50% (exact two-sided "
        "binomial test of the broken inputs against 50%, p); tolerance 10 points."
    )
    t.plot = lambda tab, path: _bars(tab, path, "ASR %", "ASR paper %", lambda r: f"{r['model']}\n{r['attack']}")
    t.keys, t.ours, t.theirs = ("model", "attack"), "ASR %", "ASR paper %"
    return t


QCOV_RQ3 = {"qcl": {"ksc": 62, "scc": 63, "tsc": 32}}
QCOV_RQ3_MEAN = {"random": 21.5, "guided": 45.0}


def qcov_fuzzing(size: Size) -> Table:
    """QCov RQ3 (Sec. 4.4): TSR of coverage-guided fuzzing vs random testing, both TSR readings,
    Algorithm 1 as stated (until the queue empties) and on a fixed budget."""
    t = Table(
        "qcov",
        "rq3-fuzzing",
        "QCov RQ3 (Sec. 4.4, MNIST): test success rate of KSC/SCC/TSC-guided fuzzing vs random testing",
        "coverage guidance raises TSR over random testing (21.5% -> 45% on MNIST; QCL: KSC 62%, SCC 63%, TSC 32%)",
        [
            "model",
            "mode",
            "guide",
            "iterations",
            "enqueued",
            "stop",
            "TSR mutants %",
            "TSR seeds %",
            "TSR paper %",
            "p vs random",
            "verdict",
        ],
    )
    for name in size.fuzz_models:
        model = artifact.load(MODELS / ZOO[name])
        xt, _ = datasets.select("mnist", "train", model.classes, size.profile, 0)
        prof = build_profile(model_probabilities(model, xt, register="all"), model.sha256)
        b = Bounds(*profile_bounds(prof))
        x, y = datasets.select("mnist", "test", model.classes, size.fuzz_per_class, 0)
        yi = label_indices(model, y)
        keep = model.predict(model_probabilities(model, x)) == yi
        modes = (
            ("fixed budget", size.fuzz_budget, "fifo"),
            ("until queue empty", size.exhaust_cap, "fifo"),
            ("DeepHunter-style schedule", size.fuzz_budget, "prob"),
        )
        for mode, budget, schedule in modes:
            stats: dict[str, list] = {g: [] for g in guides()}
            for seed in size.fuzz_seeds:
                res = campaign(
                    model,
                    x[keep],
                    yi[keep],
                    (28, 28),
                    b,
                    list(guides()),
                    budget,
                    seed,
                    None,
                    where=parallel.plan(size.workers),
                    schedule=schedule,
                )
                for g in guides():
                    stats[g].append(res["guides"][g])
            random_tsr = [r["tsr"] for r in stats["random"]]
            for g in guides():
                s = stats[g]
                tsr = 100 * float(np.mean([r["tsr"] for r in s]))
                paper = QCOV_RQ3.get(name, {}).get(g, QCOV_RQ3_MEAN["random"] if g == "random" else None)
                holds, p = seeds_test([r["tsr"] for r in s], random_tsr)
                close = paper is not None and abs(tsr - paper) <= 10
                t.rows.append(
                    {
                        "model": name,
                        "mode": mode,
                        "guide": g,
                        "iterations": int(np.mean([r["iterations"] for r in s])),
                        "enqueued": int(np.mean([r["enqueued"] for r in s])),
                        "stop": "/".join(sorted({r["stop"] for r in s})),
                        "TSR mutants %": round(tsr, 2),
                        "TSR seeds %": round(100 * float(np.mean([r["seed_tsr"] for r in s])), 2),
                        "TSR paper %": paper,
                        "p vs random": None if g == "random" else round(p, 4),
                        "verdict": tested([(holds, p)], close)
                        if g != "random"
                        else ("reproduced" if abs(tsr - QCOV_RQ3_MEAN["random"]) <= 10 else "differs"),
                    }
                )
    t.notes.append(
        f"{size.fuzz_per_class} test seeds per class (correctly classified ones kept), profile {size.profile}/class, "
        f"DeepHunter image mutations, {size.fuzz_budget} mutants per guide on the fixed budget; 'until queue empty' "
        f"runs Algorithm 1 as stated, capped at {size.exhaust_cap}. Campaign seeds {list(size.fuzz_seeds)}. "
        "TSR mutants = failed mutants / generated mutants; TSR seeds = initial seeds with a failing descendant / "
        "initial seeds. Guided rows: the claim is 'guide > random', tested over the paired campaign seeds "
        "(Wilcoxon signed-rank, two-sided, alpha 0.05): 'inconclusive' when the seeds cannot tell, 'differs' "
        "when random is significantly better. The random row compares its mean with the paper's 21.5%. "
        "'DeepHunter-style schedule' is one more attempt at the guided advantage (issue 33): seeds stay in a "
        "pool and a seed fuzzed f times is picked with probability max(1 - f/20, 0.1), newer seeds first, "
        f"{size.fuzz_budget} mutants per guide (`qmltest fuzz --schedule prob`)."
    )
    t.plot = lambda tab, path: _bars(
        tab, path, "TSR mutants %", "TSR paper %", lambda r: f"{r['model']} {r['guide']}\n{r['mode']}"
    )
    t.keys, t.ours, t.theirs = ("model", "mode", "guide"), "TSR mutants %", "TSR paper %"
    return t


def _sampling_plot(t: Table, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    shots = [r["shots"] for r in t.rows]
    for crit in ("KSC", "SCC", "TSC"):
        line = ax.plot(shots, [r[crit] for r in t.rows], marker="o", label=crit)
        ax.axhline(t.rows[0][f"{crit} exact"], ls="--", color=line[0].get_color(), lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("shots per input")
    ax.set_ylabel("coverage %")
    ax.set_title("QCov Sec. 4.5: sampled vs exact (dashed)", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
