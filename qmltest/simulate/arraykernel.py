"""A batched statevector written once against an array namespace (`xp`: numpy, or CuPy on a GPU).

The ``gpu`` backend runs it on CuPy; the default tests run the same code on numpy, so the kernels
are checked on every machine (against Aer to 1e-9, `tests/test_backends.py`). Only the array
operations that numpy and CuPy share are used: reshape, moveaxis, matmul, abs, asarray, zeros.

State layout (N, 2, ..., 2): axis 1 + (n - 1 - q) holds qubit q (Qiskit's little-endian index).
A k-qubit gate on qubits (q_0, ..., q_{k-1}) moves their axes last in the order q_{k-1} ... q_0,
so that the flattened last axis is Qiskit's matrix index, and multiplies by M^T there: one batched
matmul per gate, shared (d, d) or per input (N, d, d). Gate matrices are built on the host by the
numpy engine's own code (`statevector.op_matrix`) and sent over once per gate and batch.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from qiskit.circuit import Parameter

from qmltest.errors import InputError
from qmltest.simulate import statevector


def apply(xp: ModuleType, state: object, m: object, qubits: tuple[int, ...], n: int) -> object:
    """Apply a (d, d) or per-input (N, d, d) matrix to states (N, 2, ..., 2) on `qubits`."""
    axes = [1 + (n - 1 - q) for q in reversed(qubits)]
    k = len(qubits)
    moved = xp.moveaxis(state, axes, list(range(n + 1 - k, n + 1)))
    shape = moved.shape
    flat = xp.reshape(moved, (shape[0], -1, 2**k))
    mt = xp.moveaxis(m, -1, -2)  # (d, d) or (N, d, d): state rows times M^T
    out = xp.matmul(flat, mt)
    return xp.moveaxis(xp.reshape(out, shape), list(range(n + 1 - k, n + 1)), axes)


def run(
    xp: ModuleType,
    ops: list[statevector.Op],
    psi0: np.ndarray,
    values: dict[Parameter, np.ndarray],
    n: int,
) -> object:
    """Final states (N, 2^n) on the device for initial states psi0 (host, (N, 2^n))."""
    if any(op.name == "dephase" for op in ops):
        raise InputError("the gpu backend runs circuits without mid-circuit measurements: use numpy or aer")
    batch = psi0.shape[0]
    state = xp.reshape(xp.asarray(psi0), (batch,) + (2,) * n)
    for op in ops:
        m = statevector.op_matrix(op, values, batch)
        state = apply(xp, state, xp.asarray(m), op.qubits, n)
    return xp.reshape(state, (batch, 2**n))


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
    out = xp.reshape(probs, (batch, 2 ** len(measured)))
    return np.asarray(out.get() if hasattr(out, "get") else out)  # CuPy arrays come back with .get()


def namespace(name: str) -> ModuleType:
    """The array module of a backend: numpy, or CuPy for 'gpu' (one line, exit 2, when absent)."""
    if name == "numpy":
        return np
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
