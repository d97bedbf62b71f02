"""Issue 59: what the readout reads. Past BUCKET_OUTCOMES outcomes a model is simulated for the
marginal its class scores depend on (x % 2 over every measured qubit reads qubit 0); class
probabilities equal the full readout's, and a mutation run's verdicts equal the full path's."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit.circuit.library import real_amplitudes, z_feature_map

from qmltest import api
from qmltest.interop import from_circuit
from qmltest.model import artifact, readout
from qmltest.simulate import engine, program
from qmltest.simulate.backends import REGISTRY
from qmltest.simulate.compiled import Compiled


def _vqc(n: int, tmp_path, inputs: int = 24):
    fm, ansatz = z_feature_map(n), real_amplitudes(n, reps=1)
    weights = np.random.default_rng(0).uniform(-1, 1, ansatz.num_parameters)
    model = from_circuit(fm.compose(ansatz), weights, list(fm.parameters), readout="modulo", classes=[0, 1])
    x = np.random.default_rng(1).uniform(0, np.pi, (inputs, n))
    y = model.predict(engine.probabilities(program.of_model(model), model.encode(x)))
    model.save(tmp_path / "m")
    np.savez(tmp_path / "t.npz", x=x, y=y)
    return model, x


@pytest.mark.parametrize(
    "kind, classes, needed",
    [("modulo", 2, [0]), ("modulo", 4, [0, 1]), ("modulo", 3, list(range(6))), ("parity", 2, list(range(6)))],
)
def test_the_bits_a_readout_reads(kind, classes, needed) -> None:
    matrix = readout.class_matrix(readout.table(kind, 6, classes), classes)
    assert readout.needed_bits(matrix) == needed
    probs = np.random.default_rng(2).dirichlet(np.ones(64), size=5)
    marginal = np.zeros((5, 1 << len(needed)))
    for s in range(64):
        marginal[:, sum(((s >> b) & 1) << i for i, b in enumerate(needed))] += probs[:, s]
    np.testing.assert_allclose(marginal @ readout.on_bits(matrix, needed), probs @ matrix, atol=1e-15)


def test_the_class_view_gives_the_full_readouts_class_probabilities(tmp_path) -> None:
    model, x = _vqc(11, tmp_path)
    job, matrix = program.class_view(model)
    assert job.measured == (0,) and matrix.shape == (2, 2) and len(program.of_model(model).measured) == 11
    full = engine.probabilities(program.of_model(model), model.encode(x))
    mine = engine.probabilities(job, model.encode(x))
    np.testing.assert_allclose(mine @ matrix, full @ model.readout_matrix, atol=1e-12)
    aer = engine.probabilities(job, model.encode(x), "aer")  # Aer, the reference, agrees to 1e-9
    np.testing.assert_allclose(aer, mine, atol=1e-9)


def test_verdicts_equal_the_full_readouts_on_a_wide_model(tmp_path) -> None:
    """A 12-qubit model measured on every qubit: the marginal run gives every mutant the full
    path's verdict, but one kind: a mutant that changes only what the readout never reads (its
    class probabilities the original's on every input, to 1e-10) is equivalent on the marginal,
    where the full path, seeing other outcomes move, calls it survived though no test can kill it."""
    model, x = _vqc(12, tmp_path, inputs=30)
    runs = {}
    try:
        for flag in (True, False):
            Compiled.marginals = flag
            r = api.mutate(
                str(tmp_path / "m"),
                [str(tmp_path / "t.npz")],
                suite="qml",
                sample=40,
                null_copies=20,
                out=tmp_path / f"r{flag}",
            )
            runs[flag] = {m["id"]: m["status"] for m in r.data["mutants"]}
    finally:
        Compiled.marginals = True
    assert runs[True].keys() == runs[False].keys() and len(runs[True]) == 40
    differ = {k for k in runs[True] if runs[True][k] != runs[False][k]}
    assert all(runs[True][k] == "equivalent" and runs[False][k] == "survived" for k in differ)
    assert {"killed", "survived"} <= set(runs[True].values())
    base = model.readout_matrix
    full = engine.probabilities(program.of_model(model), model.encode(x)) @ base
    for k in differ:  # the readout never sees the change
        mutant = artifact.load(tmp_path / "rFalse" / "mutants" / k)
        got = engine.probabilities(program.of_model(mutant), mutant.encode(x)) @ mutant.readout_matrix
        assert np.abs(got - full).max() < 1e-10


def test_auto_weighs_what_a_mutation_run_costs() -> None:
    """The measured per-(mutant, input) tables (2 cores): numpy, resuming mutants from the original's
    checkpoints, at 12 and 16 qubits; Aer's multi-threaded run at 20."""

    class Job:
        def __init__(self, n: int, ops: int) -> None:
            self.num_qubits, self.measured, self.ops = n, (0,), [None] * ops

    assert REGISTRY.for_mutants("auto", Job(12, 106), 100).name == "numpy"
    assert REGISTRY.for_mutants("auto", Job(16, 142), 100).name == "numpy"
    assert REGISTRY.for_mutants("auto", Job(20, 178), 100).name == "aer"
    assert REGISTRY.for_mutants("numpy", Job(20, 178), 100).name == "numpy"
