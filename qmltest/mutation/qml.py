"""The QML mutation operators (APC, DFC, APGC, LS, ILS, ALA, ALD; efficient-QML paper Sec. IV-C) and
the classic gate operators (Muskit / QMutPy: add, remove, replace a gate), as site lists + pure edits.

Sites come first (cosmic-ray style): `sites(model, directed)` lists every mutation as a small,
hashable record, so counting (`--list`), deduplication and resuming need no simulation; `apply`
builds the mutant from one site. "Layers" here are the ansatz's repeated units: a rotation block
with the entangling blocks that follow it (Sec. IV-C1), found inside the IR's ansatz layers.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from qiskit.circuit import Measure

from qmltest.artifact import Model
from qmltest.ir import Gate, ModelIR
from qmltest.mutation import edit
from qmltest.mutation.edit import Row
from qmltest.mutation.gates import num_params, num_qubits

DIRECTED_ANGLES = (math.pi / 2, math.pi)
AVAILABLE_GATES = ("x", "y", "z", "h", "rx", "ry", "rz", "cx", "cz", "swap")
SAMPLED = 3  # sampled values per site when directed values are not used


@dataclass(frozen=True)
class Site:
    """One mutation: operator name and its arguments (all hashable)."""

    operator: str
    args: tuple

    def describe(self) -> str:
        return f"{self.operator}{self.args}"


@dataclass(frozen=True)
class Unit:
    """A repeated ansatz unit: the rows [start, stop) of the flat gate list, and its rotation rows."""

    start: int
    stop: int
    rotation: tuple[int, ...]
    entangling: tuple[int, ...]


_UNITS: dict[int, tuple[ModelIR, list[Unit]]] = {}


def units(ir: ModelIR) -> list[Unit]:
    """Split every ansatz layer into units: a rotation block plus the entangling blocks after it.

    Cached per IR object: every site of a generation run splits the same original."""
    hit = _UNITS.get(id(ir))
    if hit is None or hit[0] is not ir:
        if len(_UNITS) >= 64:
            _UNITS.clear()
        hit = _UNITS[id(ir)] = (ir, _units(ir))
    return list(hit[1])


def _units(ir: ModelIR) -> list[Unit]:
    out: list[Unit] = []
    pos = 0
    for layer in ir.layers:
        if layer.kind != "ansatz":
            pos += len(layer.gates)
            continue
        current: list[tuple[str, list[int]]] = []
        for block in layer.blocks:
            idx = list(range(pos, pos + len(block.gates)))
            pos += len(block.gates)
            if block.kind == "rotation" and current and any(k != "rotation" for k, _ in current):
                out.append(_unit(current))
                current = []
            current.append((block.kind, idx))
        if current:
            out.append(_unit(current))
    return out


def _unit(blocks: list[tuple[str, list[int]]]) -> Unit:
    rows = [i for _, idx in blocks for i in idx]
    rot = tuple(i for k, idx in blocks if k == "rotation" for i in idx)
    ent = tuple(i for k, idx in blocks if k != "rotation" for i in idx)
    return Unit(min(rows), max(rows) + 1, rot, ent)


def _weights(g: Gate) -> list[int]:
    return [i for i, p in enumerate(g.params) if p.kind == "weight"]


def _reorder(ir: ModelIR, order: list[int], replacements: dict[int, Row | None] | None = None) -> ModelIR:
    rows = edit.flatten(ir)
    replacements = replacements or {}
    new = []
    for i in order:
        row = replacements.get(i, rows[i]) if i >= 0 else replacements.get(i)
        if row is not None:
            new.append(row)
    return edit.rebuild(ir, new)


class QmlOperator:
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed  # the run's root seed: sampled values and random weights derive from it

    def sites(self, model: Model, directed: bool) -> list[Site]:
        raise NotImplementedError

    def apply(self, model: Model, site: Site) -> Model:
        raise NotImplementedError


class APC(QmlOperator):
    """Ansatz Parameter Change: a unit's weights zeroed, sign-flipped, shifted or scaled."""

    name, description = "APC", "ansatz parameter change"

    def sites(self, model, directed):
        rng = np.random.default_rng([self.seed, 0])
        out = []
        for u, unit in enumerate(units(model.ir)):
            if not any(_weights(model.ir.gates[i]) for i in unit.rotation):
                continue
            out += [Site(self.name, (u, "zero", 0.0)), Site(self.name, (u, "flip", 0.0))]
            values = DIRECTED_ANGLES if directed else tuple(float(v) for v in rng.normal(0, 1, SAMPLED))
            out += [Site(self.name, (u, kind, round(v, 12))) for kind in ("add", "scale") for v in values]
        return out

    def apply(self, model, site):
        u, kind, value = site.args
        unit = units(model.ir)[u]
        rows = edit.flatten(model.ir)
        for i in unit.rotation:
            g = rows[i].gate
            vals = list(g.operation.params)
            for k in _weights(g):
                v = float(vals[k])
                vals[k] = {"zero": 0.0, "flip": -v, "add": v + value, "scale": v * value}[kind]
            rows[i] = Row(rows[i].layer, edit.with_params(g, vals))
        return model.with_ir(export=False, new_ir=edit.replaced(model.ir, {i: rows[i].gate for i in unit.rotation}))


