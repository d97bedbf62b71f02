"""Prefix reuse: a mutant resumed from the original's batch state at the last layer boundary before its
first changed gate gives the same bits as simulating it from the start (and Aer's numbers to 1e-9)."""

from __future__ import annotations

import numpy as np
import pytest

from qmltest import artifact
from qmltest.data import datasets
from qmltest.evaluate import label_indices
from qmltest.mutation import operators as qops
from qmltest.mutation import sites
from qmltest.mutation.evaluate import Data, Evaluator
from qmltest.mutation.scope import Scope
from qmltest.simulate import engine


@pytest.mark.parametrize("name, dataset", [("qcl-mnist01", "mnist"), ("zfm-ra-iris", "iris")])
def test_prefix_reuse_is_bit_identical(name, dataset) -> None:
    model = artifact.load(f"data/models/{name}")
    x, y = datasets.select(f"{dataset}:test", "test", model.classes, 10, 0)
    data = Data("t", model.encode(x), label_indices(model, y), x)
    made, _ = sites.generate(model, sites.operators("qml", ["APC", "ALD", "APGC"]), "directed")
    mutants = [g.model for g in made if g.model is not None][:40]
    rng = np.random.default_rng(3)
    for op in ("PF", "RGD", "GR"):
        result = qops.get(op).mutate(model.ir, Scope(), 0.1, rng)
        if result is not None:
            mutants.append(model.with_ir(result[0], export=False))
    evaluator = Evaluator(model, 20, 1000, 0)
    resumed = 0
    for mutant in mutants:
        fast = evaluator._from_prefix(mutant, data)
        plain = engine.probabilities(mutant.job(), data.encoded)
        if fast is not None:
            resumed += 1
            assert np.array_equal(fast, plain)  # bit-identical, not merely close
        assert np.array_equal(evaluator.probs(mutant, data), plain)
    assert resumed >= len(mutants) // 3  # the reuse really happens


def test_layer_boundaries_keep_the_engine_equal_to_aer() -> None:
    model = artifact.load("data/models/zfm-ra-iris")
    assert model.job().boundaries  # two layers: one boundary where fusion stops
    x, _ = datasets.select("iris:test", "test", model.classes, 3, 0)
    np.testing.assert_allclose(model.probabilities(x), model.probabilities(x, backend="aer"), atol=1e-9)
