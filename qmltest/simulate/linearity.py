"""Class probabilities on inputs changed in a few features, from a few shared states (issue 45).

A DFC mutant (efficient-QML paper Sec. IV-C2) is the original circuit on inputs whose features F
changed. Where every gate that reads F is a single-qubit gate on a qubit q that meets no
multi-qubit gate up to the last of them (angle encodings, Qiskit's z_feature_map), those gates
commute to the front and the final state is multilinear in the local states phi_q = V_q(x)|0>:

    psi(x') = sum_a alpha_a(x') B_a(x),   alpha_a = prod_q phi_q(x')[a_q],
    B_a = the rest of the circuit run from |a> on the qubits Q (the other features as they were),

so a class's probability is a quadratic form p_c(x') = alpha^H G_c alpha with the Gram matrix
G_c[a, b] = <B_a| Pi_c |B_b> (Pi_c the class's readout projector). 2^|Q| simulations per input
then serve every mutant that changes only F: exact, equal to simulating each mutant to rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qmltest import readout
from qmltest.simulate import memory, program, statevector

X = np.array([[0, 1], [1, 0]], dtype=complex)


@dataclass(frozen=True)
class Split:
    """The program cut in two: each changed qubit's local ops (up to the last that reads a changed
    feature, in order) and every other op, in order."""

    qubits: tuple[int, ...]
    local: tuple[tuple[statevector.Op, ...], ...]  # per qubit of `qubits`
    rest: tuple[statevector.Op, ...]

    @property
    def size(self) -> int:
        """States per input the Gram matrices need (2^|Q|)."""
        return 2 ** len(self.qubits)


def split(job: program.Circuit, columns: tuple[int, ...]) -> Split | None:
    """The split for changed input columns, or None where the state is not multilinear in them
    (a changed feature read by a multi-qubit gate, or after one on its qubit; amplitude inputs;
    mid-circuit measurements; several measurement bases)."""
    if job.amplitude or job.groups or not columns:
        return None
    changed = {job.inputs[c] for c in columns}
    ops = job.ops
    last: dict[int, int] = {}
    for k, op in enumerate(ops):
        if op.name == "dephase":
            return None
        if op.params & changed:
            if len(op.qubits) != 1:
                return None
            last[op.qubits[0]] = k
    if not last:
        return None
    local: dict[int, list[statevector.Op]] = {q: [] for q in last}
    rest: list[statevector.Op] = []
    for k, op in enumerate(ops):
        mine = [q for q in op.qubits if q in last and k <= last[q]]
        if not mine:
            rest.append(op)
        elif len(op.qubits) == 1:
            local[mine[0]].append(op)
        else:  # a multi-qubit gate on a changed qubit before its last changed read: entangled
            return None
    qubits = tuple(sorted(last))
    return Split(qubits, tuple(tuple(local[q]) for q in qubits), tuple(rest))


def class_weights(job: program.Circuit, matrix: np.ndarray) -> np.ndarray:
    """(K + 1, 2^n) 0/1 weights: which full basis states each class of a class readout counts,
    and a last row of ones (the total, which `votes.class_q` divides by)."""
    index = readout.state_index_map(list(job.measured), job.num_qubits)
    return np.ascontiguousarray(np.vstack([matrix[index].T, np.ones(2**job.num_qubits)]))


def local_states(s: Split, job: program.Circuit, encoded: np.ndarray) -> np.ndarray:
    """alpha (N, 2^|Q|): the products of the changed qubits' local states on these inputs."""
    n_in = len(encoded)
    values = program.values(job, encoded)
    alpha = np.ones((n_in, 1), dtype=complex)
    for ops in s.local:
        phi = np.zeros((n_in, 2), dtype=complex)
        phi[:, 0] = 1.0
        for op in ops:
            m = statevector.op_matrix(op, values, n_in)
            phi = phi @ m.T if m.ndim == 2 else np.einsum("nij,nj->ni", m, phi)
        # the next qubit of s.qubits is the next bit of the index a (as `Form` flips them)
        alpha = np.concatenate([alpha * phi[:, :1], alpha * phi[:, 1:]], axis=1)
    return alpha


class Form:
    """Per input of a reference batch, the Gram matrices G (N, K + 1, A, A) of one split (the last
    is the states' overlaps, whose quadratic form is the total probability)."""

    def __init__(self, job: program.Circuit, s: Split, encoded: np.ndarray, matrix: np.ndarray) -> None:
        self.job, self.split = job, s
        self.weights = class_weights(job, matrix)
        n, size = job.num_qubits, s.size
        chunk = max(1, memory.CHUNK_BYTES // (size * memory.required_bytes(n)))
        parts = [self._gram(encoded[lo : lo + chunk]) for lo in range(0, len(encoded), chunk)]
        k = self.weights.shape[0]
        self.gram = np.concatenate(parts) if parts else np.zeros((0, k, size, size), complex)

    def _gram(self, encoded: np.ndarray) -> np.ndarray:
        s, n = self.split, self.job.num_qubits
        values = program.values(self.job, encoded)
        states = []
        for a in range(s.size):
            flips = [statevector.Op((q,), matrix=X) for k, q in enumerate(s.qubits) if (a >> k) & 1]
            start = program.start_columns(self.job, encoded)
            states.append(statevector.run_columns(flips + list(s.rest), start, values, n, (), zero=True))
        out = np.empty((len(encoded), self.weights.shape[0], s.size, s.size), dtype=complex)
        for a in range(s.size):
            for b in range(a, s.size):
                prod = states[a].conj() * states[b]  # (2^n, N)
                g = self.weights @ prod  # (K, N)
                out[:, :, a, b] = g.T
                out[:, :, b, a] = g.T.conj()
        return out

    @property
    def nbytes(self) -> int:
        return int(self.gram.nbytes + self.weights.nbytes)

    def probabilities(self, encoded: np.ndarray) -> np.ndarray:
        """(N, K) class probabilities on inputs that differ from the reference only in the split's
        features (the caller checks that), divided by the total as `votes.class_q` divides."""
        alpha = local_states(self.split, self.job, encoded)
        p = np.clip(np.einsum("na,ncab,nb->nc", alpha.conj(), self.gram, alpha).real, 0.0, None)
        return p[:, :-1] / p[:, -1:]