FEATURE_OPS = ("add", "mul", "sign", "one_minus")
IMAGE_OPS = ("crop", "rotate", "hflip", "vflip")


class DFC(QmlOperator):
    """Data Feature Change: a pair of features transformed before encoding; images cropped/rotated/flipped.

    The circuit is unchanged; the mutant's manifest gains a preprocessing step (a data mutation).
    """

    name, description = "DFC", "data sample feature change"

    def sites(self, model, directed):
        if model.amplitude:
            return [Site(self.name, ("image", op)) for op in IMAGE_OPS]
        f = len(model.ir.inputs)
        value = math.pi / 2 if directed else 0.5
        return [
            Site(self.name, ("pair", i, j, a, b, value))
            for i in range(f)
            for j in range(i + 1, f)
            for a in FEATURE_OPS
            for b in FEATURE_OPS
        ]

    def apply(self, model, site):
        if site.args[0] == "image":
            step = {"op": "image", "transform": site.args[1]}
            steps = _insert_image_step(model.manifest["preprocessing"], step)
        else:
            _, i, j, a, b, value = site.args
            step = {"op": "feature_change", "indices": [i, j], "ops": [a, b], "value": value}
            steps = list(model.manifest["preprocessing"]) + [step]
        return model.with_manifest(preprocessing=steps)


def _insert_image_step(steps: list[dict], step: dict) -> list[dict]:
    """Image transforms act on the raw image: before any other step, with its shape."""
    shape = steps[0]["from"] if steps and steps[0].get("op") == "resize" else None
    return [dict(step, shape=shape)] + list(steps)


class APGC(QmlOperator):
    """Ansatz Parameterized Gate Change: RX/RY (amplitude) <-> RZ (phase), the angle kept."""

    name, description = "APGC", "ansatz parameterized gate change"
    TARGETS: ClassVar[dict[str, tuple[str, ...]]] = {"rx": ("rz",), "ry": ("rz",), "rz": ("rx", "ry")}
    ALL: ClassVar[dict[str, tuple[str, ...]]] = {"rx": ("ry", "rz"), "ry": ("rx", "rz"), "rz": ("rx", "ry")}

    def sites(self, model, directed):
        table = self.TARGETS if directed else self.ALL
        rows = edit.flatten(model.ir)
        out = []
        for u in units(model.ir):
            for i in u.rotation:
                g = rows[i].gate
                if g.name in table and _weights(g):
                    out += [Site(self.name, (i, t)) for t in table[g.name]]
        return out

    def apply(self, model, site):
        i, target = site.args
        new = edit.with_name(model.ir.gates[i], target)
        return model.with_ir(export=False, new_ir=edit.replaced(model.ir, {i: new}))


class LS(QmlOperator):
    """Layer Shuffling (Sec. IV-C): swap two units of the ansatz."""

    name, description = "LS", "layer shuffling"

    def sites(self, model, directed):
        us = units(model.ir)
        return [Site(self.name, ("swap", a, b)) for a in range(len(us)) for b in range(a + 1, len(us))]

    def apply(self, model, site):
        us = units(model.ir)
        n = len(model.ir.gates)
        a, b = us[site.args[1]], us[site.args[2]]
        order = list(range(a.start)) + list(range(b.start, b.stop)) + list(range(a.stop, b.start))
        order += list(range(a.start, a.stop)) + list(range(b.stop, n))
        return model.with_ir(export=False, new_ir=_relayered(model.ir, order))


