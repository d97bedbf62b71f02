"""QML and classic operators on a small hand-written circuit (expected gate lists), the redundancy
filter (it never drops a mutant whose unitary differs from all kept ones), and hand counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from qiskit import qasm3
from qiskit.circuit import Parameter, QuantumCircuit
from qiskit.quantum_info import Operator

from qmltest.model import artifact
from qmltest.model import ir as irmod
from qmltest.mutation.operators import registry, sites
from qmltest.mutation.operators.classic import AddGate, RemoveGate, ReplaceGate
from qmltest.mutation.operators.qml import ALA, ALD, APC, APGC, DFC, ILS, LS, QML, Site, units
from qmltest.simulate import program
from qmltest.simulate.runner import model_probabilities


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Feature map rx(x0), rx(x1) | unit 0: ry ry cx | unit 1: ry rz-on-q0 cx ; measure q0."""
    x0, x1 = Parameter("x_000"), Parameter("x_001")
    qc = QuantumCircuit(2, 1)
    qc.rx(x0, 0)
    qc.rx(x1, 1)
    qc.barrier()
    qc.ry(0.1, 0)
    qc.ry(0.2, 1)
    qc.cx(0, 1)
    qc.ry(0.3, 0)
    qc.rz(0.5, 0)
    qc.cx(1, 0)
    qc.barrier()
    qc.measure(0, 0)
    path = tmp_path_factory.mktemp("m") / "small.qasm"
    path.write_text(qasm3.dumps(qc))
    return artifact.load(path)


def gates(model) -> list[tuple]:
    return [
        (g.name, g.qubits, tuple(round(p.value, 6) if p.kind != "data" else p.value for p in g.params))
        for g in model.ir.gates
    ]


FM = [("rx", (0,), ("x_000",)), ("rx", (1,), ("x_001",))]
U0 = [("ry", (0,), (0.1,)), ("ry", (1,), (0.2,)), ("cx", (0, 1), ())]
U1 = [("ry", (0,), (0.3,)), ("rz", (0,), (0.5,)), ("cx", (1, 0), ())]


def test_units_found(small) -> None:
    assert gates(small) == FM + U0 + U1
    us = units(small.ir)
    assert [(u.start, u.stop, u.rotation, u.entangling) for u in us] == [(2, 5, (2, 3), (4,)), (5, 8, (5, 6), (7,))]


@pytest.mark.parametrize(
    "op, site, expected",
    [
        (APC(), ("APC", (0, "flip", 0.0)), FM + [("ry", (0,), (-0.1,)), ("ry", (1,), (-0.2,)), U0[2]] + U1),
        (
            APC(),
            ("APC", (1, "add", round(np.pi / 2, 12))),
            FM + U0 + [("ry", (0,), (round(0.3 + np.pi / 2, 6),)), ("rz", (0,), (round(0.5 + np.pi / 2, 6),)), U1[2]],
        ),
        (APC(), ("APC", (0, "zero", 0.0)), FM + [("ry", (0,), (0.0,)), ("ry", (1,), (0.0,)), U0[2]] + U1),
        (APGC(), ("APGC", (2, "rz")), FM + [("rz", (0,), (0.1,))] + U0[1:] + U1),
        (LS(), ("LS", ("swap", 0, 1)), FM + U1 + U0),
        (ILS(), ("ILS", (0, "entangle_first")), FM + [U0[2], U0[0], U0[1]] + U1),
        (ILS(), ("ILS", (1, 0, 1)), FM + U0 + [U1[1], U1[0], U1[2]]),
        (ALA(), ("ALA", (0, 1, "copy")), FM + U0 + U1 + U0),
        (ALD(), ("ALD", (0, "rotations")), FM + [U0[2]] + U1),
        (ALD(), ("ALD", (1, "all")), FM + U0),
        (RemoveGate(), ("remove-gate", (4,)), FM + U0[:2] + U1),
        (ReplaceGate(), ("replace-gate", (4, "cz")), FM + U0[:2] + [("cz", (0, 1), ())] + U1),
        (AddGate(), ("add-gate", ("h", (1,), 5)), FM + U0 + [("h", (1,), ())] + U1),
    ],
)
def test_operator_example(small, op, site, expected, tmp_path) -> None:
    site = Site(*site)
    assert site in op.sites(small, directed=True) or site in op.sites(small, directed=False)
    mutant = op.apply(small, site)
    assert gates(mutant) == expected
    folder = mutant.save(tmp_path / "mutant")  # the QASM3 round trip: written, parsed again, same gates
    assert gates(artifact.load(folder)) == expected


