"""QCov Table 3 direction on the shipped MNIST 0/1 models: 50- vs 100-per-class test suites.

Profiles each model on 100 training inputs per class (QCov Sec. 4.1), then prints KSC, SCC and TSC
(k=100, top-1, min/max bounds, exact probabilities) and the input diversity (JS divergence vs
Haar-random states, Sec. 4.2) for suites of 50 and 100 test inputs per class.
Usage: python benchmarks/qcov_suites.py [MODEL ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from qmltest.coverage import measure
from qmltest.coverage.diversity import diversity, input_states
from qmltest.coverage.profile import build
from qmltest.data import datasets
from qmltest.model import artifact
from qmltest.simulate.runner import model_probabilities

DEFAULT = sorted(str(p.parent) for p in Path("data/models").glob("*-mnist01/model.json"))


def main(paths: list[str]) -> None:
    print(f"{'model':<22} {'suite':>8} {'KSC %':>7} {'SCC %':>7} {'TSC %':>7} {'JS':>7}")
    for path in paths:
        model = artifact.load(path)
        x_train, _ = datasets.select("mnist", "train", model.classes, 100, seed=0)
        prof = build(model_probabilities(model, x_train, register="all"), model.sha256)
        for per_class in (50, 100):
            x, _ = datasets.select("mnist", "test", model.classes, per_class, seed=1)
            probs = model_probabilities(model, x, register="all")
            totals = measure.cover([("suite", probs)], prof, per_input=False)["totals"]
            js = diversity(input_states(model, x))["js_divergence"]
            print(
                f"{Path(path).name:<22} {per_class:>5}/cl {100 * totals['ksc']:7.2f} {100 * totals['scc']:7.2f} "
                f"{100 * totals['tsc']:7.2f} {js:7.4f}"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
