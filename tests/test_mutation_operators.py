"""QuanForge operators: every operator on every zoo architecture gives a valid, different circuit that
changes only what it claims; seeded choices repeat."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_model

from qmltest.mutation.operators import edit
from qmltest.mutation.operators import quanforge as ops
from qmltest.mutation.operators.scope import Scope, make_scope
from qmltest.simulate import program
from qmltest.simulate.runner import model_probabilities
from qmltest.zoo.architectures import ARCHS

MODELS = {arch: random_model(arch, [0, 1]) for arch in sorted(ARCHS)}


def _signature(ir) -> list[tuple]:
    return [(g.name, g.qubits, tuple(p.value for p in g.params)) for g in ir.gates]


@pytest.mark.parametrize("arch", sorted(ARCHS))
@pytest.mark.parametrize("name", list(ops.REGISTRY))
def test_operator_yields_valid_different_circuit(arch: str, name: str) -> None:
    model = MODELS[arch]
    op = ops.get(name)
    result = op.mutate(model.ir, Scope(), 0.1, np.random.default_rng(3))
    assert result is not None, f"{name} found no site in {arch}"
    new_ir, notes = result
    assert notes
    assert _signature(new_ir) != _signature(model.ir)
    mutant = model.with_ir(new_ir)  # exports to QASM3 and keeps the manifest consistent
    assert mutant.manifest["layers"][-1]["stop"] == len(new_ir.gates)
    width = 256 if model.amplitude else len(model.ir.inputs)
    probs = model_probabilities(mutant, np.random.default_rng(0).uniform(0, 1, (3, width)))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-9)
    again = op.mutate(model.ir, Scope(), 0.1, np.random.default_rng(3))
    assert _signature(again[0]) == _signature(new_ir)


def test_psf_flips_exactly_the_chosen_signs() -> None:
    ir = MODELS["qcl"].ir
    new_ir, notes = ops.PSF().mutate(ir, Scope(), 0.05, np.random.default_rng(1))
    before, after = _signature(ir), _signature(new_ir)
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(changed) == len(notes) == ops.PSF().count(len(ops.PSF().sites(ir, Scope())), 0.05)
    for i in changed:
        assert before[i][:2] == after[i][:2]
        assert after[i][2] == tuple(-v for v in before[i][2])


def test_gpm_keeps_qubits_and_multiset_of_gates() -> None:
    ir = MODELS["hcqc_so4"].ir
    new_ir, _ = ops.GPM().mutate(ir, Scope(), 0.02, np.random.default_rng(2))
    assert sorted(map(repr, _signature(ir))) == sorted(map(repr, _signature(new_ir)))
    assert _signature(ir) != _signature(new_ir)


def test_pf_changes_only_weights_by_the_drawn_noise() -> None:
    ir = MODELS["zzfm_su2"].ir
    new_ir, notes = ops.PF().mutate(ir, Scope(), 0.1, np.random.default_rng(5))
    for a, b in zip(ir.gates, new_ir.gates):
        assert a.name == b.name and a.qubits == b.qubits
        for pa, pb in zip(a.params, b.params):
            assert pa.kind == pb.kind
            if pa.kind == "data":
                assert pa.value == pb.value
    assert sum(a.params != b.params for a, b in zip(ir.gates, new_ir.gates)) == len(notes)


def test_gr_keeps_size_and_parameters() -> None:
    ir = MODELS["drnn"].ir
    new_ir, _ = ops.GR().mutate(ir, Scope(), 0.05, np.random.default_rng(4))
    for a, b in zip(ir.gates, new_ir.gates):
        assert len(a.qubits) == len(b.qubits) and a.qubits == b.qubits
        assert [p.value for p in a.params] == [p.value for p in b.params]


def test_rga_adds_count_gates_rgd_removes() -> None:
    ir = MODELS["qcl"].ir
    n = len(ir.gates)
    added, notes = ops.RGA().mutate(ir, Scope(), 0.02, np.random.default_rng(0))
    assert len(added.gates) == n + len(notes)
    removed, notes = ops.RGD().mutate(ir, Scope(), 0.02, np.random.default_rng(0))
    assert len(removed.gates) == n - len(notes) == n - ops.RGD().count(n, 0.02)


def test_scope_limits_qubits_depth_and_types() -> None:
    ir = MODELS["qcl"].ir
    scope = make_scope(8, "0-1", "0-50%", "rotation")
    rows = edit.flatten(ir)
    sites = ops.PF().sites(ir, scope)
    fractions = scope.depth_fractions(rows)
    assert sites
    for i in sites:
        g = rows[i].gate
        assert set(g.qubits) <= {0, 1} and g.name in ("rx", "rz") and fractions[i] < 0.5
    new_ir, _ = ops.PSF().mutate(ir, scope, 0.5, np.random.default_rng(0))
    for i, (a, b) in enumerate(zip(ir.gates, new_ir.gates)):
        if a != b:
            assert i in sites


@pytest.mark.parametrize("gate_type", ["phase", "swap", "controlled", "pauli"])
def test_rga_under_a_gate_type_adds_that_type_and_simulates_as_aer(gate_type: str) -> None:
    """QuanForge Table 6: with a gate-type scope RGA adds gates of that type (phase and SWAP gates
    too, outside the default pool); the engine runs every such mutant as Aer does (1e-9)."""
    from qmltest.mutation.operators.categories import categories_of
    from qmltest.simulate import engine

    model = random_model("zzfm_su2", [0, 1])
    scope = Scope(gate_types=(gate_type,))
    op = ops.RGA()
    pool = op.addable(scope)
    assert pool and all(gate_type in categories_of(n) for n in pool)
    rng = np.random.default_rng(3)
    enc = rng.uniform(0, np.pi, (3, len(model.ir.inputs)))
    for name in pool:
        one = ops.RGA(pool=(name,))
        ir, notes = one.apply(model.ir, scope, [2, 7], np.random.default_rng(1))
        assert all(note.startswith(f"add {name}[") for note in notes)
        mutant = model.with_ir(export=False, new_ir=ir)
        fast = engine.probabilities(program.of_model(mutant), enc)
        np.testing.assert_allclose(fast, engine.probabilities(program.of_model(mutant), enc, "aer"), rtol=0, atol=1e-9)
    assert "swap" not in ops.RGA().addable(Scope()) and "p" not in ops.RGA().addable(Scope())