def test_dfc_adds_a_preprocessing_step_and_changes_outputs(small) -> None:
    site = Site("DFC", ("pair", 0, 1, "sign", "one_minus", np.pi / 2))
    mutant = DFC().apply(small, site)
    assert mutant.ir is small.ir
    assert mutant.manifest["preprocessing"][-1] == {
        "op": "feature_change",
        "indices": [0, 1],
        "ops": ["sign", "one_minus"],
        "value": np.pi / 2,
    }
    x = np.array([[0.3, 0.7]])
    np.testing.assert_allclose(
        model_probabilities(mutant, x), model_probabilities(small, np.array([[-0.3, 0.3]])), atol=1e-12
    )


def _unitary(model) -> np.ndarray:
    circ = irmod.unitary_part(model.ir)
    values = {p: 0.37 * (i + 1) for i, p in enumerate(model.ir.inputs)}
    return Operator(circ.assign_parameters(values, strict=False)).data


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    phase = np.vdot(b.ravel(), a.ravel())
    return abs(abs(phase) - a.shape[0]) < 1e-9


def test_redundancy_filter_keeps_every_distinct_unitary(small) -> None:
    ops = [AddGate(), APC(), LS(), ILS(), ALA(), ALD(), APGC(), RemoveGate(), ReplaceGate()]
    directed, skipped = sites.generate(small, ops, "directed")
    kept = [_unitary(g.model) for g in directed] + [_unitary(small)]
    # every mutant the directed sites could build, before deduplication, is among the kept unitaries
    for op in ops:
        for site in op.sites(small, directed=True):
            u = _unitary(op.apply(small, site))
            assert any(_same(u, k) for k in kept), site
    # and every exhaustive insertion position is covered by a directed (slot) insertion
    for site in AddGate().sites(small, directed=False):
        u = _unitary(AddGate().apply(small, site))
        assert any(_same(u, k) for k in kept), site
    assert skipped["add-gate"]["commuting_insertions"] > 0
    assert len(directed) < sum(len(op.sites(small, directed=False)) for op in ops)


def test_classic_exhaustive_counts_match_hand_count(tmp_path) -> None:
    """4-qubit ZFM+RA: z_feature_map (8 h, 8 p) + real_amplitudes reps=3 (16 ry, 9 cx) = 41 gates."""
    model = artifact.load("data/models/zfm-ra-iris")
    counts = sites.count(
        model, registry.operators("classic", ["add-gate", "remove-gate", "replace-gate"]), "exhaustive"
    )
    # remove: one per gate; replace (same arity and parameter count from x y z h rx ry rz cx cz swap):
    # h -> x, y, z (3); p -> rx, ry, rz (3); ry -> rx, rz (2); cx -> cz, swap (2)
    # add: 42 positions x (7 one-qubit gates x 4 qubits + 3 two-qubit gates x 12 ordered pairs)
    assert counts == {
        "add-gate": 42 * (7 * 4 + 3 * 12),
        "remove-gate": 41,
        "replace-gate": 8 * 3 + 8 * 3 + 16 * 2 + 9 * 2,
    }


