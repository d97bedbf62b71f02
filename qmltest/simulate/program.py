"""A program: what a backend runs for a model (compiled ops, readout qubits, feature parameters).

`of_model` turns a model (data: IR, manifest) into its program once per model object; the
compiled job is kept in the model's own memo, so it lives exactly as long as the model and
nothing keys it by `id()`. The helpers here (start states, feature columns, prefix reuse rules)
are shared by every backend.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cached_property

import numpy as np
from qiskit.circuit import Parameter, QuantumCircuit

from qmltest.errors import InputError
from qmltest.model import ir as irmod
from qmltest.model import readout
from qmltest.simulate import memory, statevector

REGISTERS = ("readout", "all", "classes")


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


def content_key(job: Circuit) -> str:
    """A digest of what the program computes (every op's qubits and matrix or angle, the readout,
    the encoding): two programs with one key give the same probabilities on the same inputs."""
    h = hashlib.sha256(repr((job.num_qubits, job.measured, job.amplitude, len(job.groups))).encode())
    for op in job.ops:
        h.update(repr((op.qubits, op.name)).encode())
        if op.matrix is not None:
            h.update(np.ascontiguousarray(op.matrix).tobytes())
        else:
            h.update(repr((str(op.angle), sorted(str(p.uuid) for p in op.params))).encode())
    return h.hexdigest()


def bound_inputs(job: Circuit, encoded: np.ndarray) -> tuple[list[Parameter], np.ndarray]:
    """The inputs some gate reads and their columns (Aer's parameter binds refuse unused ones);
    amplitude inputs pass through."""
    inputs = list(job.inputs)
    used = job.parameters
    if job.amplitude or all(p in used for p in inputs):
        return inputs, encoded
    keep = [i for i, p in enumerate(inputs) if p in used]
    return [inputs[i] for i in keep], encoded[:, keep]


def values(job: Circuit, encoded: np.ndarray) -> dict:
    """Feature columns by parameter (angle encoding); amplitude inputs bind no parameters."""
    return {} if job.amplitude else statevector.feature_values(job.inputs, encoded)


def start_rows(job: Circuit, encoded: np.ndarray) -> tuple[np.ndarray, dict]:
    """Initial batch states as rows (N, 2^n), for the paths that take rows (dephasing, the array
    kernel), and the parameter values."""
    return np.ascontiguousarray(start_columns(job, encoded).T), values(job, encoded)


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
    if job.groups or not job.boundaries or memory.required_bytes(job.num_qubits) > memory.MAX_STATE_BYTES:
        return False
    if any(op.name == "dephase" for op in job.ops):
        return False
    return len(encoded) <= max(1, memory.CHUNK_BYTES // memory.required_bytes(job.num_qubits))


def first_difference(a: list[statevector.Op], b: list[statevector.Op]) -> int:
    """Index of the first op where two programs differ (the shorter length when one is a prefix)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if not statevector.same_op(x, y):
            return i
    return min(len(a), len(b))


def appended(circuit: QuantumCircuit, tail: list[tuple[str, int]]) -> QuantumCircuit:
    """`circuit` with a readout's basis changes appended (X/Y observables measured as Z)."""
    for name, q in tail:
        getattr(circuit, name)(q)
    return circuit


def boundaries(model: object) -> tuple[int, ...]:
    """Op indices where the model's layers start (gates the engine skips, such as id, not counted)."""
    out, k = [], 0
    for layer in model.ir.layers:  # type: ignore[attr-defined]
        if k:
            out.append(k)
        k += sum(1 for g in layer.gates if g.name not in statevector.SKIPPED)
    return tuple(b for b in out if b)


def _readout_job(model: object) -> Circuit:
    """The model's program read on its readout qubits (one child per measurement basis)."""
    ir, manifest = model.ir, model.manifest  # type: ignore[attr-defined]
    body = statevector.compile_gates(ir.gates)
    tails = readout.basis_tails(manifest["readout"])
    amplitude = manifest["encoding"]["kind"] == "amplitude"
    starts = boundaries(model)

    def job(tail: list[tuple[str, int]], groups: tuple[Circuit, ...] = ()) -> Circuit:
        ops = body + statevector.compile_circuit(appended(QuantumCircuit(ir.num_qubits), tail))
        return Circuit(
            None,
            ir.measured,
            ir.inputs,
            amplitude,
            starts,
            build=lambda: appended(irmod.unitary_part(ir), tail),
            ops=ops,
            num_qubits=ir.num_qubits,
            groups=groups,
        )

    if len(tails) == 1:
        return job(tails[0])
    return job([], tuple(job(t) for t in tails))  # the parent's ops: the program without a basis tail


def of_model(model: object, register: str = "readout") -> Circuit:
    """The program of a model (an `artifact.Model`), compiled once per model object.

    register 'readout' measures the readout qubits; 'all' every qubit (QCov's basis states S);
    'classes' the readout qubits the class scores depend on (`class_view`).
    """
    if register not in REGISTERS:
        raise InputError(f"register must be one of {', '.join(REGISTERS)}, got '{register}'")
    memo = model.memo  # type: ignore[attr-defined]
    if register == "classes":
        return class_view(model)[0]
    if "program/readout" not in memo:
        memo["program/readout"] = _readout_job(model)
    if register == "readout":
        return memo["program/readout"]
    if "program/all" not in memo:
        memo["program/all"] = memo["program/readout"].with_measured(tuple(range(model.ir.num_qubits)))  # type: ignore[attr-defined]
    return memo["program/all"]


def wide(model: object) -> bool:
    """Whether the model's readout has more than `readout.BUCKET_OUTCOMES` outcomes: where runs
    read the class marginal (`class_view`) instead of every outcome. Never a kernel model: it
    reads its kernel outcomes (`simulate.fidelity`), not its measured register."""
    if getattr(model, "is_kernel", False):
        return False
    return 2 ** len(of_model(model).measured) > readout.BUCKET_OUTCOMES


def class_view(model: object) -> tuple[Circuit, np.ndarray]:
    """The model's program measuring only the readout qubits its class scores depend on, and its
    readout matrix over their outcomes (`readout.needed_bits`): x % 2 over 20 measured qubits reads
    qubit 0, so 2 probabilities per input instead of 2^20 (issue 59). Class probabilities, and so
    every prediction and vote, are those of the full readout; coverage, which counts every basis
    state, keeps `of_model`. Several measurement bases keep their full readout. Cached per model."""
    memo = model.memo  # type: ignore[attr-defined]
    if "program/classes" not in memo:
        job, matrix = of_model(model), model.readout_matrix  # type: ignore[attr-defined]
        bits = None if job.groups else readout.needed_bits(matrix)
        if bits is not None and len(bits) < len(job.measured):
            job, matrix = job.with_measured(tuple(job.measured[b] for b in bits)), readout.on_bits(matrix, bits)
        memo["program/classes"] = (job, matrix)
    return memo["program/classes"]