def _relayered(ir: ModelIR, order: list[int]) -> ModelIR:
    """Reorder rows; each position keeps the IR layer label of the row that stood there before."""
    rows = edit.flatten(ir)
    return edit.rebuild(ir, [Row(rows[pos].layer, rows[src].gate) for pos, src in enumerate(order)])


class ILS(QmlOperator):
    """In-layer Shuffling (Sec. IV-C): inside a unit, the parameterized gates and the entangling
    gates swap places ("entangle_first": the entanglers, then the rotations), and, as the paper
    extends it to any blocks of a layer, two rotation sets (gates of one time step) swap."""

    name, description = "ILS", "in-layer shuffling"

    def _sets(self, model: Model, unit: Unit) -> list[list[int]]:
        rows = edit.flatten(model.ir)
        steps = edit.moments([rows[i] for i in unit.rotation])
        sets: dict[int, list[int]] = {}
        for i, t in zip(unit.rotation, steps):
            sets.setdefault(t, []).append(i)
        return [sets[t] for t in sorted(sets)]

    def sites(self, model, directed):
        out = []
        for u, unit in enumerate(units(model.ir)):
            if unit.rotation and unit.entangling:
                out.append(Site(self.name, (u, "entangle_first")))
            k = len(self._sets(model, unit))
            out += [Site(self.name, (u, a, b)) for a in range(k) for b in range(a + 1, k)]
        return out

    def apply(self, model, site):
        if site.args[1] == "entangle_first":
            unit = units(model.ir)[site.args[0]]
            n = len(model.ir.gates)
            order = list(range(unit.start)) + list(unit.entangling) + list(unit.rotation) + list(range(unit.stop, n))
            return model.with_ir(export=False, new_ir=_reorder(model.ir, order))
        u, a, b = site.args
        unit = units(model.ir)[u]
        sets = self._sets(model, unit)
        sets[a], sets[b] = sets[b], sets[a]
        inner = [i for s in sets for i in s] + list(unit.entangling)
        order = list(range(unit.start)) + inner + list(range(unit.stop, len(model.ir.gates)))
        return model.with_ir(export=False, new_ir=_reorder(model.ir, order))


class ALA(QmlOperator):
    """Ansatz Layer Addition: a copy of unit s (its weights, or seeded random ones) after unit t."""

    name, description = "ALA", "ansatz layer addition"

    def sites(self, model, directed):
        us = units(model.ir)
        return [
            Site(self.name, (s, t, init)) for s in range(len(us)) for t in range(len(us)) for init in ("copy", "random")
        ]

    def apply(self, model, site):
        s, t, init = site.args
        us = units(model.ir)
        rows = edit.flatten(model.ir)
        span = range(us[s].start, us[s].stop)
        draws: list[float] = []
        if init == "random":  # one vector draw: the same numbers as one uniform() call per weight
            count = sum(len(_weights(rows[i].gate)) for i in span)
            draws = np.random.default_rng([self.seed, s, t]).uniform(-math.pi, math.pi, count).tolist()
        copies = []
        for i in span:
            g = rows[i].gate
            if draws and _weights(g):
                vals = list(g.operation.params)
                for k in _weights(g):
                    vals[k] = draws.pop(0)
                g = edit.with_params(g, vals)
            copies.append(Row(rows[us[t].stop - 1].layer, g))
        new = rows[: us[t].stop] + copies + rows[us[t].stop :]
        return model.with_ir(export=False, new_ir=edit.rebuild(model.ir, new))


class ALD(QmlOperator):
    """Ansatz Layer Deletion: a whole unit, its rotations only, or its entanglers only."""

    name, description = "ALD", "ansatz layer deletion"

    def sites(self, model, directed):
        out = []
        for u, unit in enumerate(units(model.ir)):
            out.append(Site(self.name, (u, "all")))
            if unit.rotation and unit.entangling:
                out += [Site(self.name, (u, "rotations")), Site(self.name, (u, "entanglers"))]
        return out

    def apply(self, model, site):
        u, what = site.args
        unit = units(model.ir)[u]
        drop = {
            "all": set(range(unit.start, unit.stop)),
            "rotations": set(unit.rotation),
            "entanglers": set(unit.entangling),
        }[what]
        rows = edit.flatten(model.ir)
        return model.with_ir(
            export=False, new_ir=edit.rebuild(model.ir, [r for i, r in enumerate(rows) if i not in drop])
        )


