"""The QML mutation operators (APC, DFC, APGC, LS, ILS, ALA, ALD; efficient-QML paper Sec. IV-C), as
site lists + pure edits (the classic gate and measurement operators: `classic`; canonical forms
that find duplicate mutants: `canonical`).

Sites come first (cosmic-ray style): `sites(model, directed)` lists every mutation as a small,
hashable record, so counting (`--list`), deduplication and resuming need no simulation; `apply`
builds the mutant from one site. "Layers" here are the ansatz's repeated units: a rotation block
with the entangling blocks that follow it (Sec. IV-C1), found inside the IR's ansatz layers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from qmltest.model.artifact import Model
from qmltest.model.ir import Gate, ModelIR
from qmltest.mutation.operators import edit
from qmltest.mutation.operators.edit import Row

DIRECTED_ANGLES = (math.pi / 2, math.pi)
"""DFC's targeted values (Sec. IV-C2: radians in [-pi, pi] that break the feature map's symmetry)."""
APC_VALUES = {
    "add": (-math.pi / 2, math.pi / 2, math.pi),
    "scale": (-math.pi, -math.pi / 2, math.pi / 2, math.pi),
}
"""APC's targeted values (Sec. IV-C1: known radians such as pi/2 and pi, within [-pi, pi]). Adding -pi
is left out: R(theta - pi) = -R(theta + pi), a global phase of the add-pi mutant, so it is redundant."""
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


def units(ir: ModelIR) -> list[Unit]:
    """Split every ansatz layer into units: a rotation block plus the entangling blocks after it.

    Kept in the IR's memo: every site of a generation run splits the same original."""
    return list(ir.memo.get_or("qml.units", lambda: _units(ir)))


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
    """Ansatz Parameter Change (Sec. IV-C1): a unit's weights zeroed, sign-flipped, shifted or scaled
    by the targeted radians `APC_VALUES` (directed) or Gaussian draws from the root seed."""

    name, description = "APC", "ansatz parameter change"

    def sites(self, model, directed):
        rng = np.random.default_rng([self.seed, 0])
        out = []
        for u, unit in enumerate(units(model.ir)):
            if not any(_weights(model.ir.gates[i]) for i in unit.rotation):
                continue
            out += [Site(self.name, (u, "zero", 0.0)), Site(self.name, (u, "flip", 0.0))]
            for kind in ("add", "scale"):
                values = APC_VALUES[kind] if directed else tuple(float(v) for v in rng.normal(0, 1, SAMPLED))
                out += [Site(self.name, (u, kind, round(v, 12))) for v in values]
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
        valued = DIRECTED_ANGLES if directed else (0.5,)
        return [
            Site(self.name, ("pair", i, j, a, b, value))
            for i in range(f)
            for j in range(i + 1, f)
            for a in FEATURE_OPS
            for b in FEATURE_OPS
            for value in (valued if {a, b} & {"add", "mul"} else valued[:1])  # sign, one_minus take no value
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


QML: dict[str, type[QmlOperator]] = {op.name: op for op in (APC, DFC, APGC, LS, ILS, ALA, ALD)}