def test_directed_qml_at_least_5x_fewer_than_exhaustive_add_gate() -> None:
    model = artifact.load("data/models/zzfm-su2-iris")
    qml = sum(sites.count(model, registry.operators("qml", None), "directed").values())
    add = sites.count(model, registry.operators("classic", ["add-gate"]), "exhaustive")["add-gate"]
    assert add >= 5 * qml


def test_incompetent_and_equivalent_are_not_scored(small) -> None:
    from qmltest.data.labelled import Data
    from qmltest.mutation import pipeline

    x = np.random.default_rng(0).uniform(0, np.pi, (12, 2))
    y = small.predict(model_probabilities(small, x))
    opts = pipeline.Options(suite="qml", operators=("APC", "ALD"), shots=None)
    res, _ = pipeline.run(small, [Data("d", small.encode(x), y, x)], opts)
    scored = [m for m in res["mutants"] if m["status"] in ("killed", "survived")]
    assert res["suites"]["d"]["scored_mutants"] == len(scored)
    assert sum(sum(c.values()) for c in res["operators"].values()) == len(res["mutants"])
    assert all(not m["verdicts"] for m in res["mutants"] if m["status"] == "equivalent")
    assert res["suites"]["d"]["correctly_classified"] == 12


def test_mid_circuit_measurement_is_dephasing_on_both_backends() -> None:
    from qmltest.simulate import engine

    qc = QuantumCircuit(2, 1)
    qc.h(0)
    qc.measure(0, 0)  # outcome unused, qubit used later: complete dephasing
    qc.h(0)
    qc.cx(0, 1)
    job = program.Circuit(qc, (0, 1), ())
    for backend in ("numpy", "aer"):
        np.testing.assert_allclose(engine.probabilities(job, np.zeros((1, 0)), backend), [[0.5, 0, 0, 0.5]], atol=1e-12)


def test_measure_operators(small, tmp_path) -> None:
    from qmltest.mutation.operators.classic import AddMeasure, RemoveMeasure

    found = AddMeasure().sites(small, directed=True)
    # q0 is touched by rx, ry, cx, ry, rz, cx (6 gates): 5 slots; q1 by rx, ry, cx, cx: 3 slots
    assert len(found) == 8
    mutant = AddMeasure().apply(small, found[0])
    assert [g.name for g in mutant.ir.gates].count("measure") == 1
    artifact.save(mutant.exported(), tmp_path / "m")
    again = artifact.load(tmp_path / "m")  # a mid-circuit measurement survives the QASM3 round trip
    assert [g.name for g in again.ir.gates] == [g.name for g in mutant.ir.gates]
    x = np.random.default_rng(1).uniform(0, np.pi, (3, 2))
    np.testing.assert_allclose(model_probabilities(again, x), model_probabilities(mutant, x), atol=1e-12)
    (mid,) = [site for site in RemoveMeasure().sites(mutant, True) if site.args[0] == "mid"]
    removed = RemoveMeasure().apply(mutant, mid)
    assert gates(removed) == gates(small)


def test_remove_readout_measure_keeps_states_with_bit_zero() -> None:
    from qmltest.mutation.operators.classic import RemoveMeasure

    model = artifact.load("data/models/zfm-ra-iris")  # readout: all 4 qubits, class = state % 3
    mutant = RemoveMeasure().apply(model, Site("remove-measure", ("readout", 0)))
    assert mutant.ir.measured == (1, 2, 3)
    # new state s' over qubits 1..3 is old state 2 s' (bit 0 reads 0)
    assert mutant.readout_map == [(2 * s) % 3 for s in range(8)]