class AddGate(QmlOperator):
    """Classic: insert a gate of the available set on some qubits at some position.

    Exhaustive: every flat position. Directed: positions that differ only by commuting the new gate
    past gates on disjoint qubits are one mutant: one insertion per slot of its qubits' timelines.
    """

    name, description = "add-gate", "add a gate (Muskit/QMutPy)"

    def sites(self, model, directed):
        rows = edit.flatten(model.ir)
        n = model.ir.num_qubits
        out = []
        for name in AVAILABLE_GATES:
            k = num_qubits(name)
            if k > n:
                continue
            for qubits in _qubit_tuples(n, k):
                if directed:
                    touching = [i for i, r in enumerate(rows) if set(r.gate.qubits) & set(qubits)]
                    positions = sorted({0, *[i + 1 for i in touching]})
                else:
                    positions = list(range(len(rows) + 1))
                out += [Site(self.name, (name, qubits, p)) for p in positions]
        return out

    def apply(self, model, site):
        name, qubits, pos = site.args
        rows = edit.flatten(model.ir)
        params = [math.pi / 2] * num_params(name)
        layer = rows[min(pos, len(rows) - 1)].layer if rows else 0
        rows.insert(pos, Row(layer, edit.gate(name, tuple(qubits), params)))
        return model.with_ir(export=False, new_ir=edit.rebuild(model.ir, rows))


class RemoveGate(QmlOperator):
    name, description = "remove-gate", "remove a gate (Muskit/QMutPy)"

    def sites(self, model, directed):
        return [Site(self.name, (i,)) for i in range(len(model.ir.gates))]

    def apply(self, model, site):
        rows = edit.flatten(model.ir)
        del rows[site.args[0]]
        return model.with_ir(export=False, new_ir=edit.rebuild(model.ir, rows))


class ReplaceGate(QmlOperator):
    """Classic: replace a gate by another of the same arity and parameter count from the available set."""

    name, description = "replace-gate", "replace a gate (Muskit/QMutPy)"

    def sites(self, model, directed):
        out = []
        for i, g in enumerate(model.ir.gates):
            for name in AVAILABLE_GATES:
                if name != g.name and num_qubits(name) == len(g.qubits) and num_params(name) == len(g.params):
                    out.append(Site(self.name, (i, name)))
        return out

    def apply(self, model, site):
        i, name = site.args
        rows = edit.flatten(model.ir)
        rows[i] = Row(rows[i].layer, edit.with_name(rows[i].gate, name))
        return model.with_ir(export=False, new_ir=edit.rebuild(model.ir, rows))


class AddMeasure(QmlOperator):
    """Classic: a mid-circuit measurement (outcome unused) after a gate on a qubit that is used later.

    Exhaustive: every flat position before a later gate on the qubit; directed: one per slot of the
    qubit's own timeline (positions between the same two gates on that qubit are the same mutant).
    """

    name, description = "add-measure", "add a measurement (Muskit/QMutPy)"

    def sites(self, model, directed):
        rows = edit.flatten(model.ir)
        out = []
        for q in range(model.ir.num_qubits):
            touching = [i for i, r in enumerate(rows) if q in r.gate.qubits and r.gate.name != "measure"]
            if len(touching) < 2:
                continue
            if directed:
                positions = [i + 1 for i in touching[:-1]]
            else:
                positions = list(range(touching[0] + 1, touching[-1] + 1))
            out += [Site(self.name, (q, p)) for p in positions]
        return out

    def apply(self, model, site):
        q, pos = site.args
        rows = edit.flatten(model.ir)
        g = Gate("measure", (q,), (), Measure())
        rows.insert(pos, Row(rows[min(pos, len(rows) - 1)].layer, g))
        return model.with_ir(export=False, new_ir=edit.rebuild(model.ir, rows))


