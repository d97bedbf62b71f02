"""QuanForge's nine post-training mutation operators (Sec. 3.2), pure IR -> IR with seeded choices.

Each operator lists its `sites` (gate indices, or insertion positions for RGA) inside a scope, and
`apply` mutates a chosen set of them with a numpy Generator, returning a new IR and a description.
The gate percentage of Algorithm 1 sets how many sites are mutated.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from qmltest.errors import InputError
from qmltest.model.ir import Gate, ModelIR
from qmltest.mutation.operators import edit
from qmltest.mutation.operators.categories import (
    CONTROLLED,
    REPLACEMENT_GROUPS,
    UNCONTROLLED,
    categories_of,
    num_params,
    num_qubits,
)
from qmltest.mutation.operators.edit import Row
from qmltest.mutation.operators.scope import Scope

DISTRIBUTIONS = ("gaussian", "uniform", "exponential")


def draw(rng: np.random.Generator, distribution: str, scale: float = 1.0) -> float:
    """One noise value: N(0, scale^2), U(-scale, scale), or a signed Exp(scale)."""
    if distribution == "gaussian":
        return float(rng.normal(0.0, scale))
    if distribution == "uniform":
        return float(rng.uniform(-scale, scale))
    if distribution == "exponential":
        return float(rng.exponential(scale) * rng.choice([-1.0, 1.0]))
    raise InputError(f"unknown distribution '{distribution}' (choose from {', '.join(DISTRIBUTIONS)})")


def _weights(g: Gate) -> list[int]:
    """Indices of numeric (trained or constant) parameters: the data expressions are never mutated."""
    return [i for i, p in enumerate(g.params) if p.kind != "data"]


def _describe(rows: list[Row], i: int) -> str:
    g = rows[i].gate
    return f"{g.name}{list(g.qubits)}@{i}"


ADDABLE = ("x", "y", "z", "h", "p", "rx", "ry", "rz", "cx", "cy", "cz", "cp", "crx", "cry", "crz", "swap")
"""Every gate RGA can add under a gate-type scope (Table 1's types, in Qiskit's names)."""


class Operator:
    """Interface: `sites` inside a scope, `apply` to chosen sites; `mutate` picks by percentage."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    level: ClassVar[str] = "gate"  # gate | parameter

    def __init__(self, distribution: str = "gaussian", scale: float = 1.0, pool: tuple[str, ...] | None = None):
        self.distribution = distribution
        self.scale = scale
        self.custom_pool = pool is not None
        self.pool = pool or ("x", "h", "rx", "ry", "rz", "cx", "cz", "crx")

    def addable(self, scope: Scope) -> list[str]:
        """Gates RGA may add: the pool, or with a gate-type scope (QuanForge Table 6) every gate of
        those types (phase and SWAP gates too, which the default pool leaves out)."""
        if scope.gate_types is None or self.custom_pool:
            return [n for n in self.pool if scope.allows_gate(n)]
        return [n for n in ADDABLE if scope.allows_gate(n)]

    def sites(self, ir: ModelIR, scope: Scope) -> list[int]:
        rows = edit.flatten(ir)
        return [i for i in scope.eligible(rows) if self.applicable(rows[i].gate, ir)]

    def applicable(self, g: Gate, ir: ModelIR) -> bool:
        return True

    def site_args(self, ir: ModelIR, scope: Scope) -> list[tuple[int, ...]]:
        """The operator's sites one at a time, each as the `chosen` list `apply` takes (a gate or an
        insert position; PS: a pair): how the registry offers it through the one site interface."""
        return [(i,) for i in self.sites(ir, scope)]

    def apply(
        self, ir: ModelIR, scope: Scope, chosen: list[int], rng: np.random.Generator
    ) -> tuple[ModelIR, list[str]]:
        raise NotImplementedError

    def count(self, num_sites: int, percentage: float) -> int:
        return max(1, min(num_sites, math.ceil(percentage * num_sites)))

    def mutate(
        self, ir: ModelIR, scope: Scope, percentage: float, rng: np.random.Generator
    ) -> tuple[ModelIR, list[str]] | None:
        """A mutant with ceil(percentage x sites) mutated sites, or None when nothing is in scope."""
        sites = self.sites(ir, scope)
        if not sites:
            return None
        k = self.count(len(sites), percentage)
        chosen = sorted(int(s) for s in rng.choice(sites, size=k, replace=False))
        return self.apply(ir, scope, chosen, rng)


