"""Gate fusion for the numpy statevector: fewer passes over a state that no longer fits in cache.

Past 12 qubits every gate pass streams the whole batch state through memory (about 0.1-0.2 ms per
input per pass at 16 qubits on 2 cores, whatever the gate), so the number of passes is the cost.
The `Fuser` keeps, as Aer's fusion does, gates that do not depend on the input in dense matrices:
single-qubit gates wait per qubit (they commute with everything on other qubits) and gates on
neighbouring qubits grow one open block of up to `width` qubits, applied in one matmul over the
state viewed as (2^(n-lo-w), 2^w, 2^lo N). A pass with an 8x8 block costs about 1.5x a 2x2 pass
(measured: 113-247 against 77-177 us per input at 16 qubits), so a rotation layer and a cx ladder
cost about 8 passes instead of 31. Input-dependent (per-input) matrices are applied as they come.
A pass itself (`multiply`) runs a real block on the float view of the state and splits stacks of
small products over threads.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from qmltest.simulate.kernels import apply_t

BLOCK_FROM_QUBITS = 12
"""From this width blocks grow to `BLOCK_WIDTH` qubits. Below it the state is cache-resident and
building a block's matrix (a few Kronecker products per gate) costs more than the passes it saves
(8 qubits, 64 inputs: 29 us per input without blocks, 54 with two-qubit ones), so there are none."""
BLOCK_WIDTH = 3
"""Measured at 16 qubits (per input: z_feature_map + real_amplitudes read on every qubit / the
hardware-efficient circuit read on one): width 2: 6.6 / 7.9 ms, 3: 5.1 / 5.6-6.0, 4: 5.5-5.9 /
5.9-6.1, 5: 6.5 / 6.6. Wider blocks cost more multiply-adds per amplitude than the passes they save."""


def width(n: int) -> int:
    """The largest block for an n-qubit state (the cost model above); 1: no blocks."""
    return BLOCK_WIDTH if n >= BLOCK_FROM_QUBITS else 1


def embed(m: np.ndarray, qubits: tuple[int, ...], lo: int, w: int) -> np.ndarray:
    """The 2^w x 2^w matrix of gate m on `qubits` inside the window of w qubits from `lo`."""
    return apply_t(np.eye(2**w, dtype=complex), m, tuple(q - lo for q in qubits), w)


class Fuser:
    """A state (2^n, N) columns and the gates waiting to be applied to it, in program order.

    Invariant: the state, then the open block (if any), then the pending single-qubit gates is the
    program so far; pending gates on qubits outside the block commute with it."""

    def __init__(self, state: np.ndarray, n: int, width: int, zero: bool) -> None:
        self.state, self.n, self.width, self.zero = state, n, width, zero
        self.pending: dict[int, np.ndarray] = {}
        self.block: tuple[int, int, np.ndarray] | None = None  # lo, w, matrix (bit i = qubit lo + i)
        self._spare: np.ndarray | None = None
        self._given = state  # the caller's array (a cached checkpoint, say): never written

    def single(self, q: int, m: np.ndarray) -> None:
        p = self.pending.get(q)
        self.pending[q] = m if p is None else np.matmul(m, p)

    def gate(self, qubits: tuple[int, ...], m: np.ndarray) -> None:
        """A gate on two or more qubits: into the open block, a new block, or applied now."""
        if self.zero:  # the first entangling gate: the product state of everything before it
            self._product()
        lo, hi = min(qubits), max(qubits)
        if m.ndim == 2 and 0 < hi - lo < self.width:
            if self.block is not None:
                blo, bw, _ = self.block
                nlo, nhi = min(lo, blo), max(hi, blo + bw - 1)
                if nhi - nlo < self.width and self._absorbable(nlo, nhi):
                    self._grow(qubits, m, nlo, nhi - nlo + 1)
                    return
                self._apply_block()
            if self._absorbable(lo, hi):
                self.block = (lo, hi - lo + 1, np.eye(2 ** (hi - lo + 1), dtype=complex))
                self._grow(qubits, m, lo, hi - lo + 1)
                return
        self.flush(qubits)
        self.state = apply_t(self.state, m, qubits, self.n)

    def _absorbable(self, lo: int, hi: int) -> bool:
        """No per-input gate waits on the window (it would have to be applied first)."""
        return all(self.pending[q].ndim == 2 for q in range(lo, hi + 1) if q in self.pending)

    def _grow(self, qubits: tuple[int, ...], m: np.ndarray, lo: int, w: int) -> None:
        """Block := m . (pending on the window) . block, all on the window [lo, lo + w)."""
        assert self.block is not None
        blo, bw, u = self.block
        u = np.kron(np.eye(2 ** (lo + w - blo - bw), dtype=complex), np.kron(u, np.eye(2 ** (blo - lo), dtype=complex)))
        waiting = [q for q in range(lo, lo + w) if q in self.pending]
        if waiting:
            p = np.ones((1, 1), dtype=complex)
            for q in reversed(range(lo, lo + w)):
                p = np.kron(p, self.pending.pop(q) if q in waiting else np.eye(2, dtype=complex))
            u = p @ u
        self.block = (lo, w, embed(m, qubits, lo, w) @ u)

    def _apply_block(self) -> None:
        if self.block is None:
            return
        lo, w, u = self.block
        self.block = None
        self._matmul(u, lo, w)

    def _matmul(self, u: np.ndarray, lo: int, w: int) -> None:
        """state := (u on qubits lo .. lo + w - 1) state, into the spare buffer (no new pages)."""
        state = np.ascontiguousarray(self.state)  # a view's reshape would be a copy, its writes lost
        if self._spare is None or self._spare.shape != state.shape:
            self._spare = _spare_like(state)
        multiply(u, state, self._spare, lo, w, self.n)
        self.state, self._spare = self._spare, (None if state is self._given else state)

    def result(self) -> np.ndarray:
        """The state after everything waiting; the spare buffer is kept for the next run."""
        self.flush_all()
        if self._spare is not None:
            _SPARES.clear()  # one buffer kept, whatever the shapes a process runs
            _SPARES[self._spare.shape] = self._spare
            self._spare = None
        return self.state

    def _product(self) -> None:
        self.zero = False
        if self.pending:
            self.state = product_state(self.pending, self.n, self.state.shape[1])
            self.pending.clear()

    def flush(self, qubits: tuple[int, ...]) -> None:
        """Apply what waits on `qubits`: the block first when it holds one of them, then pending."""
        if self.block is not None and any(self.block[0] <= q < self.block[0] + self.block[1] for q in qubits):
            self._apply_block()
        for q in qubits:
            if q in self.pending:
                m = self.pending.pop(q)
                if m.ndim == 2:
                    self._matmul(m, q, 1)
                else:
                    self.state = apply_t(self.state, m, (q,), self.n)

    def flush_all(self) -> None:
        """Everything waiting: the block, then pending gates (shared ones on neighbours in blocks)."""
        if self.zero and self.pending:
            self._product()
            return
        self._apply_block()
        shared = sorted(q for q, m in self.pending.items() if m.ndim == 2)
        while shared:  # runs of neighbouring qubits, up to `width` at a time
            run = [shared.pop(0)]
            while shared and shared[0] == run[-1] + 1 and len(run) < self.width:
                run.append(shared.pop(0))
            p = self.pending.pop(run[-1])
            for q in reversed(run[:-1]):
                p = np.kron(p, self.pending.pop(q))
            self._matmul(p, run[0], len(run))
        self.flush(tuple(sorted(self.pending)))


SPLIT_FROM_BYTES = 4 * 2**20
"""States from this size are multiplied by several threads, each on a slab of the outer axis."""
SPLIT_FROM_PRODUCTS = 64
"""A block pass over the (2^(n-lo-w), 2^w, R) view is 2^(n-lo-w) matrix products. Many small ones
OpenBLAS runs on one thread, and threads over slabs win: 16 qubits, 100 inputs, a real 8x8 block,
lo = 0..6 (2^13..2^7 products): 68-103 against 89-188 us per input and pass (best of 5). Fewer,
larger products OpenBLAS threads itself; slabs there took the same or (in a mutation run, lo = 11)
four times as long."""

_POOL: ThreadPoolExecutor | None = None
_SPARES: dict[tuple[int, ...], np.ndarray] = {}
"""The last run's spare buffer, by shape (one at most). A fresh 100 MB array costs a page fault per 4 KiB on its
first pass: in a 16-qubit mutation run (100 inputs) a pass into a fresh buffer took 118 against 10
ms, and every resumed mutant needed one."""


def _spare_like(state: np.ndarray) -> np.ndarray:
    """An output buffer for a pass over `state`: the kept spare when its shape fits, else new."""
    spare = _SPARES.pop(state.shape, None)
    return np.empty(state.shape, dtype=complex) if spare is None else spare


def threads() -> int:
    """Threads per pass: the usable cores, or one where the environment pins BLAS to one thread
    (qmltest's Dask workers, which share the cores between processes)."""
    if os.environ.get("OPENBLAS_NUM_THREADS") == "1" or os.environ.get("OMP_NUM_THREADS") == "1":
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def multiply(u: np.ndarray, state: np.ndarray, out: np.ndarray, lo: int, w: int, n: int) -> None:
    """out := (u on qubits lo .. lo + w - 1) state, for C-contiguous (2^n, N) complex columns.

    A real u (ry, cx, h, cz, swap and their products: a real_amplitudes layer) multiplies the
    float view of the state, real and imaginary parts as 2N real columns: half the floating-point
    work of the complex product and equal to it to rounding (bit for bit in the 16-qubit mutation
    run measured here). At 16 qubits, 21 inputs: 72-184 against 105-299 us per input and pass.
    Large states are split over `threads()` slabs."""
    if not np.iscomplexobj(u) or not u.imag.any():
        u, state, out = np.ascontiguousarray(u.real), state.view(np.float64), out.view(np.float64)
    shape = (2 ** (n - lo - w), 2**w, -1)
    a, b = state.reshape(shape), out.reshape(shape)
    parts = threads() if state.nbytes >= SPLIT_FROM_BYTES else 1
    if parts < 2 or shape[0] < max(parts, SPLIT_FROM_PRODUCTS):
        np.matmul(u, a, out=b)
        return
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(parts, thread_name_prefix="qmltest-pass")
    cut = np.linspace(0, shape[0], parts + 1).astype(int)
    jobs = [_POOL.submit(np.matmul, u, a[i:j], out=b[i:j]) for i, j in zip(cut[1:-1], cut[2:])]
    np.matmul(u, a[: cut[1]], out=b[: cut[1]])
    for job in jobs:
        job.result()


def product_state(factors: dict[int, np.ndarray], n: int, batch: int) -> np.ndarray:
    """(2^n, N) columns of the product state sum_j prod_q (m_q |0>)_(bit q of j); a qubit without a
    factor stays |0>. Factors are 2x2 or per-input (N, 2, 2) matrices."""
    state = np.ones((1, batch), dtype=complex)
    for q in reversed(range(n)):
        m = factors.get(q)
        if m is None:
            col = np.zeros((2, batch), dtype=complex)
            col[0] = 1.0
        elif m.ndim == 2:
            col = np.broadcast_to(m[:, :1], (2, batch))
        else:
            col = m[:, :, 0].T
        state = np.multiply(state[:, None, :], col[None, :, :], order="C").reshape(-1, batch)
    return state
