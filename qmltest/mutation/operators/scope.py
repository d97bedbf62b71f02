"""Mutation scope (QuanForge Sec. 3.2): qubit range, depth range, gate types."""

from __future__ import annotations

from dataclasses import dataclass

from qmltest.errors import InputError
from qmltest.mutation.operators.categories import categories_of, check_types
from qmltest.mutation.operators.edit import Row, moments


@dataclass(frozen=True)
class Scope:
    qubits: frozenset[int] | None = None  # None: all qubits
    depth: tuple[float, float] = (0.0, 1.0)  # fraction of the circuit depth (ASAP time steps)
    gate_types: tuple[str, ...] | None = None  # Table 1 categories; None: all

    def depth_fractions(self, rows: list[Row]) -> list[float]:
        steps = moments(rows)
        total = max(steps, default=0) + 1
        return [s / total for s in steps]

    def in_depth(self, fraction: float) -> bool:
        lo, hi = self.depth
        return lo <= fraction < hi or (hi >= 1.0 and fraction >= lo)

    def allows_qubits(self, qubits: tuple[int, ...]) -> bool:
        return self.qubits is None or all(q in self.qubits for q in qubits)

    def allows_gate(self, name: str) -> bool:
        return self.gate_types is None or bool(categories_of(name) & set(self.gate_types))

    def eligible(self, rows: list[Row]) -> list[int]:
        """Indices of gates inside the scope."""
        fractions = self.depth_fractions(rows)
        return [
            i
            for i, r in enumerate(rows)
            if self.in_depth(fractions[i]) and self.allows_qubits(r.gate.qubits) and self.allows_gate(r.gate.name)
        ]

    def insert_positions(self, rows: list[Row]) -> list[int]:
        """Positions (before row i, or at the end) whose depth lies in the range."""
        fractions = self.depth_fractions(rows) + [1.0]
        return [i for i, f in enumerate(fractions) if self.in_depth(f) or (i == len(rows) and self.depth[1] >= 1.0)]

    def qubit_pool(self, num_qubits: int) -> list[int]:
        return sorted(self.qubits) if self.qubits is not None else list(range(num_qubits))


def parse_range(text: str, size: int | None = None) -> tuple[float, float]:
    """'0-50%' -> (0.0, 0.5); '0-7' (qubits, with size) -> (0, 7) inclusive integers."""
    percent = text.endswith("%")
    lo_s, sep, hi_s = text.rstrip("%").partition("-")
    try:
        lo, hi = float(lo_s), float(hi_s if sep else lo_s)
    except ValueError:
        raise InputError(f"bad range '{text}' (use e.g. 0-50% or 0-7)") from None
    if percent:
        if not 0 <= lo < hi <= 100:
            raise InputError(f"depth range '{text}' must satisfy 0 <= lo < hi <= 100%")
        return lo / 100, hi / 100
    if size is not None and not (lo.is_integer() and hi.is_integer()):
        raise InputError(f"qubit range '{text}' must name whole qubits, e.g. 0-7")
    if size is not None and not (0 <= lo <= hi < size):
        raise InputError(f"qubit range '{text}' outside 0-{size - 1}")
    if size is None:
        raise InputError(f"range '{text}' needs a percent sign (e.g. 0-25%)")
    return lo, hi


def make_scope(num_qubits: int, qubits: str | None, depth: str | None, gate_types: str | None) -> Scope:
    qset = None
    if qubits:
        lo, hi = parse_range(qubits, num_qubits)
        qset = frozenset(range(int(lo), int(hi) + 1))
    drange = parse_range(depth) if depth else (0.0, 1.0)
    if depth and not depth.endswith("%"):
        raise InputError(f"--depth takes a percent range such as 0-50%, got '{depth}'")
    types = check_types([t.strip() for t in gate_types.split(",")]) if gate_types else None
    return Scope(qset, drange, tuple(types) if types else None)
