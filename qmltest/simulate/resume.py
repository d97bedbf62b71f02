"""Mutants resumed from the original: cached batch states before, dense fused unitaries after.

A mutant shares the original's program up to its first changed op and from its last changed op to
the end. For one data set this module keeps, for the original:
- the batch state at every layer boundary (prefix reuse: resuming there gives the same bits as a
  run from the start, because fusion never crosses a boundary), and
- in the input-independent suffix (every op after the last one that reads a feature; the whole
  circuit for amplitude encoding), the batch state before every `stride`-th op and the dense
  2^n x 2^n unitary of everything from that op to the end (issue 14's fusion: one BLAS matmul per
  input replaces the suffix's gate passes).
A mutant then runs only its changed stretch gate by gate and finishes with one matmul. The fused
path agrees with the plain one to rounding (tested to 1e-9), not bit for bit; `fuse=False` keeps
the bit-identical prefix reuse alone.
"""

from __future__ import annotations

import numpy as np

from qmltest.simulate import kernels, statevector
from qmltest.simulate.memory import available_bytes
from qmltest.simulate.program import Circuit, first_difference, reusable, start_columns
from qmltest.simulate.program import values as _values

PREFIX_BYTES = 512 * 2**20
"""Memory the cached boundary states of one data set may take (prefix reuse)."""
FUSE_BYTES = 128 * 2**20
"""Memory the fused suffix (states and unitaries at its checkpoints) of one data set may take.
Measured on QCL, 200 inputs, one core: 320 MB (stride 1) cost 0.35 s to build and 22.1 us per
(mutant, input); 128 MB (stride 3) 0.17 s and 23.3 us, the better trade for a few hundred mutants
per worker."""
FUSE_MAX_QUBITS = 10
"""Above this a dense suffix (16 * 4^n bytes, 4^n multiply-adds per input) costs more than gates."""


def dense_pays(ops_after: int, n: int) -> bool:
    """Cost model: one dense matmul (4^n complex multiply-adds per input, BLAS) against `ops_after`
    gate passes (about 2^n elementwise updates each, at roughly 8x BLAS's cost per element)."""
    return ops_after * 8 * 2**n > 4**n


def common_tail(a: list[statevector.Op], b: list[statevector.Op], limit: int) -> int:
    """Number of trailing ops two programs share, at most `limit`."""
    t = 0
    while t < limit and statevector.same_op(a[-1 - t], b[-1 - t]):
        t += 1
    return t


class Checkpoints:
    """The original's cached states (as columns, (2^n, N)) and fused suffix unitaries for one data set."""

    def __init__(self, original: Circuit, encoded: np.ndarray, fuse: bool = True) -> None:
        self.job = original
        self.encoded = np.asarray(encoded)
        ops, n = original.ops, original.num_qubits
        self.states = self._boundary_states()
        self.fine: dict[int, np.ndarray] = {}
        self.tails: dict[int, np.ndarray] = {}
        self.stride = 0
        self.fuse = fuse
        if fuse and n <= FUSE_MAX_QUBITS:
            self._fuse(ops, n)

    def _boundary_states(self) -> dict[int, np.ndarray]:
        """The batch's state at each layer boundary (before that op), as far as PREFIX_BYTES allows."""
        job = self.job
        ops, n = job.ops, job.num_qubits
        psi, values = start_columns(job, self.encoded), _values(job, self.encoded)  # columns
        out = {0: psi}
        prev = 0
        for b in sorted(b for b in job.boundaries if 0 < b < len(ops)):
            if psi.nbytes * (len(out) + 1) > PREFIX_BYTES:
                break
            psi = statevector.run_columns(ops[prev:b], psi, values, n, zero=prev == 0 and not job.amplitude)
            out[b] = psi
            prev = b
        return out

    def _fuse(self, ops: list[statevector.Op], n: int) -> None:
        """States and suffix unitaries every `stride` ops of the input-independent suffix."""
        fixed = max((k + 1 for k, op in enumerate(ops) if op.params or op.name == "dephase"), default=0)
        length = len(ops) - fixed
        if length <= 0 or not dense_pays(length, n):
            return
        per_point = self.states[0].nbytes + 16 * 4**n
        budget = min(FUSE_BYTES, available_bytes() // 4)  # an optimisation: never what exhausts memory
        if budget < per_point:
            return
        self.stride = max(1, -(-length * per_point // budget))
        points = list(range(fixed, len(ops), self.stride))
        # states: forward from the last boundary state at or before the suffix
        values = _values(self.job, self.encoded)
        start = max(b for b in self.states if b <= fixed)
        psi, prev = self.states[start], start
        for c in points:
            zero = prev == 0 and not self.job.amplitude
            psi = statevector.run_columns(ops[prev:c], psi, values, n, zero=zero)
            self.fine[c] = psi
            prev = c
        # unitaries, transposed (psi @ V applies them to row states): V_c = g_c^T ... g_{c'-1}^T V_c'
        v = np.eye(2**n, dtype=complex)
        stop = len(ops)
        for c in reversed(points):
            for op in reversed(ops[c:stop]):
                v = kernels.apply_t(v, np.ascontiguousarray(op.matrix.T), op.qubits, n)  # type: ignore[union-attr]
            self.tails[c] = v.copy()
            stop = c

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for d in (self.states, self.fine, self.tails) for a in d.values())

    def probabilities(self, job: Circuit) -> np.ndarray | None:
        """A mutant's probabilities from the cached original, or None when nothing can be reused."""
        orig = self.job
        if job.num_qubits != orig.num_qubits or job.amplitude != orig.amplitude or not reusable(job, self.encoded):
            return None
        ops, base, n = job.ops, orig.ops, job.num_qubits
        first = first_difference(ops, base)
        values = _values(job, self.encoded)
        zero = not job.amplitude  # the state cached at op 0 is |0...0>
        if self.fuse:  # any cached state before the first change; the dense tail where it pays
            starts = {c: s for d in (self.states, self.fine) for c, s in d.items() if c <= first}
            c = max(starts)
            tail = common_tail(ops, base, min(len(ops), len(base)) - first)
            orig_end = len(base) - tail  # ops[len(ops) - tail:] == base[orig_end:]
            after = [u for u in self.tails if u >= orig_end]
            if after:
                u = min(after)
                end = len(ops) - tail + (u - orig_end)  # the mutant's index of the original's op u
                if dense_pays(len(ops) - end, n):
                    psi = statevector.run_columns(ops[c:end], starts[c], values, n, zero=zero and c == 0)
                    return statevector.marginal_probabilities(psi.T @ self.tails[u], list(job.measured), n)
            psi = statevector.run_columns(ops[c:], starts[c], values, n, zero=zero and c == 0)
            return statevector.marginal_probabilities(psi.T, list(job.measured), n)
        common = [b for b in self.states if 0 < b <= first and b in job.boundaries]
        if not common:
            return None
        start = max(common)
        rel = tuple(b - start for b in job.boundaries if b > start)
        out = statevector.run_columns(ops[start:], self.states[start], values, n, rel)
        # the columns' transpose, as the run from the start reads it: the same bits through the same BLAS call
        return statevector.marginal_probabilities(out.T, list(job.measured), n)