class RGA(Operator):
    """Random Gate Addition: add gates from the pool at random in-scope positions and qubits."""

    name = "RGA"
    description = "random gate addition"

    def sites(self, ir: ModelIR, scope: Scope) -> list[int]:
        if not self.addable(scope):
            return []
        return scope.insert_positions(edit.flatten(ir))

    def count(self, num_sites: int, percentage: float) -> int:
        return max(1, math.ceil(percentage * max(num_sites - 1, 1)))

    def apply(self, ir, scope, chosen, rng):
        rows = edit.flatten(ir)
        pool = self.addable(scope)
        qubits = scope.qubit_pool(ir.num_qubits)
        pool = [n for n in pool if num_qubits(n) <= len(qubits)]
        notes = []
        for offset, pos in enumerate(chosen):
            name = str(rng.choice(pool))
            qs = tuple(int(q) for q in rng.choice(qubits, size=num_qubits(name), replace=False))
            params = [draw(rng, self.distribution, self.scale) for _ in range(num_params(name))]
            at = pos + offset
            layer = rows[min(at, len(rows) - 1)].layer
            rows.insert(at, Row(layer, edit.gate(name, qs, params)))
            notes.append(f"add {name}{list(qs)} at {at}")
        return edit.rebuild(ir, rows), notes


class RGD(Operator):
    """Random Gate Deletion: remove in-scope gates."""

    name = "RGD"
    description = "random gate deletion"

    def apply(self, ir, scope, chosen, rng):
        rows = edit.flatten(ir)
        notes = [f"delete {_describe(rows, i)}" for i in chosen]
        keep = [r for i, r in enumerate(rows) if i not in set(chosen)]
        return edit.rebuild(ir, keep), notes


class GR(Operator):
    """Gate Replacement: another gate of the same size and parameter count, parameters kept."""

    name = "GR"
    description = "gate replacement"

    def applicable(self, g: Gate, ir: ModelIR) -> bool:
        return any(g.name in group for group in REPLACEMENT_GROUPS)

    def apply(self, ir, scope, chosen, rng):
        rows = edit.flatten(ir)
        notes = []
        for i in chosen:
            g = rows[i].gate
            group = next(grp for grp in REPLACEMENT_GROUPS if g.name in grp)
            name = str(rng.choice(sorted(group - {g.name})))
            rows[i] = Row(rows[i].layer, edit.with_name(g, name))
            notes.append(f"replace {_describe(rows, i)} -> {name}")
        return edit.rebuild(ir, rows), notes


class GPM(Operator):
    """Gate Position Modification: move a gate along its qubits past at least one gate it meets."""

    name = "GPM"
    description = "gate position modification"

    def apply(self, ir, scope, chosen, rng):
        rows = edit.flatten(ir)
        picked = [rows[i] for i in chosen]  # by identity: earlier moves shift indices
        notes = []
        for row in picked:
            i = next(k for k, r in enumerate(rows) if r is row)
            g = row.gate
            neighbours = [j for j, r in enumerate(rows) if j != i and set(r.gate.qubits) & set(g.qubits)]
            if not neighbours:
                continue
            j = int(rng.choice(neighbours))
            layer = rows[j].layer  # the moved gate joins the neighbour's layer
            rows.pop(i)
            # after pop, inserting at j lands after the neighbour when moving down, before it when moving up
            rows.insert(j, Row(layer, g))
            notes.append(f"move {g.name}{list(g.qubits)} from {i} to {j}")
        return edit.rebuild(ir, rows), notes


class GSM(Operator):
    """Gate Size Modification: add a control to a single-qubit gate, or remove one from a controlled gate."""

    name = "GSM"
    description = "gate size modification"

    def applicable(self, g: Gate, ir: ModelIR) -> bool:
        return (g.name in CONTROLLED and ir.num_qubits > 1) or g.name in UNCONTROLLED

    def apply(self, ir, scope, chosen, rng):
        rows = edit.flatten(ir)
        notes = []
        for i in chosen:
            g = rows[i].gate
            if g.name in UNCONTROLLED:
                new = edit.with_name(g, UNCONTROLLED[g.name], (g.qubits[1],))
                notes.append(f"remove control of {_describe(rows, i)}")
            else:
                controls = [q for q in scope.qubit_pool(ir.num_qubits) if q != g.qubits[0]] or [
                    q for q in range(ir.num_qubits) if q != g.qubits[0]
                ]
                c = int(rng.choice(controls))
                new = edit.with_name(g, CONTROLLED[g.name], (c, g.qubits[0]))
                notes.append(f"add control q{c} to {_describe(rows, i)}")
            rows[i] = Row(rows[i].layer, new)
        return edit.rebuild(ir, rows), notes


class GRT(Operator):
    """Gate Re-targeting: move a gate's target qubit to another qubit (type and controls kept)."""

    name = "GRT"
    description = "gate re-targeting"

    def applicable(self, g: Gate, ir: ModelIR) -> bool:
        return ir.num_qubits > len(g.qubits)

    def apply(self, ir, scope, chosen, rng):
        rows = edit.flatten(ir)
        notes = []
        for i in chosen:
            g = rows[i].gate
            free = [q for q in scope.qubit_pool(ir.num_qubits) if q not in g.qubits] or [
                q for q in range(ir.num_qubits) if q not in g.qubits
            ]
            q = int(rng.choice(free))
            qubits = g.qubits[:-1] + (q,)
            rows[i] = Row(
                rows[i].layer, edit.gate(g.name, qubits, list(g.operation.params), [p.kind for p in g.params])
            )
            notes.append(f"retarget {_describe(rows, i)} -> {list(qubits)}")
        return edit.rebuild(ir, rows), notes


