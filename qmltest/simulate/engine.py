"""The engine: exact probability vectors or shot counts for one circuit and a batch of inputs.

Backends: ``numpy`` (batched statevector, the default fast path) and ``aer`` (Qiskit Aer, the
reference). Noise-free shots are drawn from the exact distribution (multinomial), so repeated
predictions cost no extra simulation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from qiskit.circuit import Parameter, QuantumCircuit

from qmltest.errors import InputError
from qmltest.simulate import aer, statevector

BACKENDS = ("numpy", "aer")
MAX_STATE_BYTES = 8 * 2**30
"""Refuse a job whose single statevector working set would exceed this (16 bytes x 2^n x 3)."""
CHUNK_BYTES = 256 * 2**20


@dataclass(frozen=True)
class Circuit:
    """What the engine needs: a measurement-free circuit, readout qubits, feature parameters."""

    circuit: QuantumCircuit
    measured: tuple[int, ...]
    inputs: tuple[Parameter, ...]
    amplitude: bool = False

    @property
    def num_qubits(self) -> int:
        return self.circuit.num_qubits

    @cached_property
    def ops(self) -> list[statevector.Op]:
        """The compiled program, built once per job (fuzzing calls the engine thousands of times)."""
        return statevector.compile_circuit(self.circuit)


def required_bytes(num_qubits: int, batch: int = 1) -> int:
    return 3 * 16 * (2**num_qubits) * batch


def available_bytes() -> int:
    """Memory this process can still use: MemAvailable from /proc/meminfo, else physical pages."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return MAX_STATE_BYTES


def check_size(num_qubits: int, method: str = "statevector", batch: int = 1) -> None:
    """Refuse before any work a job whose working set exceeds the simulator's limit or the machine's
    available memory (exit 2, naming both numbers), instead of a MemoryError halfway."""
    need = required_bytes(num_qubits, batch) if method == "statevector" else 3 * 16 * 4**num_qubits * batch
    limit = min(MAX_STATE_BYTES, int(0.8 * available_bytes()))
    if need > limit:
        raise InputError(
            f"{num_qubits} qubits need about {need / 2**30:.2f} GiB for the {method} method, "
            f"but {limit / 2**30:.2f} GiB are available: too many qubits for this simulator"
        )


def probabilities(job: Circuit, encoded: np.ndarray, backend: str = "numpy", noise=None) -> np.ndarray:
    """Exact probabilities (N, 2^m) over the measured qubits for encoded inputs.

    `encoded` is (N, F) feature values for angle encoding, or (N, 2^n) states for amplitude.
    With a NoiseConfig `noise` (not all-zero), the noisy probabilities from Aer.
    """
    encoded = np.asarray(encoded)
    if not job.amplitude and encoded.shape[1] != len(job.inputs):
        raise InputError(f"wrong feature count: the circuit has {len(job.inputs)} inputs, got {encoded.shape[1]}")
    inputs = list(job.inputs)
    used = set(job.circuit.parameters)
    if not job.amplitude and any(p not in used for p in inputs):  # features no gate reads (Aer binds refuse them)
        keep = [i for i, p in enumerate(inputs) if p in used]
        inputs, aer_encoded = [inputs[i] for i in keep], encoded[:, keep]
    else:
        aer_encoded = encoded
    if noise is not None:
        from qmltest.noise.build import is_trivial
        from qmltest.simulate import noisy

        if not is_trivial(noise):
            return noisy.probabilities(job.circuit, list(job.measured), inputs, aer_encoded, job.amplitude, noise)
    if backend not in BACKENDS:
        raise InputError(f"unknown backend '{backend}' (choose from {', '.join(BACKENDS)})")
    check_size(job.num_qubits)
    if backend == "aer":
        states = encoded if job.amplitude else None
        feats = None if job.amplitude else aer_encoded
        return aer.probabilities(job.circuit, list(job.measured), inputs, feats, states)
    ops = job.ops
    n = job.num_qubits
    chunk = max(1, CHUNK_BYTES // required_bytes(n))
    out = []
    for lo in range(0, len(encoded), chunk):
        part = encoded[lo : lo + chunk]
        if job.amplitude:
            psi0, values = part.astype(complex), {}
        else:
            psi0 = statevector.zero_states(len(part), n)
            values = {p: part[:, i] for i, p in enumerate(job.inputs)}
        if any(op.name == "dephase" for op in ops):
            out.append(statevector.probabilities_with_dephasing(ops, psi0, values, n, list(job.measured)))
            continue
        psi = statevector.run(ops, psi0, values, n)
        out.append(statevector.marginal_probabilities(psi, list(job.measured), n))
    if not out:
        return np.zeros((0, 2 ** len(job.measured)))
    return np.concatenate(out)


def sample_counts(probs: np.ndarray, shots: int, rng: np.random.Generator) -> np.ndarray:
    """Shot counts (N, 2^m) drawn from exact probabilities: one multinomial per input."""
    if shots <= 0:
        raise InputError(f"shots must be positive, got {shots}")
    p = np.clip(probs, 0.0, None)
    p = p / p.sum(axis=1, keepdims=True)
    return rng.multinomial(shots, p)
