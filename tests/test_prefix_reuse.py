"""Prefix reuse: a mutant resumed from the original's batch state at the last layer boundary before its
first changed gate gives the same bits as simulating it from the start (and Aer's numbers to 1e-9);
finished with the original's fused dense suffix, it agrees with the plain run to 1e-9."""

from __future__ import annotations

import numpy as np
import pytest

from qmltest.data import datasets
from qmltest.data.labelled import Data
from qmltest.model import artifact
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.operators import quanforge as qops
from qmltest.mutation.operators import registry, sites
from qmltest.mutation.operators.scope import Scope
from qmltest.simulate import engine, program
from qmltest.simulate.runner import model_probabilities


def _mutants(model: artifact.Model) -> list[artifact.Model]:
    made, _ = sites.generate(model, registry.operators("qml", ["APC", "ALD", "APGC", "ALA", "LS"]), "directed")
    mutants = [g.model for g in made if g.model is not None][:60]
    rng = np.random.default_rng(3)
    for op in ("PF", "RGD", "GR", "RGA", "GSM"):
        result = qops.get(op).mutate(model.ir, Scope(), 0.1, rng)
        if result is not None:
            mutants.append(model.with_ir(result[0], export=False))
    return mutants


def _data(name: str, dataset: str) -> tuple[artifact.Model, Data]:
    model = artifact.load(f"data/models/{name}")
    x, y = datasets.select(f"{dataset}:test", "test", model.classes, 10, 0)
    return model, Data.of("t", model, x, y)


@pytest.mark.parametrize("name, dataset", [("qcl-mnist01", "mnist"), ("zfm-ra-iris", "iris")])
def test_prefix_reuse_is_bit_identical(name, dataset) -> None:
    model, data = _data(name, dataset)
    mutants = _mutants(model)
    evaluator = Evaluator(model, 20, 1000, 0)
    evaluator.sim.fuse = False
    resumed = 0
    for mutant in mutants:
        fast = evaluator.sim._resumed(mutant, data)
        plain = engine.probabilities(program.of_model(mutant), data.encoded)
        if fast is not None:
            resumed += 1
            assert np.array_equal(fast, plain)  # bit-identical, not merely close
        assert np.array_equal(evaluator.probs(mutant, data), plain)
    assert resumed >= len(mutants) // 3  # the reuse really happens


@pytest.mark.parametrize(
    "name, dataset, dense",
    [("qcl-mnist01", "mnist", True), ("drnn-mnist01", "mnist", False), ("zzfm-su2-iris", "iris", True)],
)
def test_fused_suffix_agrees_with_the_plain_run(name, dataset, dense) -> None:
    """Amplitude (the whole circuit fused) and angle models; added, removed, replaced and swapped
    gates and layers. DRNN re-uploads features until its last 24 ops: too few for a dense suffix
    to pay (`dense_pays`), so its mutants resume from the nearest cached state only."""
    from qmltest.simulate import resume

    model, data = _data(name, dataset)
    check = resume.Checkpoints(program.of_model(model), data.encoded)
    assert bool(check.tails) == dense
    fused = 0
    for mutant in _mutants(model):
        if mutant.manifest["preprocessing"] != model.manifest["preprocessing"]:
            continue
        fast = check.probabilities(program.of_model(mutant))
        plain = engine.probabilities(program.of_model(mutant), data.encoded)
        assert fast is not None
        np.testing.assert_allclose(fast, plain, rtol=0, atol=1e-9)
        fused += not np.array_equal(fast, plain)  # rounding differs only where the dense tail ran
    if dense:
        assert fused > 0


def test_layer_boundaries_keep_the_engine_equal_to_aer() -> None:
    model = artifact.load("data/models/zfm-ra-iris")
    assert program.of_model(model).boundaries  # two layers: one boundary where fusion stops
    x, _ = datasets.select("iris:test", "test", model.classes, 3, 0)
    np.testing.assert_allclose(model_probabilities(model, x), model_probabilities(model, x, backend="aer"), atol=1e-9)


def test_prefix_reuse_stays_bit_identical_with_gate_blocks(tmp_path) -> None:
    """Past 12 qubits the numpy backend fuses gates into blocks (`simulate.fusion`); blocks never
    cross a layer boundary, so a mutant resumed there still gives the bits of a run from the start,
    and both equal Aer to 1e-9 (13 qubits, read out on all of them)."""
    from qiskit.circuit.library import real_amplitudes, z_feature_map

    from qmltest.interop import from_circuit
    from qmltest.simulate import fusion

    n = fusion.BLOCK_FROM_QUBITS + 1
    fm, an = z_feature_map(n), real_amplitudes(n, reps=2)
    w = np.random.default_rng(0).uniform(-1, 1, an.num_parameters)
    from_circuit(fm.compose(an), w, list(fm.parameters), readout="parity", classes=[0, 1]).save(tmp_path / "m")
    model = artifact.load(tmp_path / "m")
    assert program.of_model(model).boundaries
    x = np.random.default_rng(1).uniform(0, np.pi, (4, n))
    data = Data("t", model.encode(x), np.array([0, 1, 0, 1]), x)
    made, _ = sites.generate(model, registry.operators("qml", ["ALD", "LS", "ILS", "APC"]), "directed")
    mutants = [g.model for g in made if g.model is not None][:8]
    evaluator = Evaluator(model, 20, 1000, 0, backend="numpy")
    evaluator.sim.fuse = False
    resumed = 0
    for mutant in mutants:
        plain = engine.probabilities(program.of_model(mutant), data.encoded, "numpy")
        fast = evaluator.sim._resumed(mutant, data)
        if fast is not None:
            resumed += 1
            assert np.array_equal(fast, plain)
    assert resumed >= len(mutants) // 2  # the reuse really happens
    for mutant in mutants[:2]:
        np.testing.assert_allclose(
            engine.probabilities(program.of_model(mutant), data.encoded, "numpy"),
            engine.probabilities(program.of_model(mutant), data.encoded, "aer"),
            rtol=0,
            atol=1e-9,
        )