class RemoveMeasure(QmlOperator):
    """Classic: remove a mid-circuit measurement, or a readout qubit's final measurement (its
    classical bit then reads 0: the readout map keeps the states with that bit 0)."""

    name, description = "remove-measure", "remove a measurement (Muskit/QMutPy)"

    def sites(self, model, directed):
        out = [Site(self.name, ("mid", i)) for i, g in enumerate(model.ir.gates) if g.name == "measure"]
        if len(model.ir.measured) > 1 and "map" in model.manifest["readout"]:  # expectation readouts: no map
            out += [Site(self.name, ("readout", k)) for k in range(len(model.ir.measured))]
        return out

    def apply(self, model, site):
        kind, k = site.args
        if kind == "mid":
            rows = edit.flatten(model.ir)
            del rows[k]
            return model.with_ir(export=False, new_ir=edit.rebuild(model.ir, rows))
        measured = list(model.ir.measured)
        old = model.manifest["readout"]
        keep = [b for b in range(len(measured)) if b != k]
        mapping = []
        for s in range(2 ** len(keep)):
            full = sum(((s >> j) & 1) << b for j, b in enumerate(keep))  # bit k stays 0
            mapping.append(old["map"][full])
        new_ir = _replace_measured(model.ir, tuple(measured[b] for b in keep))
        readout = dict(old, qubits=[measured[b] for b in keep], map=mapping)
        return model.with_ir(export=False, new_ir=new_ir, readout=readout)


def _replace_measured(ir: ModelIR, measured: tuple[int, ...]) -> ModelIR:
    from dataclasses import replace

    return replace(ir, measured=measured)


def _qubit_tuples(n: int, k: int) -> list[tuple[int, ...]]:
    if k == 1:
        return [(q,) for q in range(n)]
    return [(a, b) for a in range(n) for b in range(n) if a != b]


QML: dict[str, type[QmlOperator]] = {op.name: op for op in (APC, DFC, APGC, LS, ILS, ALA, ALD)}
CLASSIC: dict[str, type[QmlOperator]] = {
    op.name: op for op in (AddGate, RemoveGate, ReplaceGate, AddMeasure, RemoveMeasure)
}


class Form(tuple):
    """A canonical form (a plain tuple for equality and hashing) that carries its own repr, built
    from each gate's cached repr: the mutant id hashes it, and repr-ing 150 gates anew cost more
    than making the mutant."""

    text: str


def _joined(parts: list[str]) -> str:
    """repr of a tuple from its items' reprs."""
    return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def canonical(model: Model, keys: dict | None = None) -> Form:
    """A form equal for circuits that differ only in the order of gates on disjoint qubits.

    Gates are keyed by ASAP time step, then qubits; with the preprocessing (DFC mutants differ there)
    and the readout (remove-measure mutants differ there). `keys` caches each layer's keyed gates by
    layer object and incoming qubit frontier (mutants share the original's unchanged layers), so a
    generation run keys each unchanged layer once, and the last IR's gate part (DFC and readout
    mutants share the original's IR).
    """
    keys = {} if keys is None else keys
    part = keys.get("ir")  # the last IR keyed: one slot, so mutants' IRs are not kept alive
    if part is None or part[0] is not model.ir:
        part = keys["ir"] = (model.ir, *_gate_part(model.ir, keys))
    steps_text, quoted = _steps_repr(model.manifest["preprocessing"], keys)
    # the readout matrix by digest: over 16 measured qubits it is 1 MB, and its repr (4 MB) in every
    # form held 10 GB for 2,000 mutants
    matrix = hashlib.sha256(model.readout_matrix.tobytes()).hexdigest()
    form = Form((part[1], steps_text, model.ir.measured, matrix))
    form.text = _joined([part[2], quoted, repr(model.ir.measured), repr(matrix)])
    return form


