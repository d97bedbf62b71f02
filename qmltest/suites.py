"""Test suites of varying quality from correctly classified inputs (QuanForge Sec. 4.3.1).

Ori: random correctly classified inputs per class; HConf / LConf: the most / least confident of
them (class probability of the true class); Small: half of Ori; Skewed: 10:1 (or 10:1:1) classes.
"""

from __future__ import annotations

import numpy as np

from qmltest import readout
from qmltest.artifact import Model
from qmltest.errors import InputError
from qmltest.evaluate import label_indices

KINDS = ("ori", "hconf", "lconf", "small", "skewed")


def build(model: Model, x: np.ndarray, labels: np.ndarray, kind: str, per_class: int, seed: int) -> np.ndarray:
    """Indices into x of the suite (sorted), chosen among inputs the model classifies correctly."""
    if kind not in KINDS:
        raise InputError(f"unknown suite kind '{kind}' (choose from {', '.join(KINDS)})")
    y = label_indices(model, labels)
    cprobs = readout.class_probabilities(model.probabilities(x), model.readout_map, model.num_classes)
    correct = np.argmax(cprobs, axis=1) == y
    confidence = cprobs[np.arange(len(y)), y]
    rng = np.random.default_rng(seed)
    chosen = []
    for c in range(model.num_classes):
        pool = np.flatnonzero(correct & (y == c))
        want = per_class
        if kind == "small":
            want = per_class // 2
        elif kind == "skewed" and c > 0:
            want = max(1, per_class // 10)
        if len(pool) < want:
            raise InputError(f"only {len(pool)} correctly classified inputs of class {model.classes[c]}, {want} needed")
        if kind == "hconf":
            pick = pool[np.argsort(-confidence[pool], kind="stable")[:want]]
        elif kind == "lconf":
            pick = pool[np.argsort(confidence[pool], kind="stable")[:want]]
        else:
            pick = rng.choice(pool, size=want, replace=False)
        chosen.append(pick)
    return np.sort(np.concatenate(chosen))


def confidence(model: Model, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Class probability of each input's true class (exact)."""
    y = label_indices(model, labels)
    cprobs = readout.class_probabilities(model.probabilities(x), model.readout_map, model.num_classes)
    return cprobs[np.arange(len(y)), y]
