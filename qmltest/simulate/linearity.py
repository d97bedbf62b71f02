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

Written in the basis V_q(x)|0>, V_q(x)|1> of the reference's own local states instead, B_a is the
whole unchanged circuit run from X^a|0...0>: the same state for every split that flips the same
qubits, so splits share B_{} and the single flips, and each pair of features adds one state."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qmltest.model import readout
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


def local_bases(s: Split, job: program.Circuit, encoded: np.ndarray) -> np.ndarray:
    """(N, |Q|, 2, 2): per input and changed qubit the local unitary V_q(x), whose columns
    V_q|0>, V_q|1> are the basis the Gram matrices are written in."""
    n_in = len(encoded)
    values = program.values(job, encoded)
    out = np.empty((n_in, len(s.qubits), 2, 2), dtype=complex)
    for k, ops in enumerate(s.local):
        v = np.broadcast_to(np.eye(2, dtype=complex), (n_in, 2, 2))
        for op in ops:
            v = statevector.op_matrix(op, values, n_in) @ v
        out[:, k] = v
    return out


def local_states(s: Split, job: program.Circuit, encoded: np.ndarray, bases: np.ndarray | None = None) -> np.ndarray:
    """alpha (N, 2^|Q|): the products of the changed qubits' local states on these inputs, in the
    computational basis, or in `bases` (`local_bases` of the reference inputs) where given."""
    n_in = len(encoded)
    values = program.values(job, encoded)
    alpha = np.ones((n_in, 1), dtype=complex)
    for k, ops in enumerate(s.local):
        phi = np.zeros((n_in, 2), dtype=complex)
        phi[:, 0] = 1.0
        for op in ops:
            m = statevector.op_matrix(op, values, n_in)
            phi = phi @ m.T if m.ndim == 2 else np.einsum("nij,nj->ni", m, phi)
        if bases is not None:  # coordinates in V_q(x)'s columns: V_q(x)^H phi
            phi = np.einsum("nji,nj->ni", bases[:, k].conj(), phi)
        # the next qubit of s.qubits is the next bit of the index a (as the flips are numbered)
        alpha = np.concatenate([alpha * phi[:, :1], alpha * phi[:, 1:]], axis=1)
    return alpha


HOLD_BYTES = 4 * memory.CHUNK_BYTES
"""States `forms` holds at once per chunk of inputs (the shared ones and one split's own)."""


class Form:
    """Per input of a reference batch, the Gram matrices G (N, K + 1, A, A) of one split in the
    basis of the reference's local states (the last is the states' overlaps, whose quadratic form
    is the total probability). Built by `forms`, which shares states between splits."""

    def __init__(self, job: program.Circuit, s: Split, weights: np.ndarray, bases: np.ndarray, gram: np.ndarray):
        self.job, self.split, self.weights, self.bases, self.gram = job, s, weights, bases, gram

    @property
    def nbytes(self) -> int:
        return int(self.gram.nbytes + self.weights.nbytes + self.bases.nbytes)

    UNCHANGED = 1e-12
    """Amplitude off the reference's local states below which a change leaves every outcome
    probability within 2e-12 of the reference's (a DFC that adds 2 pi to an angle, say)."""

    def unchanged(self, encoded: np.ndarray) -> bool:
        """Whether these inputs leave every changed qubit in its reference local state up to a
        phase on every input: then the whole state is the reference's up to a phase, and the
        outcome probabilities (not only the class buckets) are the reference's."""
        alpha = local_states(self.split, self.job, encoded, self.bases)
        return bool(np.abs(alpha[:, 1:]).sum(axis=1).max(initial=0.0) <= self.UNCHANGED)

    def probabilities(self, encoded: np.ndarray) -> np.ndarray:
        """(N, K) class probabilities on inputs that differ from the reference only in the split's
        features (the caller checks that), divided by the total as `votes.class_q` divides."""
        alpha = local_states(self.split, self.job, encoded, self.bases)
        p = np.clip(np.einsum("na,ncab,nb->nc", alpha.conj(), self.gram, alpha).real, 0.0, None)
        return p[:, :-1] / p[:, -1:]


def flips(s: Split) -> list[frozenset[int]]:
    """The qubits flipped in basis state a of a split (bit k of a is qubit s.qubits[k])."""
    return [frozenset(q for k, q in enumerate(s.qubits) if (a >> k) & 1) for a in range(s.size)]


def cost(splits: list[Split]) -> int:
    """Simulations per input that `forms` runs for these splits: one per distinct flip set."""
    return len({f for s in splits for f in flips(s)})


def forms(job: program.Circuit, splits: list[Split], encoded: np.ndarray, matrix: np.ndarray) -> list[Form]:
    """The Gram forms of several splits of one circuit on one batch of inputs.

    In the basis V_q|0>, V_q|1> of the reference's own local states, basis state a of every split
    is the whole circuit run from X^F|0...0> (F the qubits a flips), whatever the split: a DFC
    mutant changing features (i, j) then needs B_{}, B_{i}, B_{j} (shared by every pair) and only
    B_{i,j} of its own, so the 120 feature pairs of 16 qubits cost 137 simulations per input,
    not 4 x 120. The overlaps of shared states are computed once as well."""
    weights = class_weights(job, matrix)
    n, n_in, k = job.num_qubits, len(encoded), weights.shape[0]
    real_w = np.ascontiguousarray(weights.real)
    shared = sorted({f for s in splits for f in flips(s) if len(f) <= 1}, key=sorted)
    own = max((sum(1 for f in flips(s) if len(f) > 1) for s in splits), default=0)
    chunk = max(1, HOLD_BYTES // ((len(shared) + own) * 16 * 2**n))
    grams = [np.empty((n_in, k, s.size, s.size), dtype=complex) for s in splits]
    ops = list(job.ops)
    for lo in range(0, n_in, chunk):
        part = encoded[lo : lo + chunk]
        values = program.values(job, part)

        def run(f: frozenset[int], values=values, part=part) -> np.ndarray:
            start = program.start_columns(job, part)
            flip = [statevector.Op((q,), matrix=X) for q in sorted(f)]
            return statevector.run_columns(flip + ops, start, values, n, (), zero=True)

        def overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            prod = a.conj() * b  # (2^n, c): the 0/1 weights as one real product over re and im
            g = real_w @ prod.view(float).reshape(prod.shape[0], -1)
            return g.reshape(k, -1, 2) @ np.array([1.0, 1.0j])  # (K, c)

        states = {f: run(f) for f in shared}
        pairs: dict[tuple[frozenset[int], frozenset[int]], np.ndarray] = {}
        for s, gram in zip(splits, grams):
            fs = flips(s)
            mine = {f: run(f) for f in fs if f not in states}
            for a, fa in enumerate(fs):
                for b in range(a, s.size):
                    fb = fs[b]
                    if fa in states and fb in states:
                        key = (fa, fb)
                        if key not in pairs:
                            pairs[key] = overlap(states[fa], states[fb])
                        g = pairs[key]
                    else:
                        g = overlap(states.get(fa, mine.get(fa)), states.get(fb, mine.get(fb)))
                    gram[lo : lo + chunk, :, a, b] = g.T
                    gram[lo : lo + chunk, :, b, a] = g.T.conj()
    return [Form(job, s, weights, local_bases(s, job, encoded), g) for s, g in zip(splits, grams)]


def form(job: program.Circuit, s: Split, encoded: np.ndarray, matrix: np.ndarray) -> Form:
    """The Gram form of one split (`forms` of one)."""
    return forms(job, [s], encoded, matrix)[0]