def _steps_repr(steps: object, keys: dict) -> tuple[str, str]:
    """repr(steps) and repr(repr(steps)), from each step's cached repr: a PCA step's text is 125 kB
    (1 ms to repr twice), and DFC mutants repeat the original's steps with one more."""
    if type(steps) is not list:
        text = repr(steps)
        return text, repr(text)
    parts, single, double, clean = [], False, False, True
    for step in steps:
        hit = keys.get(("step", id(step)))
        if hit is None or hit[0] is not step:
            text = repr(step)
            hit = (step, text, "'" in text, '"' in text, "\\" not in text and text.isprintable())
            keys[("step", id(step))] = hit
        parts.append(hit[1])
        single, double, clean = single or hit[2], double or hit[3], clean and hit[4]
    text = "[" + ", ".join(parts) + "]"
    if clean and not (single and double):  # what repr does for a printable text without backslashes
        return text, ('"' if single else "'") + text + ('"' if single else "'")
    return text, repr(text)


def _gate_part(ir: ModelIR, keys: dict) -> tuple[tuple, str]:
    """The sorted gate entries (t, qubits, name, params) and their repr.

    Gates sharing a time step act on disjoint qubits, so (t, first qubit) orders them exactly as the
    entries themselves would sort; it is kept as one integer, t * n + q. The first IR keyed (the
    original) is kept sorted: a mutant that holds the same time slots (a changed angle or gate name)
    patches its changed entries into that order with no sort, found from `edit.derived` or from its
    changed layers.
    """
    base = keys.get("base")
    if base is not None:
        hint = edit.derived(ir)
        if hint is not None and hint[0] is base[0]:
            return _patched(base, [(i, _entry(g, base[4][i], ir.num_qubits, keys)) for i, g in hint[1].items()])
    n = ir.num_qubits
    free = (0,) * n  # each qubit's next free time step
    hits = []
    for layer in ir.layers:
        slot = (id(layer), free)
        hit = keys.get(slot)
        if hit is None or hit[0] is not layer:
            out = list(free)
            entries = []
            for g in layer.gates:
                qs = g.qubits
                if len(qs) == 1:
                    t = out[qs[0]]
                    out[qs[0]] = t + 1
                else:
                    t = max([out[q] for q in qs])
                    for q in qs:
                        out[q] = t + 1
                mine = keys.get(id(g))  # `_entry`'s cache, looked up inline: this loop is hot
                row = mine[3].get(t) if mine is not None and mine[0] is g else None
                entries.append(row if row is not None else _entry(g, t, n, keys))
            hit = keys[slot] = (layer, entries, tuple(out), tuple([row[0] for row in entries]))
        hits.append(hit)
        free = hit[2]
    if base is not None and len(hits) == len(base[1]):
        pairs = list(zip(hits, base[1]))
        if all(h[3] == b[3] for h, b in pairs if h is not b):
            return _patched(base, [(None, row) for h, b in pairs if h is not b for row in h[1]])
    ranked = sorted(row for hit in hits for row in hit[1])
    entries_ = [e for _, e, _ in ranked]
    texts = [t for _, _, t in ranked]
    if base is None:
        pos = {k: i for i, (k, _, _) in enumerate(ranked)}
        flat = [k for hit in hits for k in hit[3]]  # flat gate index -> its (t, q) key
        keys["base"] = (ir, hits, pos, (entries_, texts), [k // n for k in flat], [pos[k] for k in flat])
    return tuple(entries_), _joined(texts) if texts else "()"


def _entry(g: Gate, t: int, n: int, keys: dict) -> tuple[int, tuple, str]:
    """(t * n + first qubit, (t, qubits, name, params), its repr) for gate g at time step t, made
    once per gate object and time."""
    mine = keys.get(id(g))
    if mine is None or mine[0] is not g:
        key = (g.qubits, g.name, tuple(str(p.value) for p in g.params))
        mine = keys[id(g)] = (g, key, repr(key)[1:], {})
    row = mine[3].get(t)
    if row is None:
        row = mine[3][t] = (t * n + g.qubits[0], (t, *mine[1]), f"({t}, {mine[2]}")
    return row


def _patched(base: tuple, changes: list[tuple[int | None, tuple]]) -> tuple[tuple, str]:
    """The original's sorted entries with some replaced: by flat index when given, else by key."""
    _, _, pos, (entries_, texts), _, flat_pos = base
    entries_, texts = list(entries_), list(texts)
    for i, (k, e, t) in changes:
        p = flat_pos[i] if i is not None else pos[k]
        entries_[p] = e
        texts[p] = t
    return tuple(entries_), _joined(texts) if texts else "()"