class _ParamOp(Operator):
    level = "parameter"

    def applicable(self, g: Gate, ir: ModelIR) -> bool:
        return bool(_weights(g))


class PF(_ParamOp):
    """Parameter Fuzzing: add noise (default N(0, 1), Sec. 4.3.2) to a gate's numeric parameters."""

    name = "PF"
    description = "parameter fuzzing"

    def apply(self, ir, scope, chosen, rng):
        rows = edit.flatten(ir)
        notes = []
        for i in chosen:
            g = rows[i].gate
            values = list(g.operation.params)
            for k in _weights(g):
                delta = draw(rng, self.distribution, self.scale)
                values[k] = float(values[k]) + delta
                notes.append(f"fuzz {_describe(rows, i)} param {k} by {delta:+.4f}")
            rows[i] = Row(rows[i].layer, edit.with_params(g, values))
        return edit.rebuild(ir, rows), notes


class PSF(_ParamOp):
    """Parameter Sign Flip: negate a gate's numeric parameters."""

    name = "PSF"
    description = "parameter sign flip"

    def applicable(self, g: Gate, ir: ModelIR) -> bool:
        return any(float(g.operation.params[k]) != 0.0 for k in _weights(g))

    def apply(self, ir, scope, chosen, rng):
        rows = edit.flatten(ir)
        notes = []
        for i in chosen:
            g = rows[i].gate
            values = [-float(v) if k in _weights(g) else v for k, v in enumerate(g.operation.params)]
            rows[i] = Row(rows[i].layer, edit.with_params(g, values))
            notes.append(f"flip sign of {_describe(rows, i)}")
        return edit.rebuild(ir, rows), notes


class PS(_ParamOp):
    """Parameter Switch: swap the parameters of two gates of one Table 1 category."""

    name = "PS"
    description = "parameter switch"

    def mutate(self, ir, scope, percentage, rng):
        sites = self.sites(ir, scope)
        rows = edit.flatten(ir)
        if len(sites) < 2:
            return None
        k = self.count(len(sites), percentage)
        chosen = sorted(int(s) for s in rng.choice(sites, size=k, replace=False))
        notes = []
        for i in chosen:
            gi = rows[i].gate
            cats = categories_of(gi.name)
            partners = [
                j
                for j in sites
                if j != i
                and categories_of(rows[j].gate.name) & cats
                and rows[j].gate.operation.params[_weights(rows[j].gate)[0]] != gi.operation.params[_weights(gi)[0]]
            ]
            if not partners:
                continue
            j = int(rng.choice(partners))
            notes.append(_switch(rows, i, j))
        if not notes:
            return None
        return edit.rebuild(ir, rows), notes

    def pairs(self, ir: ModelIR, scope: Scope) -> list[tuple[int, int]]:
        """Every switch PS can make: two in-scope gates sharing a Table 1 category whose weights differ."""
        rows, sites = edit.flatten(ir), self.sites(ir, scope)
        value = {i: rows[i].gate.operation.params[_weights(rows[i].gate)[0]] for i in sites}
        return [
            (i, j)
            for a, i in enumerate(sites)
            for j in sites[a + 1 :]
            if categories_of(rows[i].gate.name) & categories_of(rows[j].gate.name) and value[i] != value[j]
        ]

    def site_args(self, ir: ModelIR, scope: Scope) -> list[tuple[int, ...]]:
        return self.pairs(ir, scope)

    def apply(self, ir, scope, chosen, rng):
        """Switch the gates of `chosen` two by two (pairs from `pairs`)."""
        rows = edit.flatten(ir)
        notes = [_switch(rows, i, j) for i, j in zip(chosen[::2], chosen[1::2])]
        return edit.rebuild(ir, rows), notes


def _switch(rows: list[Row], i: int, j: int) -> str:
    """Swap the first weights of gates i and j in place; the note that says so."""
    gi, gj = rows[i].gate, rows[j].gate
    a, b = _weights(gi)[0], _weights(gj)[0]
    vi, vj = list(gi.operation.params), list(gj.operation.params)
    vi[a], vj[b] = float(gj.operation.params[b]), float(gi.operation.params[a])
    rows[i] = Row(rows[i].layer, edit.with_params(gi, vi))
    rows[j] = Row(rows[j].layer, edit.with_params(gj, vj))
    return f"switch params of {_describe(rows, i)} and {_describe(rows, j)}"


REGISTRY: dict[str, type[Operator]] = {op.name: op for op in (RGA, RGD, GR, GPM, GSM, GRT, PF, PSF, PS)}


def get(name: str, **kwargs: object) -> Operator:
    if name not in REGISTRY:
        raise InputError(f"unknown operator '{name}' (choose from {', '.join(REGISTRY)})")
    return REGISTRY[name](**kwargs)  # type: ignore[arg-type]