def test_stryker_report_schema_and_locations(small) -> None:
    from qmltest.data.labelled import Data
    from qmltest.mutation import pipeline
    from qmltest.report import stryker

    x = np.random.default_rng(0).uniform(0, np.pi, (8, 2))
    y = small.predict(model_probabilities(small, x))
    opts = pipeline.Options(suite="classic", operators=("remove-gate",), shots=None)
    res, _ = pipeline.run(small, [Data("d", small.encode(x), y, x)], opts)
    doc = stryker.report(small, "small.qasm", res)
    assert doc["schemaVersion"] == "2" and set(doc["thresholds"]) == {"high", "low"}
    entry = doc["files"]["small.qasm"]
    assert entry["language"] == "qasm" and entry["source"] == small.qasm_text
    lines = small.qasm_text.splitlines()
    allowed = {"Killed", "Survived", "Ignored", "CompileError"}
    for m in entry["mutants"]:
        assert m["status"] in allowed
        start, end = m["location"]["start"], m["location"]["end"]
        assert 1 <= start["line"] <= end["line"] <= len(lines) and start["column"] >= 1
        row = next(r for r in res["mutants"] if r["id"] == m["id"])
        assert row["touched"] and lines[start["line"] - 1].startswith(small.ir.gates[row["touched"][0]].name)
        assert m["killedBy"] == (["d"] if m["status"] == "Killed" else [])


@pytest.mark.parametrize("name", ["qcl-mnist01", "zzfm-su2-iris"])
def test_canonical_shortcuts_equal_a_fresh_scan(name) -> None:
    """The cached canonical form (patched from the original's order via the IR's `origin` or changed
    layers, per-step reprs) equals one computed from scratch for every QML and classic mutant."""
    from qmltest.mutation.operators.canonical import canonical

    model = artifact.load(f"data/models/{name}")
    keys: dict = {}
    canonical(model, keys)
    hinted = checked = 0
    for suite in ("qml", "classic"):
        for op in registry.operators(suite, None):
            for site in op.sites(model, True)[:60]:
                try:
                    mutant = op.apply(model, site)
                except Exception:
                    continue
                hinted += mutant.ir.origin is not None
                fast, fresh = canonical(mutant, keys), canonical(mutant)
                assert fast == fresh and fast.text == fresh.text == repr(tuple(fresh))
                checked += 1
    assert checked > 200 and hinted > 20


@pytest.mark.parametrize(
    "steps",
    [
        [],
        [{"op": "scale", "a": 1.5}],
        [{"op": 'say "hi"'}, {"op": "it's"}],  # both quotes: falls back to repr
        [{"op": "back\\slash"}],
        [{"op": "tab\there"}],
        ({"op": "tuple"},),
    ],
)
def test_steps_repr_matches_repr_of_repr(steps) -> None:
    from qmltest.mutation.operators.canonical import _steps_repr

    text, quoted = _steps_repr(steps, {})
    assert text == repr(steps) and quoted == repr(repr(steps))


def test_ala_random_weights_are_the_scalar_draws(small) -> None:
    """ALA draws its random weights as one vector: the same numbers as one uniform() per weight."""
    import math

    op = ALA()
    us = units(small.ir)
    mutant = op.apply(small, Site("ALA", (0, 0, "random")))
    rng = np.random.default_rng([0, 0])
    start = us[0].stop
    copied = mutant.ir.gates[start : start + us[0].stop - us[0].start]
    got = [p.value for g in copied for p in g.params if p.kind == "weight"]
    assert got and got == [float(rng.uniform(-math.pi, math.pi)) for _ in got]


def test_replaced_blocks_equal_a_regrouping() -> None:
    """`edit.replaced` swaps gates inside their blocks; the result equals regrouping the new gate
    list from scratch, also when a replacement changes a gate's qubit count (the blocks regroup)."""
    from qmltest.mutation.operators import edit

    model = artifact.load("data/models/qcl-mnist01")
    ir = model.ir
    flat = list(ir.gates)
    rx = next(i for i, g in enumerate(flat) if g.name == "rx")
    cx = next(i for i, g in enumerate(flat) if g.name == "cx")
    keeps = {rx: edit.with_params(flat[rx], [0.25]), cx: edit.with_name(flat[cx], "cz")}
    q = flat[rx].qubits[0]
    grows = {rx: edit.gate("cx", (q, (q + 1) % ir.num_qubits), [])}
    for change in (keeps, grows):
        out = edit.replaced(ir, change)
        want = [change.get(i, g) for i, g in enumerate(flat)]
        assert list(out.gates) == want
        start = 0
        for layer in out.layers:
            stop = start + len(layer.gates)
            assert layer.blocks == irmod.blocks_of(want[start:stop])
            start = stop
    assert edit.replaced(ir, grows).layers[0].blocks != ir.layers[0].blocks


