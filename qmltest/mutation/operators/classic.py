"""The classic operators (Muskit / QMutPy): add, remove, replace a gate; add or remove a measured
qubit. Same interface as the QML operators (`qml.QmlOperator`: sites, then one pure edit per site).
"""

from __future__ import annotations

import math

from qiskit.circuit import Measure

from qmltest.model.ir import Gate, ModelIR
from qmltest.mutation.operators import edit
from qmltest.mutation.operators.categories import num_params, num_qubits
from qmltest.mutation.operators.edit import Row
from qmltest.mutation.operators.qml import QmlOperator, Site

AVAILABLE_GATES = ("x", "y", "z", "h", "rx", "ry", "rz", "cx", "cz", "swap")


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


CLASSIC: dict[str, type[QmlOperator]] = {
    op.name: op for op in (AddGate, RemoveGate, ReplaceGate, AddMeasure, RemoveMeasure)
}
