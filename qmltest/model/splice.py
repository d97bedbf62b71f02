"""A mutant's OpenQASM 3 text spliced from the original's exported lines, byte for byte Qiskit's.

Qiskit's exporter (`qasm.dumps`) took 11.7 ms per 8-qubit QCL mutant, about as long as scoring the
mutant, so a run folder that keeps every mutant's `model.qasm` spent half its time exporting. A
mutant shares most gate objects with the original; each line of the original's export is a gate
(one instruction per line), so the mutant's text is the original's header and the lines of its
gates: the original's line for a gate it shares (same object or same name, qubits and parameters),
and for a new gate with numeric parameters the line Qiskit writes (`pi_check`, as its exporter
does). Anything else (a custom gate definition, other inputs, mid-circuit measurements, another
register size) returns None and the caller uses Qiskit's exporter. Tests compare the two texts on
every mutant of several zoo models.
"""

from __future__ import annotations

from qiskit.circuit import ParameterExpression
from qiskit.circuit.tools import pi_check

from qmltest.model import qasm
from qmltest.model.ir import Gate, ModelIR, to_circuit

# stdgates.inc gates that Qiskit's exporter writes as `name(params) q[a], q[b];` with no definition
PLAIN = frozenset("rx ry rz p h x y z s sdg t tdg sx cx cy cz cp crx cry crz ch swap ccx cswap".split())


def _inputs(g: Gate) -> frozenset[str]:
    return frozenset(p.name for v in g.operation.params if isinstance(v, ParameterExpression) for p in v.parameters)


def _sig(g: Gate) -> tuple:
    return (g.name, g.qubits, tuple(str(v) for v in g.operation.params))


def _qubits(qubits: tuple[int, ...]) -> str:
    return ", ".join(f"q[{q}]" for q in qubits)


class Splicer:
    """Exports mutants of one original; `text(ir)` is None where splicing cannot match Qiskit."""

    def __init__(self, original: ModelIR) -> None:
        self.ok = False
        self._by_id: dict[int, tuple[Gate, str]] = {}
        self._by_sig: dict[tuple, str] = {}
        self._inputs: dict[int, tuple[Gate, frozenset[str]]] = {}
        qc = to_circuit(original)
        text = qasm.dumps(qc)
        self._newline = text.endswith("\n")
        lines = text.rstrip("\n").split("\n")
        n = len(qc.data)
        if any(g.name == "measure" for g in original.gates) or len(lines) <= n:
            return  # mid-circuit measurements number their own register
        self.header, body = lines[:-n], lines[-n:]
        if any(line.lstrip().startswith("gate ") for line in self.header):
            return  # custom gate definitions: a mutant may need others, or fewer
        if any(not line.endswith(";") for line in body):
            return
        bits = [i for i, line in enumerate(self.header) if line.startswith("bit[") and line.endswith("] meas;")]
        if len(bits) != 1:
            return
        self._bits = bits[0]
        self.num_qubits = original.num_qubits
        self.barrier = f"barrier {_qubits(tuple(range(original.num_qubits)))};"
        k = 0
        for i, layer in enumerate(original.layers):
            if i:
                if body[k] != self.barrier:
                    return
                k += 1
            for g in layer.gates:
                self._by_id[id(g)] = (g, body[k])
                self._by_sig.setdefault(_sig(g), body[k])
                k += 1
        if body[k] != self.barrier or body[k + 1 :] != self._measures(original.measured):
            return
        self.used = self._used(original)
        self.ok = True

    @staticmethod
    def _measures(measured: tuple[int, ...]) -> list[str]:
        return [f"meas[{c}] = measure q[{q}];" for c, q in enumerate(measured)]

    def _used(self, ir: ModelIR) -> frozenset[str]:
        out: set[str] = set()
        for g in ir.gates:
            hit = self._inputs.get(id(g))
            if hit is None or hit[0] is not g:
                hit = self._inputs[id(g)] = (g, _inputs(g))
            out |= hit[1]
        return frozenset(out)

    def _line(self, g: Gate) -> str | None:
        hit = self._by_id.get(id(g))
        if hit is not None and hit[0] is g:
            return hit[1]
        line = self._by_sig.get(_sig(g))
        if line is not None:
            return line
        params = g.operation.params
        if g.name not in PLAIN or any(isinstance(v, ParameterExpression) for v in params):
            return None
        args = f"({', '.join(pi_check(v, output='qasm') for v in params)})" if params else ""
        return f"{g.name}{args} {_qubits(g.qubits)};"

    def text(self, ir: ModelIR) -> str | None:
        """The mutant's QASM3 text as Qiskit exports it, or None (then export with Qiskit)."""
        if not self.ok or ir.num_qubits != self.num_qubits or not ir.measured:
            return None
        if self._used(ir) != self.used or any(g.name == "measure" for g in ir.gates):
            return None
        out = list(self.header)
        out[self._bits] = f"bit[{len(ir.measured)}] meas;"
        for i, layer in enumerate(ir.layers):
            if i:
                out.append(self.barrier)
            for g in layer.gates:
                line = self._line(g)
                if line is None:
                    return None
                out.append(line)
        out.append(self.barrier)
        out.extend(self._measures(ir.measured))
        return "\n".join(out) + ("\n" if self._newline else "")
