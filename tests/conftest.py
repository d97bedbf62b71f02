"""Shared fixtures: small models built from the zoo's architectures with random weights (no training)."""

from __future__ import annotations

import numpy as np
import pytest

from qmltest.model import artifact, readout
from qmltest.zoo import architectures as archs
from qmltest.zoo.train import _to_model


def random_model(arch: str, classes: list[int], seed: int = 0):
    """A zoo architecture with seeded random weights, exported to QASM3 and loaded back."""
    built = archs.get(arch).build(len(classes))
    rng = np.random.default_rng(seed)
    bound = built.circuit().assign_parameters(dict(zip(built.weights, rng.uniform(-np.pi, np.pi, len(built.weights)))))
    mapping = readout.table(built.readout, len(built.measured), len(classes))
    steps = [] if built.encoding == "angle" else [{"op": "resize", "from": [16, 16], "to": [16, 16]}]
    return _to_model(arch, built, bound, steps, mapping, classes, "synthetic")


@pytest.fixture(scope="session")
def zzfm_model():
    return random_model("zzfm_su2", [0, 1, 2])


@pytest.fixture(scope="session")
def qcl_model():
    return random_model("qcl", [0, 1])


@pytest.fixture(scope="session")
def iris_model(tmp_path_factory):
    """zfm_ra on iris with random weights, its preprocessing fitted like a trained model's."""
    from qmltest.data import datasets
    from qmltest.zoo.train import fit_preprocessing

    model = random_model("zfm_ra", [0, 1, 2])
    x, _ = datasets.select("iris", "train")
    steps = fit_preprocessing("zfm_ra", "iris", x, 4, False)
    model = model.__class__(model.qasm_text, model.ir, dict(model.manifest, preprocessing=steps), model.source)
    folder = tmp_path_factory.mktemp("m") / "zfm-iris"
    artifact.save(model, folder)
    return folder
