"""Mutant deltas (what goes to a Dask worker): exact round trips that keep the original's objects."""

from __future__ import annotations

import pickle

import pytest

from qmltest.model import artifact
from qmltest.mutation.operators import delta, registry, sites
from qmltest.simulate import program


@pytest.mark.parametrize("name", ["qcl-mnist01", "zzfm-su2-iris", "hqnn-mnist01"])
def test_delta_round_trip_is_exact_and_shares_the_originals_gates(name) -> None:
    original = artifact.load(f"data/models/{name}")
    # the worker's original is an unpickled copy: indices, not objects, must carry the sharing
    remote = pickle.loads(pickle.dumps(original))
    made = [
        g
        for suite in ("qml", "classic")
        for g in sites.generate(original, registry.operators(suite, None), "directed")[0]
    ]
    mutants = [g.model for g in made if g.model is not None]
    assert len(mutants) > 100
    for m in mutants:
        back = delta.apply(remote, pickle.loads(pickle.dumps(delta.delta_of(original, m))))
        assert back.ir == m.ir
        assert back.manifest == m.manifest and list(back.manifest) == list(m.manifest)
        assert (back.qasm_text, back.source, back.inferred) == (m.qasm_text, m.source, m.inferred)
        mine = {id(g): i for i, g in enumerate(original.ir.gates)}
        for g, b in zip(m.ir.gates, back.ir.gates):
            i = mine.get(id(g))
            if i is not None and original.ir.gates[i] is g:
                assert b is remote.ir.gates[i]  # an unchanged gate is the worker's original object


def test_delta_ships_neither_unchanged_gates_nor_the_manifest() -> None:
    """HQNN's manifest pickles to 70 kB (its PCA step); an angle edit's delta is its new gate."""
    original = artifact.load("data/models/hqnn-mnist01")
    assert len(pickle.dumps(original.manifest)) > 50_000
    made, _ = sites.generate(original, [op for op in registry.operators("qml", None) if op.name == "APGC"], "directed")
    sizes = [len(pickle.dumps(delta.delta_of(original, g.model))) for g in made if g.model is not None]
    assert len(sizes) == len(made) and max(sizes) < 2_000


def test_a_worker_mutant_shares_the_originals_compiled_ops() -> None:
    """The original arrives compiled-job-free (Model.__getstate__), so its ops and a delta mutant's
    come from one per-gate cache: unchanged gates give the same op objects (identity matching in
    the engine's prefix/suffix reuse), changed ones do not."""
    original = artifact.load("data/models/qcl-mnist01")
    program.of_model(original)  # compiled in the client before it is scattered, as in a run
    made, _ = sites.generate(original, [op for op in registry.operators("qml", None) if op.name == "APGC"], "directed")
    remote = pickle.loads(pickle.dumps(original))
    for g in made[:20]:
        mutant = delta.apply(remote, pickle.loads(pickle.dumps(delta.delta_of(original, g.model))))
        same = [a is b for a, b in zip(program.of_model(remote).ops, program.of_model(mutant).ops)]
        kept = [a is b for a, b in zip(original.ir.gates, g.model.ir.gates)]
        assert same[: len(kept)] == kept and kept.count(False) == 1


def test_deltas_against_alternating_originals_round_trip() -> None:
    """`delta_of` keeps the last original's gate index: asking about another original rebuilds it.
    QCL and ZZFM share no objects, so an index left over from the other model would ship every
    gate of the mutant (or, with reused ids, the wrong ones)."""
    models = [artifact.load(f"data/models/{name}") for name in ("qcl-mnist01", "zzfm-su2-iris")]
    apgc = [op for op in registry.operators("qml", None) if op.name == "APGC"]
    mutants = [[g.model for g in sites.generate(m, apgc, "directed")[0][:3]] for m in models]
    for k in range(3):
        for original, made in zip(models, mutants):
            d = delta.delta_of(original, made[k])
            assert sum(isinstance(x, int) for x in d.layers) == len(original.ir.layers) - 1  # one layer changed
            assert delta.apply(original, d).ir == made[k].ir