def test_root_seed_decides_the_sampled_values_and_random_weights(small) -> None:
    """APC's sampled values (exhaustive) and ALA's random weights follow the run's seed: the same
    seed gives the same mutants, another seed other draws."""
    from qmltest.mutation.operators import sites

    def ids(seed: int) -> list[str]:
        ops = [op for op in registry.operators("qml", ["APC", "ALA"], seed)]
        return [g.id for g in sites.generate(small, ops, "exhaustive")[0]]

    a, b, c = ids(1), ids(1), ids(2)
    assert a == b
    differ = sum(x != y for x, y in zip(a, c))
    assert len(a) == len(c) and differ > 0
    directed = [g.id for g in sites.generate(small, registry.operators("qml", ["APC"], 5), "directed")[0]]
    assert directed == [g.id for g in sites.generate(small, registry.operators("qml", ["APC"], 6), "directed")[0]]


def test_listing_a_wide_model_stays_small(tmp_path) -> None:
    """`mutate --list` on a 14-qubit model that measures every qubit: the canonical forms hold a
    digest of the 2^14-state readout, not its 1 MB repr each (1.5 GB before), so the process stays
    under 1 GB."""
    import subprocess
    import sys

    from qiskit.circuit.library import real_amplitudes, z_feature_map

    from qmltest.interop import from_circuit

    fm, an = z_feature_map(14), real_amplitudes(14, reps=2)
    w = np.random.default_rng(0).uniform(-1, 1, an.num_parameters)
    from_circuit(fm.compose(an), w, list(fm.parameters), readout="parity", classes=[0, 1]).save(tmp_path / "wide")
    code = (
        "import sys\n"
        f"sys.argv = ['qmltest', 'mutate', {str(tmp_path / 'wide')!r}, '--suite', 'qml', '--list']\n"
        "from qmltest_cli.main import run\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        # VmHWM: this process image's peak (ru_maxrss would carry the forking pytest's own RSS over exec)
        "print('hwm', [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    assert "(directed)" in out.stdout
    kib = int(out.stdout.strip().splitlines()[-1].split()[1])
    assert kib < 1024 * 1024, f"{kib / 1024:.0f} MiB"


def test_work_items_exist_before_any_mutant_is_built() -> None:
    """Issue 58: a strategy plans work items whose ids come from the model, operator and site
    alone: as many as the plan's sites, distinct, stable across calls, and made without building
    a mutant (the operators' apply is never called)."""
    from qmltest.model import artifact
    from qmltest.mutation.options import Options
    from qmltest.mutation.strategies import chooser

    model = artifact.load(Path(__file__).resolve().parents[1] / "data" / "models" / "zfm-ra-iris")
    opts = Options(suite="qml").resolved()
    strategy = chooser.checked(opts)
    applied = []
    original = {op: op.apply for op in QML.values()}
    try:
        for cls in QML.values():
            cls.apply = lambda self, m, s: applied.append(s)  # type: ignore[method-assign]
        items = strategy.items(model, opts)
    finally:
        for cls, fn in original.items():
            cls.apply = fn  # type: ignore[method-assign]
    assert applied == []
    assert len(items) == strategy.plan(model, opts).total > 0
    assert len({i.id for i in items}) == len(items)
    assert [i.id for i in items] == [i.id for i in strategy.items(model, opts)]
    assert chooser.get("search").items(model, Options().resolved()) == []  # search finds its mutants as it runs
