"""Qiskit Aer, the reference simulator: one transpile and one run per circuit for a whole batch."""

from __future__ import annotations

from typing import Any

import numpy as np
from qiskit.circuit import Parameter, QuantumCircuit
from qiskit_aer import AerSimulator

from qmltest.errors import SimulatorError
from qmltest.simulate.statevector import marginal_probabilities

BINDABLE = frozenset({"rx", "ry", "rz", "p", "u1", "rxx", "ryy", "rzz"})
"""Gates whose symbolic angles Aer's parameter_binds handles (checked against Statevector in tests)."""


def _binds_supported(circuit: QuantumCircuit) -> bool:
    return all(
        inst.operation.name in BINDABLE
        for inst in circuit.data
        if any(getattr(p, "parameters", None) for p in inst.operation.params)
    )


_PASS_MANAGERS: dict[tuple, object] = {}


def compiled(circuit: QuantumCircuit | list[QuantumCircuit], sim: AerSimulator) -> Any:
    """The circuit(s) transpiled at level 0 for Aer by a pass manager kept per method and basis (a
    noise model narrows the basis to the gates its errors attach to): building one cost 0.15 s per
    call, more than a 16-qubit mutant's 100 inputs take to set up. (Running the circuit
    untranspiled, though every gate is native, made Aer 1.5x slower.)"""
    from qiskit.transpiler import generate_preset_pass_manager

    key = (str(sim.options.method), tuple(sorted(sim.configuration().basis_gates)))
    pm = _PASS_MANAGERS.get(key)
    if pm is None:
        if len(_PASS_MANAGERS) >= 16:
            _PASS_MANAGERS.clear()
        pm = _PASS_MANAGERS[key] = generate_preset_pass_manager(optimization_level=0, backend=sim)
    return pm.run(circuit)  # type: ignore[attr-defined]


def dephased(circuit: QuantumCircuit) -> tuple[QuantumCircuit, bool]:
    """Mid-circuit measurements whose outcome is unused become complete dephasing (a Z error with
    probability 1/2), which Aer's density-matrix method averages instead of sampling."""
    if not any(inst.operation.name == "measure" for inst in circuit.data):
        return circuit, False
    from qiskit_aer.noise import pauli_error

    dephase = pauli_error([("Z", 0.5), ("I", 0.5)]).to_instruction()
    out = QuantumCircuit(circuit.num_qubits)
    for inst in circuit.data:
        if inst.operation.name == "measure":
            out.append(dephase, [circuit.find_bit(inst.qubits[0]).index])
        else:
            out.append(inst.operation, [circuit.find_bit(q).index for q in inst.qubits])
    return out, True


def probabilities(
    circuit: QuantumCircuit,
    measured: list[int],
    inputs: list[Parameter],
    features: np.ndarray | None,
    states: np.ndarray | None,
) -> np.ndarray:
    """Exact probabilities over `measured` for each input.

    Angle encoding: `features` (N, F) bound to `inputs` by parameter binds in a single Aer run.
    Amplitude encoding: `states` (N, 2^n); the circuit's unitary is computed once by Aer and
    applied to the batch (the ansatz does not depend on the input).
    """
    circuit, mixed = dephased(circuit)
    try:
        if mixed:
            encoded = states if states is not None else features
            sim = AerSimulator(method="density_matrix")
            return run_batch(sim, circuit, measured, inputs, encoded, states is not None, True)
        if states is not None:
            qc = circuit.copy()
            qc.save_unitary()
            sim = AerSimulator(method="unitary")
            u = np.asarray(sim.run(compiled(qc, sim)).result().get_unitary(), dtype=complex)
            psi = states @ u.T
            return marginal_probabilities(psi, measured, circuit.num_qubits)
        qc = circuit.copy()
        qc.save_probabilities(qubits=measured)
        sim = batch_simulator(len(features) if features is not None else 1)
        tqc = compiled(qc, sim)
        assert features is not None
        if not inputs:
            res = sim.run(tqc).result()
            return np.tile(np.asarray(res.data(0)["probabilities"]), (len(features), 1))
        if _binds_supported(tqc):
            rows = max(BIND_MIN, BIND_BYTES // (16 << circuit.num_qubits))
            if len(features) > rows:  # Aer keeps every bind's state until the run ends: chunks of them
                return np.concatenate(
                    [_bound(sim, tqc, inputs, features[i : i + rows]) for i in range(0, len(features), rows)]
                )
            return _bound(sim, tqc, inputs, features)
        else:
            # Aer 0.18's parameter_binds silently drops results for parameterized controlled rotations
            # (crx, cp, ...): bind in Qiskit instead; still one transpile and one Aer run for the batch.
            bound = [tqc.assign_parameters(dict(zip(inputs, row)), inplace=False) for row in features]
            res = sim.run(bound).result()
        return np.array([np.asarray(res.data(i)["probabilities"]) for i in range(len(features))])
    except SimulatorError:
        raise
    except Exception as exc:
        raise SimulatorError(f"Aer failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc


BIND_BYTES = 256 * 2**20
"""States one Aer run of parameter binds may hold: 100 binds of a 20-qubit circuit held 1.76 GB
(a 16 MiB state each until the run ended); chunks of 16 hold 0.3 GB at the same speed."""
BIND_MIN = 8


def _bound(sim: AerSimulator, tqc: Any, inputs: list[Parameter], features: np.ndarray) -> np.ndarray:
    """Probabilities of one Aer run binding `features` (rows) to `inputs`."""
    binds = [{p: features[:, i].tolist() for i, p in enumerate(inputs)}]
    res = sim.run([tqc], parameter_binds=binds).result()
    return np.array([np.asarray(res.data(i)["probabilities"]) for i in range(len(features))])


def batch_simulator(inputs: int) -> AerSimulator:
    """A statevector simulator for a batch of parameter binds: several inputs run as parallel
    experiments, one thread each (on 2 cores, 16-qubit z_feature_map + real_amplitudes: 22 -> 10 ms
    per input, efficient_su2: 115 -> 49 ms; Aer's default splits each state over the threads)."""
    if inputs > 1:
        return AerSimulator(method="statevector", max_parallel_experiments=0)
    return AerSimulator(method="statevector")


def run_batch(
    sim: AerSimulator,
    circuit: QuantumCircuit,
    measured: list[int],
    inputs: list[Parameter],
    encoded: np.ndarray,
    amplitude: bool,
    density: bool,
    shots: int = 1,
    transpiled: bool = False,
) -> np.ndarray:
    """Averaged probabilities per input in one Aer run: amplitude inputs start from their state
    (set_density_matrix / set_statevector), angle inputs are bound into the transpiled circuit
    (`transpiled`: the circuit is already in the simulator's basis, as a device's is)."""
    body = circuit.copy()
    body.save_probabilities(qubits=measured)
    if amplitude:
        runs = []
        for state in encoded:
            head = QuantumCircuit(circuit.num_qubits)
            if density:
                head.set_density_matrix(np.outer(state, state.conj()))
            else:
                head.set_statevector(state)
            runs.append(head.compose(body))
        experiments = compiled(runs, sim)
    else:
        tqc = body if transpiled else compiled(body, sim)
        experiments = [tqc.assign_parameters(dict(zip(inputs, row)), inplace=False) for row in encoded]
    res = sim.run(experiments, shots=shots).result()
    return np.array([np.asarray(res.data(i)["probabilities"]) for i in range(len(encoded))])
