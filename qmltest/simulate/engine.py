"""The engine: exact probability vectors or shot counts for one circuit and a batch of inputs.

Backends: ``numpy`` (batched statevector, the fast path for small circuits) and ``aer`` (Qiskit Aer,
the reference), chosen by `backend` (``auto`` by default). Noise-free shots are drawn from the
exact distribution (multinomial), so repeated predictions cost no extra simulation.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cached_property

import numpy as np
from qiskit.circuit import Parameter, QuantumCircuit

from qmltest.errors import InputError
from qmltest.simulate import aer, statevector
from qmltest.simulate import backend as backend_mod

MAX_STATE_BYTES = 8 * 2**30
"""Refuse a job whose single statevector working set would exceed this (16 bytes x 2^n x 3)."""
CHUNK_BYTES = 64 * 2**20
"""Working set of one batch (three states). Small enough that every state array stays under
glibc's 32 MiB mmap ceiling and is reused from the heap: a fresh mapping costs a page fault per
4 KiB on first touch, and at 16 qubits 85-input batches ran 13-20 ms per input, 21-input ones 10.5."""


class Circuit:
    """What the engine needs: a measurement-free circuit, readout qubits, feature parameters.

    A model's job is built from compiled ops and makes its QuantumCircuit only when a path needs
    one (Aer, noise): building a mutant's circuit took longer than simulating it exactly.
    """

    def __init__(
        self,
        circuit: QuantumCircuit | None,
        measured: tuple[int, ...],
        inputs: tuple[Parameter, ...],
        amplitude: bool = False,
        boundaries: tuple[int, ...] = (),  # op indices of layer starts: fusion never crosses them
        *,
        build: Callable[[], QuantumCircuit] | None = None,
        ops: list[statevector.Op] | None = None,
        num_qubits: int | None = None,
        groups: tuple[Circuit, ...] = (),
    ) -> None:
        if circuit is None and (build is None or ops is None or num_qubits is None):
            raise ValueError("a Circuit without a circuit needs build, ops and num_qubits")
        self._circuit, self._build = circuit, build
        self.measured, self.inputs = tuple(measured), tuple(inputs)
        self.amplitude, self.boundaries = amplitude, tuple(boundaries)
        self._num_qubits = circuit.num_qubits if circuit is not None else num_qubits
        self.groups = tuple(groups)
        """Several measurement bases (non-commuting observables): one job per basis, each this
        program with its basis tail; the outputs are their probabilities side by side, each / G."""
        if ops is not None:
            self.__dict__["ops"] = ops

    @property
    def circuit(self) -> QuantumCircuit:
        if self._circuit is None:
            assert self._build is not None
            self._circuit = self._build()
        return self._circuit

    @property
    def num_qubits(self) -> int:
        return int(self._num_qubits)  # type: ignore[arg-type]

    @cached_property
    def ops(self) -> list[statevector.Op]:
        """The compiled program, built once per job (fuzzing calls the engine thousands of times)."""
        return statevector.compile_circuit(self.circuit)

    @cached_property
    def parameters(self) -> frozenset[Parameter]:
        """Parameters some op reads."""
        return frozenset().union(*(op.params for op in self.ops))

    def with_measured(self, measured: tuple[int, ...]) -> Circuit:
        """The same program read out on other qubits (sharing the compiled ops)."""
        return Circuit(
            self._circuit,
            measured,
            self.inputs,
            self.amplitude,
            self.boundaries,
            build=self._build,
            ops=self.ops,
            num_qubits=self.num_qubits,
            groups=tuple(g.with_measured(measured) for g in self.groups),
        )


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


def probabilities(job: Circuit, encoded: np.ndarray, backend: str | None = None, noise=None) -> np.ndarray:
    """Exact probabilities (N, 2^m) over the measured qubits for encoded inputs.

    `encoded` is (N, F) feature values for angle encoding, or (N, 2^n) states for amplitude.
    With a NoiseConfig `noise` (not all-zero), the noisy probabilities from Aer. `backend`: numpy,
    aer or auto; None takes the process's choice (`backend.current`, auto by default).
    """
    encoded = np.asarray(encoded)
    if not job.amplitude and encoded.shape[1] != len(job.inputs):
        raise InputError(f"wrong feature count: the circuit has {len(job.inputs)} inputs, got {encoded.shape[1]}")
    if job.groups:  # each basis chosen with weight 1/G (readout.observable_columns reads them so)
        parts = [probabilities(g, encoded, backend, noise) for g in job.groups]
        return np.concatenate(parts, axis=1) / len(parts)
    inputs = list(job.inputs)
    used = job.parameters
    if not job.amplitude and any(p not in used for p in inputs):  # features no gate reads (Aer binds refuse them)
        keep = [i for i, p in enumerate(inputs) if p in used]
        inputs, aer_encoded = [inputs[i] for i in keep], encoded[:, keep]
    else:
        aer_encoded = encoded
    backend = backend_mod.for_job(backend, job)
    if noise is not None:
        from qmltest.noise.build import is_trivial
        from qmltest.simulate import noisy

        if not is_trivial(noise):
            return noisy.probabilities(
                job.circuit, list(job.measured), inputs, aer_encoded, job.amplitude, noise, backend
            )
    check_size(job.num_qubits)
    if backend == "gpu":
        return _device_probabilities(job, encoded)
    if backend == "aer":
        states = encoded if job.amplitude else None
        feats = None if job.amplitude else aer_encoded
        return aer.probabilities(job.circuit, list(job.measured), inputs, feats, states)
    n = job.num_qubits
    chunk = max(1, CHUNK_BYTES // required_bytes(n))
    starts = range(0, len(encoded), chunk)
    if not starts:
        return np.zeros((0, 2 ** len(job.measured)))
    # one batch at a time: two threads over the batches gained nothing on 2 cores (16 qubits,
    # 100 inputs: 6.8 against 6.8 ms per input): the passes are bound by memory bandwidth
    return np.concatenate([_numpy_batch(job, encoded[lo : lo + chunk]) for lo in starts])


def _numpy_batch(job: Circuit, encoded: np.ndarray) -> np.ndarray:
    """Probabilities of one batch on the numpy backend, states kept as columns throughout."""
    n, ops = job.num_qubits, job.ops
    if any(op.name == "dephase" for op in ops):
        psi0, values = _start(job, encoded)
        return statevector.probabilities_with_dephasing(ops, psi0, values, n, list(job.measured))
    state = start_columns(job, encoded)
    psi = statevector.run_columns(ops, state, _values(job, encoded), n, job.boundaries, zero=not job.amplitude)
    return statevector.marginal_probabilities(psi.T, list(job.measured), n)


def device_budget(xp: object, per_item: int, what: str, name: str = "gpu") -> int:
    """How many states of `per_item` bytes one batch holds: half the free device memory (CuPy), or
    CHUNK_BYTES on the host; one line, exit 2, when not even one fits."""
    from qmltest.simulate import arraykernel

    free = arraykernel.free_bytes(xp)  # type: ignore[arg-type]
    budget = CHUNK_BYTES if free is None else free // 2
    if per_item > budget:
        raise InputError(
            f"{what} needs {per_item / 2**30:.2f} GiB per input on the {name} backend, "
            f"but {budget / 2**30:.2f} GiB are free there"
        )
    return max(1, budget // per_item)


def _device_probabilities(job: Circuit, encoded: np.ndarray, name: str = "gpu") -> np.ndarray:
    """The array-API kernel (`arraykernel`) on CuPy ('gpu') or numpy, in batches that fit half the
    free device memory (state and matmul output: 2 x 16 x 2^n bytes per input)."""
    from qmltest.simulate import arraykernel

    xp = arraykernel.namespace(name)
    n = job.num_qubits
    chunk = device_budget(xp, 2 * 16 * 2**n, f"{n} qubits", name)
    out = []
    for lo in range(0, len(encoded), chunk):
        psi0, values = _start(job, encoded[lo : lo + chunk])
        psi = arraykernel.run(xp, job.ops, psi0, values, n)
        out.append(arraykernel.marginal(xp, psi, list(job.measured), n))
    return np.concatenate(out) if out else np.zeros((0, 2 ** len(job.measured)))


def probabilities_many(jobs: list[Circuit], encoded: np.ndarray, backend: str = "gpu") -> list[np.ndarray]:
    """Exact probabilities of several programs (a model's mutants) on the same encoded inputs, each
    as `probabilities` would return it, batched over mutants x inputs on the array kernel (CuPy for
    'gpu', numpy for 'numpy'): programs of one op signature, readout and encoding run as one batch
    (`arraykernel.run_many`). Programs the kernel does not take (several bases, mid-circuit
    measurements) run one by one on `backend`'s own path."""
    from qmltest.simulate import arraykernel

    out: list[np.ndarray | None] = [None] * len(jobs)
    groups: dict[tuple, list[int]] = {}
    for i, job in enumerate(jobs):
        if job.groups or not arraykernel.takes(job.ops):
            out[i] = probabilities(job, encoded, backend)
        else:
            key = (arraykernel.signature(job.ops), job.measured, job.amplitude, job.num_qubits)
            groups.setdefault(key, []).append(i)
    if groups:
        xp = arraykernel.namespace(backend)
        encoded = np.asarray(encoded)
    for (_, measured, _, n), members in groups.items():
        first = jobs[members[0]]
        if not first.amplitude and encoded.shape[1] != len(first.inputs):
            raise InputError(f"wrong feature count: the circuit has {len(first.inputs)} inputs, got {encoded.shape[1]}")
        check_size(n)
        rows = max(1, min(len(encoded), device_budget(xp, 2 * 16 * 2**n, f"{n} qubits", backend)))
        per = device_budget(xp, 2 * 16 * 2**n * rows, f"{n} qubits", backend)
        parts: dict[int, list[np.ndarray]] = {i: [] for i in members}
        for lo in range(0, len(encoded), rows):
            psi0 = _start(first, encoded[lo : lo + rows])[0]
            values: dict = {}
            for i in members:
                values.update(_values(jobs[i], encoded[lo : lo + rows]))
            for at in range(0, len(members), per):
                chosen = members[at : at + per]
                psi = arraykernel.run_many(xp, [jobs[i].ops for i in chosen], psi0, values, n)
                flat = xp.reshape(psi, (len(chosen) * len(psi0), 2**n))
                probs = arraykernel.marginal(xp, flat, list(measured), n).reshape(len(chosen), len(psi0), -1)
                for j, i in enumerate(chosen):
                    parts[i].append(probs[j])
        for i in members:
            out[i] = np.concatenate(parts[i]) if parts[i] else np.zeros((0, 2 ** len(measured)))
    assert all(p is not None for p in out)
    return out  # type: ignore[return-value]


def _values(job: Circuit, encoded: np.ndarray) -> dict:
    """Feature columns by parameter (angle encoding); amplitude inputs bind no parameters."""
    return {} if job.amplitude else statevector.feature_values(job.inputs, encoded)


def _start(job: Circuit, encoded: np.ndarray) -> tuple[np.ndarray, dict]:
    """Initial batch states as rows (N, 2^n), for the paths that take rows (dephasing, the array
    kernel), and the parameter values."""
    return np.ascontiguousarray(start_columns(job, encoded).T), _values(job, encoded)


def start_columns(job: Circuit, encoded: np.ndarray) -> np.ndarray:
    """Initial batch states as columns (2^n, N): |0...0> for angle encoding, else the inputs."""
    encoded = np.asarray(encoded)
    if job.amplitude:
        return np.ascontiguousarray(encoded.T, dtype=complex)
    state = np.zeros((2**job.num_qubits, len(encoded)), dtype=complex)
    state[0] = 1.0
    return state


def reusable(job: Circuit, encoded: np.ndarray) -> bool:
    """Prefix reuse applies to one-chunk, measurement-free numpy runs."""
    encoded = np.asarray(encoded)
    if job.groups or not job.boundaries or required_bytes(job.num_qubits) > MAX_STATE_BYTES:
        return False
    if any(op.name == "dephase" for op in job.ops):
        return False
    return len(encoded) <= max(1, CHUNK_BYTES // required_bytes(job.num_qubits))


def first_difference(a: list[statevector.Op], b: list[statevector.Op]) -> int:
    """Index of the first op where two programs differ (the shorter length when one is a prefix)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if not statevector.same_op(x, y):
            return i
    return min(len(a), len(b))


def sample_counts(probs: np.ndarray, shots: int, rng: np.random.Generator) -> np.ndarray:
    """Shot counts (N, 2^m) drawn from exact probabilities: one multinomial per input. A model
    read in G bases gives (N, G 2^m) rows: each shot picks its basis at random (weight 1/G), an
    unbiased estimate of every observable with shots / G per basis on average."""
    if shots <= 0:
        raise InputError(f"shots must be positive, got {shots}")
    p = np.clip(probs, 0.0, None)
    p = p / p.sum(axis=1, keepdims=True)
    return rng.multinomial(shots, p)
