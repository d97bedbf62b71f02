"""From a NoiseConfig to what Aer runs: a NoiseModel, circuit passes, and readout confusion.

Aer 0.18 has no error acting on spectator qubits, so crosstalk is a pass that appends coherent
ZZ rotations (gates, which keep Aer's fast paths) and optional Z errors after each two-qubit gate.
`save_probabilities` ignores readout errors, so readout confusion is applied to the probabilities.
"""

from __future__ import annotations

import numpy as np
from qiskit.circuit import QuantumCircuit
from qiskit_aer.noise import (
    NoiseModel,
    QuantumError,
    amplitude_damping_error,
    depolarizing_error,
    pauli_error,
    phase_damping_error,
    thermal_relaxation_error,
)

from qmltest.errors import InputError
from qmltest.noise.config import NoiseConfig

SKIP = {"barrier", "measure", "reset", "delay", "save_probabilities", "save_statevector"}


def _tensor_all(error: QuantumError, k: int) -> QuantumError:
    out = error
    for _ in range(k - 1):
        out = out.tensor(error)
    return out


_ERRORS: dict[tuple[str, int], QuantumError | None] = {}


def gate_error(cfg: NoiseConfig, num_qubits: int) -> QuantumError | None:
    """The composed channel after a gate on `num_qubits` qubits, or None when every rate is zero.

    Kept per (config content, size): the same error object across drift repetitions and calls
    lets the density-matrix engine convert it to a superoperator once."""
    key = (cfg.sha256, num_qubits)
    if cfg.sha256 and key in _ERRORS:
        return _ERRORS[key]
    err = _gate_error(cfg, num_qubits)
    if cfg.sha256:
        _ERRORS[key] = err
    return err


def _gate_error(cfg: NoiseConfig, num_qubits: int) -> QuantumError | None:
    parts: list[QuantumError] = []
    p = float(cfg.get("depolarizing", "p1" if num_qubits == 1 else "p2", 0.0) or 0.0)
    if p > 0:
        parts.append(depolarizing_error(p, num_qubits))
    single: list[QuantumError] = []
    for table, key, make in (
        ("bit_flip", "p", lambda v: pauli_error([("X", v), ("I", 1 - v)])),
        ("phase_flip", "p", lambda v: pauli_error([("Z", v), ("I", 1 - v)])),
        ("amplitude_damping", "gamma", amplitude_damping_error),
        ("phase_damping", "lambda", phase_damping_error),
    ):
        v = float(cfg.get(table, key, 0.0) or 0.0)
        if v > 0:
            single.append(make(v))
    if cfg.has("thermal_relaxation"):
        t1, t2 = float(cfg.get("thermal_relaxation", "t1")), float(cfg.get("thermal_relaxation", "t2"))
        time = float(cfg.get("thermal_relaxation", "time_1q" if num_qubits == 1 else "time_2q"))
        if time > 0:
            single.append(thermal_relaxation_error(t1, t2, time))
    parts += [_tensor_all(e, num_qubits) for e in single]
    if not parts:
        return None
    out = parts[0]
    for e in parts[1:]:
        out = out.compose(e)
    return out


def describe(cfg: NoiseConfig, num_qubits: int) -> str:
    """The channels `gate_error` composes after a gate on `num_qubits` qubits, in words."""
    parts = []
    p = float(cfg.get("depolarizing", "p1" if num_qubits == 1 else "p2", 0.0) or 0.0)
    if p > 0:
        parts.append(f"depolarizing({p:g})")
    for table, key in (
        ("bit_flip", "p"),
        ("phase_flip", "p"),
        ("amplitude_damping", "gamma"),
        ("phase_damping", "lambda"),
    ):
        v = float(cfg.get(table, key, 0.0) or 0.0)
        if v > 0:
            parts.append(f"{table}({v:g}) per qubit")
    if cfg.has("thermal_relaxation"):
        time = float(cfg.get("thermal_relaxation", "time_1q" if num_qubits == 1 else "time_2q"))
        if time > 0:
            parts.append(f"thermal_relaxation({time:g} s) per qubit")
    text = " + ".join(parts) or "none"
    if parts and cfg.mode == "random-insertion":
        text += f", with probability {cfg.get('noise', 'insertion_probability', 0.01)}"
    return text


def noise_model(
    cfg: NoiseConfig, circuit: QuantumCircuit, errors: dict[str, QuantumError] | None = None
) -> NoiseModel | None:
    """Channels on every gate of the circuit (mode 'gates'), or a backend's model. `errors`:
    `gate_errors(cfg, circuit)` when the caller has it already."""
    if cfg.has("backend"):
        return backend_model(str(cfg.get("backend", "fake")))
    errors = gate_errors(cfg, circuit) if errors is None else errors
    if not errors:
        return None
    model = NoiseModel()
    by_size: dict[int, list[str]] = {}
    for name, err in errors.items():
        by_size.setdefault(err.num_qubits, []).append(name)
    for names in by_size.values():  # one error object per size: gate_error(cfg, k)
        model.add_all_qubit_quantum_error(errors[names[0]], sorted(names))
    return model


def gate_errors(cfg: NoiseConfig, circuit: QuantumCircuit) -> dict[str, QuantumError]:
    """Mode 'gates': the channel after each instruction name of the circuit (by its size)."""
    if cfg.has("backend") or cfg.mode != "gates":
        return {}
    sizes: dict[str, int] = {}
    for inst in circuit.data:  # channels themselves (dephased measurements, crosstalk Z) get none
        if inst.operation.name not in SKIP and inst.operation.name != "quantum_channel":
            sizes.setdefault(inst.operation.name, inst.operation.num_qubits)
    errors = {k: gate_error(cfg, k) for k in set(sizes.values())}
    return {name: errors[k] for name, k in sizes.items() if errors[k] is not None}


