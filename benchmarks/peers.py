"""The same mutants x inputs with the peers, each the way a user of that library would write the
loop: the mutant's circuit built once in the library's own gates, its input angles set per input,
the probability of readout qubit 0 read back (the marginal the x % 2 readout needs, what qmltest
returns too). Used by `benchmarks/scale.py`, one engine per process (its peak RSS its own).

- Aer with batched binds: one AerSimulator run per mutant, every input bound as a parameter array,
  probabilities of qubit 0 saved (`qmltest.simulate.aer_jobs`, Aer's own threads).
- qulacs: a ParametricQuantumCircuit per mutant (native gates; input-dependent angles as parametric
  rotations, set per input), `update_quantum_state` then `get_zero_probability(0)`; one thread or
  all cores (OMP_NUM_THREADS, set by the caller before qulacs loads).
- PennyLane lightning.qubit: a QNode per mutant with the same gates, the inputs broadcast as one
  batch of parameters, `qml.probs(wires=[0])`.
Each peer's circuit is built before the clock starts (a user's own mutant would be written in the
library already); qmltest's time includes making each mutant's program. Every peer's probabilities
are checked against qmltest's to 1e-9 on the first mutant.
"""

from __future__ import annotations

import numpy as np

from qmltest.simulate import program, statevector

ONE_QUBIT = {"h": "H", "x": "X", "y": "Y", "z": "Z", "s": "S", "sdg": "Sdag", "t": "T", "tdg": "Tdag", "sx": "sqrtX"}
TWO_QUBIT = {"cx": "CNOT", "cz": "CZ", "swap": "SWAP"}
ROTATIONS = {"rx": "RX", "ry": "RY", "rz": "RZ", "p": "RZ", "u1": "RZ"}  # p = rz up to a global phase


def _gates(job: program.Circuit, encoded: np.ndarray) -> list[tuple[str, tuple[int, ...], object]]:
    """(kind, qubits, value) per gate of the program's circuit: kind a native name, 'rot:NAME' with
    its angles per input (N,), or 'dense' with a fixed matrix."""
    from qiskit.quantum_info import Operator

    values = program.values(job, encoded)
    circuit = job.circuit
    out = []
    for inst in circuit.data:
        op, qubits = inst.operation, tuple(circuit.find_bit(q).index for q in inst.qubits)
        if op.name in ("barrier", "measure"):
            continue
        if op.name in ONE_QUBIT or op.name in TWO_QUBIT:
            out.append((op.name, qubits, None))
        elif op.name in ROTATIONS:
            angle = np.broadcast_to(statevector.evaluate(op.params[0], values), (len(encoded),)).astype(float)
            out.append((f"rot:{op.name}", qubits, angle))
        elif not op.is_parameterized():
            out.append(("dense", qubits, np.asarray(Operator(op).data, dtype=complex)))
        else:
            raise NotImplementedError(f"no peer form for the input-dependent gate {op.name}")
    return out


def qulacs_probs(job: program.Circuit, encoded: np.ndarray):
    """A function giving P(qubit 0 = 0), P(qubit 0 = 1) per input by qulacs (the circuit built first,
    outside the clock)."""
    from qulacs import ParametricQuantumCircuit, QuantumState
    from qulacs.gate import DenseMatrix

    n = job.num_qubits
    circuit, params = ParametricQuantumCircuit(n), []
    for kind, qubits, value in _gates(job, encoded):
        if kind.startswith("rot:"):
            name = ROTATIONS[kind[4:]]
            angles = value  # type: ignore[assignment]
            if np.all(angles == angles[0]):  # a weight: a fixed rotation (qulacs' sign is the opposite)
                getattr(circuit, f"add_{name}_gate")(qubits[0], -float(angles[0]))
            else:
                getattr(circuit, f"add_parametric_{name}_gate")(qubits[0], 0.0)
                params.append(-angles)
        elif kind == "dense":
            circuit.add_gate(DenseMatrix(list(qubits), value))
        elif kind in TWO_QUBIT:
            getattr(circuit, f"add_{TWO_QUBIT[kind]}_gate")(*qubits)
        else:
            getattr(circuit, f"add_{ONE_QUBIT[kind]}_gate")(qubits[0])
    state = QuantumState(n)

    def run() -> np.ndarray:
        out = np.empty((len(encoded), 2))
        for i in range(len(encoded)):
            for k, angles in enumerate(params):
                circuit.set_parameter(k, float(angles[i]))
            state.set_zero_state()
            circuit.update_quantum_state(state)
            p0 = state.get_zero_probability(0)
            out[i] = (p0, 1.0 - p0)
        return out

    return run


def lightning_probs(job: program.Circuit, encoded: np.ndarray):
    """A function giving P(qubit 0 = 0), P(qubit 0 = 1) per input by PennyLane's lightning.qubit,
    the inputs broadcast (the QNode built first, outside the clock)."""
    import pennylane as qml

    n = job.num_qubits
    gates = _gates(job, encoded)
    names = {"h": qml.Hadamard, "x": qml.PauliX, "y": qml.PauliY, "z": qml.PauliZ, "s": qml.S, "t": qml.T, "sx": qml.SX}
    rot = {"rx": qml.RX, "ry": qml.RY, "rz": qml.RZ, "p": qml.PhaseShift, "u1": qml.PhaseShift}
    two = {"cx": qml.CNOT, "cz": qml.CZ, "swap": qml.SWAP}
    wires = lambda qubits: [n - 1 - q for q in qubits]  # noqa: E731  (PennyLane's wire 0 is the top bit)

    @qml.qnode(qml.device("lightning.qubit", wires=n))
    def run(*angles):
        k = 0
        for kind, qubits, value in gates:
            if kind.startswith("rot:"):
                rot[kind[4:]](angles[k], wires=wires(qubits))
                k += 1
            elif kind == "dense":
                qml.QubitUnitary(value, wires=wires(qubits)[::-1])
            elif kind in two:
                two[kind](wires=wires(qubits))
            elif kind in ("sdg", "tdg"):
                qml.adjoint(names[kind[0]])(wires=wires(qubits))
            else:
                names[kind](wires=wires(qubits))
        return qml.probs(wires=[n - 1])

    args = [value for kind, _, value in gates if kind.startswith("rot:")]
    return lambda: np.asarray(run(*args), dtype=float).reshape(len(encoded), 2)


def aer_probs(job: program.Circuit, encoded: np.ndarray):
    """A function giving P(qubit 0) per input by Aer with batched binds, one run per mutant (the
    circuit transpiled first, outside the clock)."""
    from qmltest.simulate import aer_jobs

    qc = job.circuit.copy()
    qc.save_probabilities(qubits=[0])
    sim = aer_jobs.batch_simulator(len(encoded))
    tqc = aer_jobs.compiled(qc, sim)
    inputs = list(job.inputs)
    return lambda: aer_jobs._bound(sim, tqc, inputs, np.asarray(encoded, dtype=float))


PEERS = {"aer": aer_probs, "qulacs": qulacs_probs, "lightning": lightning_probs}
