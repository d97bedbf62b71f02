"""The gate pass: one matrix (or one per input) applied to a batch of states in (2^n, N) layout.

Shared by the statevector engine, its fusion and the density-matrix engine (a density matrix is a
2n-"qubit" vector), so none of them imports another for it.
"""

from __future__ import annotations

import numpy as np


def _components(state: np.ndarray, qubits: tuple[int, ...], n: int) -> tuple[np.ndarray, list[tuple]]:
    """A view of a (2^n, N) state with one axis per target qubit, and the index of each basis state.

    The batch is the last, contiguous axis, so every elementwise operation runs over >= N values.
    """
    batch = state.shape[1]
    order = sorted(qubits, reverse=True)
    shape: list[int] = []
    prev = n
    for q in order:
        shape += [2 ** (prev - 1 - q), 2]
        prev = q
    shape += [2**prev, batch]
    view = state.reshape(shape)
    axis = {q: 1 + 2 * i for i, q in enumerate(order)}
    index = []
    for k in range(2 ** len(qubits)):
        idx: list = [slice(None)] * len(shape)
        for bit, q in enumerate(qubits):
            idx[axis[q]] = (k >> bit) & 1
        index.append(tuple(idx))
    return view, index


def apply_t(state: np.ndarray, m: np.ndarray, qubits: tuple[int, ...], n: int) -> np.ndarray:
    """Apply a matrix (d, d), or per-input matrices (N, d, d), to a batch in (2^n, N) layout.

    One qubit and one matrix for the batch: a single broadcast matmul over the state viewed as
    (2^(n-1-q), 2, 2^q N), 2x faster than four scaled passes (31-52 against 52-117 us on 8 qubits
    and 200 inputs); otherwise one scaled pass per nonzero entry."""
    if m.ndim == 2 and len(qubits) == 1:
        q = qubits[0]
        return np.matmul(m, state.reshape(2 ** (n - 1 - q), 2, -1)).reshape(state.shape)
    view, index = _components(state, qubits, n)
    parts = [view[i] for i in index]
    out = np.empty_like(view)
    batched = m.ndim == 3
    for k, ik in enumerate(index):
        target = out[ik]
        first = True
        for j, part in enumerate(parts):
            coef = m[:, k, j] if batched else m[k, j]
            if not batched and coef == 0:
                continue
            if first:
                if not batched and coef == 1:  # permutation gates (cx, swap): a copy, no multiply
                    np.copyto(target, part)
                else:
                    np.multiply(coef, part, out=target)
                first = False
            else:
                target += coef * part
        if first:
            target[...] = 0
    return out.reshape(state.shape)


def apply(psi: np.ndarray, m: np.ndarray, qubits: tuple[int, ...], n: int) -> np.ndarray:
    """Apply a k-qubit matrix (d, d) or per-input matrices (N, d, d) to states psi (N, 2^n)."""
    return np.ascontiguousarray(apply_t(np.ascontiguousarray(psi.T), m, qubits, n).T)