def backend_model(name: str) -> NoiseModel:
    try:
        from qiskit_ibm_runtime import fake_provider  # optional dependency
    except ImportError:
        raise InputError(
            "[backend] needs the optional package qiskit-ibm-runtime: pip install 'qmltest[hardware]'"
        ) from None
    if not hasattr(fake_provider, name):
        raise InputError(f"backend.fake: no fake backend '{name}' in qiskit_ibm_runtime.fake_provider")
    return NoiseModel.from_backend(getattr(fake_provider, name)())


def coupling_edges(cfg: NoiseConfig, num_qubits: int) -> list[tuple[int, int]]:
    spec = cfg.get("crosstalk", "coupling", "line")
    if spec == "line":
        return [(q, q + 1) for q in range(num_qubits - 1)]
    if spec == "ring":
        return [(q, (q + 1) % num_qubits) for q in range(num_qubits)] if num_qubits > 2 else [(0, 1)]
    edges = [(int(a), int(b)) for a, b in spec]  # type: ignore[union-attr]
    bad = [e for e in edges if max(e) >= num_qubits]
    if bad:
        raise InputError(f"crosstalk.coupling: edge {bad[0]} outside the circuit's {num_qubits} qubits")
    return edges


def with_crosstalk(circuit: QuantumCircuit, cfg: NoiseConfig) -> QuantumCircuit:
    """After each two-qubit gate, RZZ(zz_angle) (and a Z error) between gate qubits and coupled spectators."""
    angle = float(cfg.get("crosstalk", "zz_angle", 0.0) or 0.0)
    pz = float(cfg.get("crosstalk", "pauli_p", 0.0) or 0.0)
    if not cfg.has("crosstalk") or (angle == 0 and pz == 0):
        return circuit
    neighbours: dict[int, set[int]] = {}
    for a, b in coupling_edges(cfg, circuit.num_qubits):
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    z_error = pauli_error([("Z", pz), ("I", 1 - pz)]) if pz > 0 else None
    out = circuit.copy_empty_like()
    for inst in circuit.data:
        out.append(inst)
        if inst.operation.name in SKIP or inst.operation.num_qubits != 2:
            continue
        gate_qubits = [circuit.find_bit(q).index for q in inst.qubits]
        for g in gate_qubits:
            for s in sorted(neighbours.get(g, set()) - set(gate_qubits)):
                if angle:
                    out.rzz(angle, g, s)
                if z_error is not None:
                    out.append(z_error.to_instruction(), [s])
    return out


def with_random_insertion(circuit: QuantumCircuit, cfg: NoiseConfig) -> QuantumCircuit:
    """QuanForge Sec. 4.7.3: after each gate, with probability p, the configured channel (seeded)."""
    if cfg.mode != "random-insertion":
        return circuit
    p = float(cfg.get("noise", "insertion_probability", 0.01))
    rng = np.random.default_rng(cfg.seed)
    errors = {k: gate_error(cfg, k) for k in (1, 2)}
    out = circuit.copy_empty_like()
    for inst in circuit.data:
        out.append(inst)
        k = inst.operation.num_qubits
        if inst.operation.name in SKIP or k not in errors or errors[k] is None:
            continue
        if rng.random() < p:
            out.append(errors[k].to_instruction(), inst.qubits)  # type: ignore[union-attr]
    return out


def apply_readout(probs: np.ndarray, cfg: NoiseConfig) -> np.ndarray:
    """Per-qubit confusion [[1-p01, p10], [p01, 1-p10]] applied to probabilities over m qubits."""
    p01, p10 = float(cfg.get("readout", "p01", 0.0) or 0.0), float(cfg.get("readout", "p10", 0.0) or 0.0)
    if p01 == 0 and p10 == 0:
        return probs
    conf = np.array([[1 - p01, p10], [p01, 1 - p10]])  # column j: what prepared j is read as
    m = int(np.log2(probs.shape[1]))
    return confused(probs, [conf.T] * m)


def confused(probs: np.ndarray, matrices: list[np.ndarray]) -> np.ndarray:
    """Apply per-qubit readout confusion P(read j | prepared i) (row i) to probabilities over m
    qubits (bit b of the index = qubit b of `matrices`)."""
    m = len(matrices)
    t = probs.reshape((len(probs),) + (2,) * m)
    for b, conf in enumerate(matrices):
        axis = m - b  # qubit b is axis m - b (axis 0 is the batch)
        t = np.moveaxis(np.tensordot(t, conf, axes=([axis], [0])), -1, axis)
    return t.reshape(probs.shape)


def is_trivial(cfg: NoiseConfig) -> bool:
    """True when the config changes nothing (every rate and angle zero): noise-free results apply."""
    if cfg.has("backend"):
        return False
    if gate_error(cfg, 1) is not None or gate_error(cfg, 2) is not None:
        return False
    for table, key in (
        ("crosstalk", "zz_angle"),
        ("crosstalk", "pauli_p"),
        ("drift", "sigma"),
        ("readout", "p01"),
        ("readout", "p10"),
    ):
        if float(cfg.get(table, key, 0.0) or 0.0) != 0.0:
            return False
    return True
