"""A model on a fake IBM device (`fake:NAME` targets, `[backend] fake = NAME` configs): transpiled
to the device as a user would run it, simulated with the device's noise, read out through the
final layout.

The circuit (measurement-free, with the readout's basis changes) is transpiled once per model and
device with a seeded preset pass manager (optimization level 1, `seed_transpiler` = the config's
seed): layout, routing and the device's basis gates. The measured logical qubits are read on the
physical qubits the final layout puts them on; forgetting that is qiskit-machine-learning #1040's
mistake. Aer runs it with the device's gate errors (`NoiseModel.from_backend`: depolarizing and
thermal relaxation from the backend's properties) on the active physical qubits only
(`Transpiled.compact`, made once with the transpiled circuit).
The device's readout error, which Aer applies to measure instructions only, is applied to the
exact probabilities as each measured physical qubit's confusion matrix from `NoiseModel.from_backend`.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from qiskit import QuantumCircuit
from qiskit.circuit import Parameter

from qmltest.errors import InputError
from qmltest.noise import build
from qmltest.simulate import aer_jobs as aer
from qmltest.simulate import program
from qmltest.simulate.memory import density_fits

TRANSPILED: OrderedDict[tuple, Transpiled] = OrderedDict()
CACHE = 16  # transpiled circuits kept (a mutation run asks for the same few again and again)


@dataclass(frozen=True)
class Transpiled:
    circuit: QuantumCircuit
    measured: tuple[int, ...]  # physical qubits of the measured logical qubits, in readout order
    layout: tuple[int, ...]  # initial layout: physical qubit of each logical qubit
    physical: tuple[int, ...]  # the active physical qubits (touched or read), ascending
    compact: QuantumCircuit  # `circuit` on `physical` alone, relabelled 0..k-1 in that order

    @property
    def readout(self) -> list[int]:
        """Positions of the measured physical qubits in `compact`."""
        return [self.physical.index(q) for q in self.measured]


def backend(name: str) -> object:
    """The fake device `name` of qiskit-ibm-runtime (one line, exit 2, without the extra)."""
    try:
        from qiskit_ibm_runtime import fake_provider
    except ImportError:
        raise InputError("fake: targets need qiskit-ibm-runtime: pip install 'qmltest[hardware]'") from None
    if not name.startswith("Fake") or not hasattr(fake_provider, name):
        raise InputError(f"unknown fake backend '{name}' (qiskit_ibm_runtime.fake_provider has no such device)")
    return _device(name)


_DEVICES: dict[str, object] = {}


def _device(name: str) -> object:
    from qiskit_ibm_runtime import fake_provider

    if name not in _DEVICES:
        _DEVICES[name] = getattr(fake_provider, name)()
    return _DEVICES[name]


def transpiled(circuit: QuantumCircuit, measured: list[int], name: str, seed: int) -> Transpiled:
    """The circuit on device `name`: seeded layout and routing, measured qubits mapped through the
    final layout; a model wider than the device is one line, exit 2."""
    from qiskit import qasm3
    from qiskit.transpiler import generate_preset_pass_manager

    dev = backend(name)
    if circuit.num_qubits > dev.num_qubits:  # type: ignore[attr-defined]
        raise InputError(
            f"the model has {circuit.num_qubits} qubits but {name} has {dev.num_qubits}"  # type: ignore[attr-defined]
        )
    key = (qasm3.dumps(circuit), tuple(measured), name, seed)
    if key in TRANSPILED:
        TRANSPILED.move_to_end(key)
        return TRANSPILED[key]  # its Parameters are the first load's: `probabilities` binds by name
    pm = generate_preset_pass_manager(optimization_level=1, backend=dev, seed_transpiler=seed)
    tqc = pm.run(circuit)
    final = tqc.layout.final_index_layout()  # logical qubit -> physical qubit after routing
    initial = tqc.layout.initial_index_layout()
    read = tuple(final[q] for q in measured)
    made = Transpiled(tqc, read, tuple(initial[: circuit.num_qubits]), *_compact(tqc, read))
    TRANSPILED[key] = made
    while len(TRANSPILED) > CACHE:
        TRANSPILED.popitem(last=False)
    return made


def readout_confusion(name: str, qubits: tuple[int, ...]) -> list[np.ndarray]:
    """Per physical qubit, the 2x2 matrix P(read j | prepared i) of the device's readout error
    (identity where the backend states none)."""
    found = _readout_errors(name)
    return [found.get((q,), np.eye(2)) for q in qubits]


@functools.cache
def _noise_model(name: str) -> object:
    """The device's NoiseModel.from_backend, built once per device (5 s for a 133-qubit device)."""
    from qiskit_aer.noise import NoiseModel

    return NoiseModel.from_backend(backend(name))


