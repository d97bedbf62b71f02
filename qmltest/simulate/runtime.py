"""`ibm:NAME` targets: shot counts from IBM hardware through qiskit-ibm-runtime's Sampler.

The model's circuit (one per measurement basis) gets measurements on its readout qubits, is
transpiled to the device with a seeded level-1 pass manager, and every input runs as one parameter
binding of one sampler PUB, so a round of N inputs is one job. `ibm:fake_manila` (any name of the
fake provider) runs this same code in Runtime's local testing mode on that fake device: what the
tests run, with no account. Real devices need an account saved with
`QiskitRuntimeService.save_account`; qmltest never reads or stores credentials itself.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
from qiskit import QuantumCircuit

from qmltest.errors import InputError
from qmltest.simulate import program


@functools.cache
def backend(name: str) -> object:
    """The device: a fake provider backend ('fake_*', local testing mode) or the account's device."""
    try:
        from qiskit_ibm_runtime import QiskitRuntimeService
        from qiskit_ibm_runtime.fake_provider import FakeProviderForBackendV2
    except ImportError:
        raise InputError("ibm: targets need qiskit-ibm-runtime: pip install 'qmltest[hardware]'") from None
    if name.startswith("fake_"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return FakeProviderForBackendV2().backend(name)
            except Exception:  # the provider raises QiskitBackendNotFoundError
                raise InputError(f"unknown fake device '{name}' (qiskit_ibm_runtime's fake provider)") from None
    try:
        service = QiskitRuntimeService()
    except Exception as exc:  # AccountNotFoundError and friends: no saved account, bad token
        raise InputError(
            f"ibm:{name}: no usable IBM Quantum account ({type(exc).__name__}); save one with "
            "QiskitRuntimeService.save_account, or try the code path with ibm:fake_manila"
        ) from None
    try:
        return service.backend(name)
    except Exception as exc:
        raise InputError(f"ibm:{name}: the account has no such device ({type(exc).__name__})") from None


def _sampler(dev: object, seed: int) -> object:
    """Runtime's sampler on the device (the client-side sampler where this Runtime has it)."""
    try:
        from qiskit_ibm_runtime.executor_sampler import Sampler
    except ImportError:  # qiskit-ibm-runtime < 0.50
        from qiskit_ibm_runtime import SamplerV2 as Sampler
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        sampler = Sampler(mode=dev)
    if getattr(dev, "name", "").startswith("fake_"):
        sampler.options.simulator.seed_simulator = seed  # local testing mode: reproducible counts
    return sampler


@functools.cache
def _isa(qasm: str, measured: tuple[int, ...], name: str, seed: int) -> QuantumCircuit:
    from qiskit import qasm3
    from qiskit.transpiler import generate_preset_pass_manager

    circuit = qasm3.loads(qasm)
    measuring = QuantumCircuit(circuit.num_qubits, len(measured))
    measuring.compose(circuit, inplace=True)
    measuring.measure(list(measured), list(range(len(measured))))
    dev = backend(name)
    if circuit.num_qubits > dev.num_qubits:  # type: ignore[attr-defined]
        raise InputError(f"the model has {circuit.num_qubits} qubits but {name} has {dev.num_qubits}")  # type: ignore[attr-defined]
    pm = generate_preset_pass_manager(optimization_level=1, backend=dev, seed_transpiler=seed)
    return pm.run(measuring)


def circuits(model: object, name: str, seed: int) -> list[QuantumCircuit]:
    """The model's device circuits, one per measurement basis, measured into bits 0..m-1."""
    from qiskit import qasm3

    if model.amplitude:  # type: ignore[attr-defined]
        raise InputError("ibm: targets run the model's circuit; an amplitude-encoded state is prepared outside it")
    job = program.of_model(model)  # type: ignore[attr-defined]
    measured = tuple(job.measured)
    return [_isa(qasm3.dumps(g.circuit), measured, name, seed) for g in (job.groups or (job,))]


def counts(model: object, encoded: np.ndarray, name: str, shots: int, seed: int) -> np.ndarray:
    """Counts (N, G 2^m): `shots` per input in each of the G measurement bases, from one job."""
    isa = circuits(model, name, seed)
    values = {p.name: encoded[:, i] for i, p in enumerate(program.of_model(model).inputs)}  # type: ignore[attr-defined]
    pubs = []
    for c in isa:
        cols = [values[p.name] for p in c.parameters]
        pubs.append((c, np.stack(cols, axis=1) if cols else np.zeros((len(encoded), 0)), shots))
    result = _sampler(backend(name), seed).run(pubs).result()
    size = 2 ** len(program.of_model(model).measured)  # type: ignore[attr-defined]
    out = np.zeros((len(encoded), len(isa) * size), dtype=np.int64)
    for g, (c, pub) in enumerate(zip(isa, result)):
        bits = getattr(pub.data, c.cregs[0].name)
        for i in range(len(encoded)):
            for state, k in bits.get_int_counts(loc=i).items():
                out[i, g * size + state] = k
    return out


def describe(model: object, name: str, seed: int) -> dict:
    """The device, its calibration date, the layout and gate counts of the first basis's circuit."""
    isa = circuits(model, name, seed)
    dev = backend(name)
    props = dev.properties() if hasattr(dev, "properties") else None  # type: ignore[attr-defined]
    when = getattr(props, "last_update_date", None)
    layout = isa[0].layout
    return {
        "device": name,
        "runtime": "local testing mode" if name.startswith("fake_") else "IBM Quantum",
        "device_qubits": int(dev.num_qubits),  # type: ignore[attr-defined]
        "calibration": None if when is None else str(when),
        "layout": [] if layout is None else list(layout.initial_index_layout()[: model.ir.num_qubits]),  # type: ignore[attr-defined]
        "gates": {k: int(v) for k, v in sorted(isa[0].count_ops().items())},
        "measurement_bases": len(isa),
        "transpiler_seed": seed,
    }
