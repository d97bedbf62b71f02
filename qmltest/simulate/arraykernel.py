"""A batched statevector written once against an array namespace (`xp`: numpy, or CuPy on a GPU).

The ``gpu`` backend runs it on CuPy; the default tests run the same code on numpy, so the kernels
are checked on every machine (against Aer to 1e-9, `tests/test_backend.py`). Three paths share one
gate application (`apply`): noise-free states batched over inputs (`run`), over mutants x inputs
(`run_many`), and density matrices under a noise config (`run_density`). Only the array
operations that numpy and CuPy share are used: reshape, moveaxis, matmul, abs, asarray, zeros.

State layout (N, 2, ..., 2): axis 1 + (n - 1 - q) holds qubit q (Qiskit's little-endian index).
A k-qubit gate on qubits (q_0, ..., q_{k-1}) moves their axes last in the order q_{k-1} ... q_0,
so that the flattened last axis is Qiskit's matrix index, and multiplies by M^T there: one batched
matmul per gate, shared (d, d) or per input (N, d, d). Gate matrices are built on the host by the
numpy engine's own code (`statevector.op_matrix`) and sent over once per gate and batch.

On numpy the kernel is for the tests, not for speed: on QCL's 296 directed mutants x 100 inputs it
takes 183-188 us per (mutant, input) against the numpy engine's 26.5 from the start (8.0 fused).
Of three layouts measured there, moving the gate's axes last and multiplying by M^T was fastest
(a single-qubit gate as weighted sums of the state's halves: 321 us; as M times the state viewed as
(..., 2, 2^q) with no axis moves: 269 us): numpy runs many tiny matmuls in its own C loop, not
in BLAS. Its speed on a GPU is still to be measured (no device was lent to the session that wrote it).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from qiskit.circuit import Parameter

from qmltest.errors import InputError
from qmltest.simulate import density, memory, program, statevector


def apply(xp: ModuleType, state: object, m: object, qubits: tuple[int, ...], n: int) -> object:
    """Apply a matrix to states (..., 2, ..., 2) (n qubit axes after any batch axes) on `qubits`.

    `m` is (d, d), or carries batch axes that broadcast against the state's (from the right, as
    matmul does): (N, d, d) per input, (M, 1, d, d) per mutant, (M, N, d, d) per mutant and input."""
    lead = state.ndim - n  # type: ignore[attr-defined]
    axes = [lead + (n - 1 - q) for q in reversed(qubits)]
    k = len(qubits)
    last = list(range(lead + n - k, lead + n))
    moved = xp.moveaxis(state, axes, last)
    shape = moved.shape
    flat = xp.reshape(moved, shape[:lead] + (-1, 2**k))
    mt = xp.moveaxis(m, -1, -2)  # state rows times M^T; batch axes broadcast from the right
    out = xp.matmul(flat, mt)
    return xp.moveaxis(xp.reshape(out, shape), last, axes)


def takes(ops: list[statevector.Op]) -> bool:
    """Whether the kernel runs a program: it has no mid-circuit measurement (dephasing)."""
    return not any(op.name == "dephase" for op in ops)


def _require(programs: list[list[statevector.Op]]) -> None:
    """One line, exit 2, for a program the kernel does not take."""
    if not all(takes(ops) for ops in programs):
        raise InputError("the gpu backend runs circuits without mid-circuit measurements: use numpy or aer")


def run(
    xp: ModuleType,
    ops: list[statevector.Op],
    psi0: np.ndarray,
    values: dict[Parameter, np.ndarray],
    n: int,
) -> object:
    """Final states (N, 2^n) on the device for initial states psi0 (host, (N, 2^n))."""
    _require([ops])
    batch = psi0.shape[0]
    state = xp.reshape(xp.asarray(psi0), (batch,) + (2,) * n)
    for op in ops:
        m = statevector.op_matrix(op, values, batch)
        state = apply(xp, state, xp.asarray(m), op.qubits, n)
    return xp.reshape(state, (batch, 2**n))


def signature(ops: list[statevector.Op]) -> tuple[tuple[int, ...], ...]:
    """The qubits of every op in order: programs with one signature run as one mutants x inputs batch."""
    return tuple(op.qubits for op in ops)


def run_many(
    xp: ModuleType,
    programs: list[list[statevector.Op]],
    psi0: np.ndarray,
    values: dict[Parameter, np.ndarray],
    n: int,
) -> object:
    """Final states (M, N, 2^n) of M programs of one `signature` (a mutant and its siblings) on the
    same initial states psi0 (host, (N, 2^n)): one batched matmul per op position for all M x N
    states. An op every program shares is one matrix; otherwise the programs' matrices are stacked,
    (M, 1, d, d), or (M, N, d, d) where one reads the input."""
    sig = signature(programs[0])
    if any(signature(p) != sig for p in programs[1:]):
        raise ValueError("run_many takes programs of one signature (group them by `signature`)")
    _require(programs)
    count, batch = len(programs), psi0.shape[0]
    state = xp.reshape(xp.asarray(psi0), (1, batch) + (2,) * n)
    state = xp.broadcast_to(state, (count, batch) + (2,) * n)
    for i, first in enumerate(programs[0]):
        ops = [p[i] for p in programs]
        if all(statevector.same_op(first, op) for op in ops[1:]):
            m = statevector.op_matrix(first, values, batch)  # (d, d) or (N, d, d): broadcast over M
        else:
            mats = [statevector.op_matrix(op, values, batch) for op in ops]
            if all(x.ndim == 2 for x in mats):
                m = np.stack(mats)[:, None]
            else:
                m = np.stack([np.broadcast_to(x, (batch,) + x.shape[-2:]) for x in mats])
        state = apply(xp, state, xp.asarray(m), first.qubits, n)
    return xp.reshape(state, (count, batch, 2**n))


def run_density(
    xp: ModuleType, prepared: density.Prepared, values: dict[Parameter, np.ndarray], batch: int
) -> np.ndarray:
    """Noisy probabilities (N, 2^m) of angle-encoded inputs: `density.Prepared.run`'s arithmetic on
    the array namespace. A density matrix is a 2n-"qubit" vector (column stacking), so every step's
    superoperator is applied as a gate by `apply`; the suffix is already folded into `prepared.w`."""
    n = prepared.n
    v = xp.zeros((batch, 4**n), dtype=complex)
    v[:, 0] = 1.0
    v = xp.reshape(v, (batch,) + (2,) * (2 * n))
    for step in prepared.prefix:
        m = density.step_matrix(step, values, batch)
        v = apply(xp, v, xp.asarray(m), density.vec_qubits(step.qubits, n), 2 * n)
    out = xp.real(xp.matmul(xp.reshape(v, (batch, 4**n)), xp.asarray(prepared.w)))
    return host(out)


def read_states(xp: ModuleType, prepared: density.Prepared, states: np.ndarray) -> np.ndarray:
    """Noisy probabilities (N, 2^m) of amplitude-encoded inputs: no step reads a feature, so the
    whole circuit is in `prepared.w` and p_b = psi^T W_b conj(psi), W_b[i, j] = w_b[i + j 2^n]."""
    d = 2**prepared.n
    psi = xp.asarray(np.asarray(states, dtype=complex))
    wm = xp.asarray(np.ascontiguousarray(prepared.w.T.reshape(-1, d, d).transpose(0, 2, 1)))
    cols = [xp.real(xp.sum(xp.matmul(psi, wm[b]) * xp.conj(psi), axis=1)) for b in range(wm.shape[0])]
    return host(xp.stack(cols, axis=1))


def host(a: object) -> np.ndarray:
    """A device array back on the host (CuPy arrays come back with .get())."""
    return np.asarray(a.get() if hasattr(a, "get") else a)


def marginal(xp: ModuleType, psi: object, measured: list[int], n: int) -> np.ndarray:
    """Probabilities (N, 2^m) over the measured qubits (bit i = measured[i]), back on the host."""
    batch = psi.shape[0]  # type: ignore[attr-defined]
    probs = xp.reshape(xp.abs(psi) ** 2, (batch,) + (2,) * n)
    keep = [1 + (n - 1 - q) for q in reversed(measured)]  # most significant first
    rest = [a for a in range(1, n + 1) if a not in keep]
    if rest:
        probs = probs.sum(axis=tuple(rest))  # type: ignore[attr-defined]
        order = sorted(keep)
        probs = xp.moveaxis(probs, [1 + order.index(a) for a in keep], list(range(1, len(keep) + 1)))
    else:
        probs = xp.moveaxis(probs, keep, list(range(1, n + 1)))
    return host(xp.reshape(probs, (batch, 2 ** len(measured))))


def namespace() -> ModuleType:
    """CuPy, the array module of the gpu backend (one line, exit 2, when absent); the numpy
    backend and the tests pass numpy itself."""
    try:
        import cupy  # type: ignore[import-not-found]

        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # ImportError, or CuPy present but no CUDA device / driver
        raise InputError(
            f"--backend gpu needs CuPy and a CUDA device (pip install 'qmltest[gpu]'): {type(exc).__name__}: {exc}"
        ) from None
    return cupy


def free_bytes(xp: ModuleType) -> int | None:
    """Free device memory (CuPy), None on the host."""
    if xp is np:
        return None
    free, _ = xp.cuda.runtime.memGetInfo()
    return int(free)


def budget(xp: ModuleType, per_item: int, what: str, name: str) -> int:
    """States of `per_item` bytes one batch holds on `xp` (half its free memory; CHUNK_BYTES on
    the host); one line, exit 2, when not even one fits."""
    return memory.batch_budget(free_bytes(xp), per_item, what, name)


def probabilities(xp: ModuleType, job: program.Circuit, encoded: np.ndarray, name: str) -> np.ndarray:
    """Exact probabilities of one program in batches that fit half the free device memory (state
    and matmul output: 2 x 16 x 2^n bytes per input)."""
    n = job.num_qubits
    chunk = budget(xp, 2 * 16 * 2**n, f"{n} qubits", name)
    out = []
    for lo in range(0, len(encoded), chunk):
        psi0, values = program.start_rows(job, encoded[lo : lo + chunk])
        psi = run(xp, job.ops, psi0, values, n)
        out.append(marginal(xp, psi, list(job.measured), n))
    return np.concatenate(out) if out else np.zeros((0, 2 ** len(job.measured)))


def probabilities_many(
    xp: ModuleType, jobs: list[program.Circuit], encoded: np.ndarray, name: str, one: object
) -> list[np.ndarray]:
    """Exact probabilities of several programs (a model's mutants) on the same encoded inputs,
    batched over mutants x inputs: programs of one op signature, readout and encoding run as one
    batch (`run_many`). Programs the kernel does not take (mid-circuit measurements) run one by
    one through `one(job, encoded)`."""
    out: list[np.ndarray | None] = [None] * len(jobs)
    groups: dict[tuple, list[int]] = {}
    for i, job in enumerate(jobs):
        if not takes(job.ops):
            out[i] = one(job, encoded)  # type: ignore[operator]
        else:
            key = (signature(job.ops), job.measured, job.amplitude, job.num_qubits)
            groups.setdefault(key, []).append(i)
    encoded = np.asarray(encoded)
    for (_, measured, _, n), members in groups.items():
        first = jobs[members[0]]
        if not first.amplitude and encoded.shape[1] != len(first.inputs):
            raise InputError(f"wrong feature count: the circuit has {len(first.inputs)} inputs, got {encoded.shape[1]}")
        memory.check_size(n)
        rows = max(1, min(len(encoded), budget(xp, 2 * 16 * 2**n, f"{n} qubits", name)))
        per = budget(xp, 2 * 16 * 2**n * rows, f"{n} qubits", name)
        parts: dict[int, list[np.ndarray]] = {i: [] for i in members}
        for lo in range(0, len(encoded), rows):
            psi0 = program.start_rows(first, encoded[lo : lo + rows])[0]
            values: dict = {}
            for i in members:
                values.update(program.values(jobs[i], encoded[lo : lo + rows]))
            for at in range(0, len(members), per):
                chosen = members[at : at + per]
                psi = run_many(xp, [jobs[i].ops for i in chosen], psi0, values, n)
                flat = xp.reshape(psi, (len(chosen) * len(psi0), 2**n))
                probs = marginal(xp, flat, list(measured), n).reshape(len(chosen), len(psi0), -1)
                for j, i in enumerate(chosen):
                    parts[i].append(probs[j])
        for i in members:
            out[i] = np.concatenate(parts[i]) if parts[i] else np.zeros((0, 2 ** len(measured)))
    assert all(p is not None for p in out)
    return out  # type: ignore[return-value]


def density_probabilities(
    xp: ModuleType, prep: density.Prepared, inputs: list[Parameter], encoded: np.ndarray, amplitude: bool
) -> np.ndarray:
    """A prepared noisy circuit's probabilities on `xp`, in batches of inputs that fit half its free
    memory (the vectors and matmul outputs: 2 x 16 x 4^n bytes per input)."""
    n = prep.n
    chunk = budget(xp, 2 * 16 * 4**n, f"{n} qubits (density matrix)", "gpu")
    out = []
    for lo in range(0, len(encoded), chunk):
        if amplitude:
            out.append(read_states(xp, prep, encoded[lo : lo + chunk]))
            continue
        rows = encoded[lo : lo + chunk]
        values = statevector.feature_values(inputs, rows)
        out.append(run_density(xp, prep, values, len(rows)))
    return np.concatenate(out) if out else np.zeros((0, prep.w.shape[1]))