@functools.cache
def _readout_errors(name: str) -> dict[tuple[int, ...], np.ndarray]:
    """The device's readout errors by qubit, read once per device: building its NoiseModel took
    0.14-0.31 s, paid on every call (every mutant and null copy) before."""
    found = {}
    for err in _noise_model(name).to_dict().get("errors", []):  # type: ignore[attr-defined]
        if err.get("type") == "roerror":
            for gq in err.get("gate_qubits", []):
                found[tuple(gq)] = np.asarray(err["probabilities"], dtype=float)
    return found


def _compact(tqc: QuantumCircuit, read: tuple[int, ...]) -> tuple[tuple[int, ...], QuantumCircuit]:
    """The active physical qubits and the circuit on them alone (relabelled 0..k-1, in order): Aer's
    per-run cost grows with the device's noise model, not the circuit (a 4-qubit model on
    FakeTorino's 133 qubits cost 1.2 s per run, on FakeManilaV2's 5 about 0.1 s)."""
    physical = tuple(sorted({tqc.find_bit(q).index for inst in tqc.data for q in inst.qubits} | set(read)))
    index = {p: i for i, p in enumerate(physical)}
    out = QuantumCircuit(len(physical), global_phase=tqc.global_phase)
    for inst in tqc.data:
        out.append(inst.operation, [index[tqc.find_bit(q).index] for q in inst.qubits])
    return physical, out


@functools.cache
def _simulator(name: str, physical: tuple[int, ...], density: bool, seed: int) -> object:
    """Aer with the device's gate errors (depolarizing and thermal relaxation, as `from_backend`
    builds them) restricted to `physical` and relabelled like `Transpiled.compact`; once per active set."""
    from qiskit_aer import AerSimulator
    from qiskit_aer.noise import NoiseModel

    full = _noise_model(name)
    index = {p: i for i, p in enumerate(physical)}
    local = NoiseModel(basis_gates=full.basis_gates)  # type: ignore[attr-defined]
    for instr, err in full._default_quantum_errors.items():  # type: ignore[attr-defined]
        local.add_all_qubit_quantum_error(err, instr)
    for instr, by_qubits in full._local_quantum_errors.items():  # type: ignore[attr-defined]
        for qubits, err in by_qubits.items():
            if all(q in index for q in qubits):
                local.add_quantum_error(err, instr, [index[q] for q in qubits])
    return AerSimulator(method="density_matrix" if density else "statevector", noise_model=local, seed_simulator=seed)


def probabilities(
    circuit: QuantumCircuit,
    measured: list[int],
    inputs: list[Parameter],
    encoded: np.ndarray,
    amplitude: bool,
    name: str,
    seed: int,
    trajectories: int = 200,
) -> np.ndarray:
    """Probabilities (N, 2^m) over the measured logical qubits, on the device (module docstring)."""

    if amplitude:
        raise InputError(
            "fake: targets transpile the model's circuit; an amplitude-encoded model's state is prepared "
            "outside it, so it cannot be laid out on a device"
        )
    t = transpiled(circuit, measured, name, seed)
    density = density_fits(len(t.physical))
    sim = _simulator(name, t.physical, density, seed)
    shots = 1 if density else trajectories
    own = {p.name: p for p in t.compact.parameters}  # Qiskit parameters compare by identity, names by text
    bound = [own.get(p.name, p) for p in inputs]
    probs = aer.run_batch(sim, t.compact, t.readout, bound, encoded, False, density, shots, transpiled=True)
    return build.confused(probs, readout_confusion(name, t.measured))


def describe(model: object, cfg: object) -> dict | None:
    """What a report records of a device target: the device, its calibration date, the layout
    (physical qubit per logical qubit), the physical readout qubits, the transpiled gate counts;
    None for any other noise config."""
    if cfg is None or not cfg.has("backend"):  # type: ignore[attr-defined]
        return None
    name = str(cfg.get("backend", "fake"))  # type: ignore[attr-defined]
    job = program.of_model(model)
    if model.amplitude:  # type: ignore[attr-defined]
        return {"device": name}
    first = job.groups[0] if job.groups else job  # several bases: the layout of the first (they share the body)
    t = transpiled(first.circuit, list(job.measured), name, cfg.seed)  # type: ignore[attr-defined]
    dev = backend(name)
    props = dev.properties() if hasattr(dev, "properties") else None  # type: ignore[attr-defined]
    when = getattr(props, "last_update_date", None)
    return {
        "device": name,
        "device_qubits": int(dev.num_qubits),  # type: ignore[attr-defined]
        "calibration": None if when is None else str(when),
        "layout": list(t.layout),
        "readout_physical_qubits": list(t.measured),
        "gates": {k: int(v) for k, v in sorted(t.circuit.count_ops().items())},
        "transpiler_seed": cfg.seed,  # type: ignore[attr-defined]
    }
