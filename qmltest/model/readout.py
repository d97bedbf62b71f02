"""Readout: how probabilities over the measured register map to class scores and labels.

Every readout is a (2^m, C) score matrix W over the measured register (index bit i = measured
qubit i): class scores are ``probs @ W`` (or ``counts @ W`` under shots), the prediction is their
argmax and class probabilities are the scores renormalized. Two manifest forms build it:

- a table ``map[s] = class index or -1`` (basis, parity, ``x % C`` as Qiskit ML's VQC, any
  explicit map): W is one-hot per state;
- ``expectation``: Pauli-string observables read as EstimatorQNN does. One observable, two classes:
  class 1 when <P> > threshold (the sign for threshold 0, as qiskit-ml's NeuralNetworkClassifier);
  several observables: argmax_j <P_j>. Since <P> = P(+1) - P(-1), column j is the indicator of the
  +1 eigenspace of P_j and the argmax is unchanged; the threshold enters as a constant t/2 shift,
  which is linear because probabilities (or counts) sum to a constant. The basis changes that turn
  X/Y observables into Z measurements are appended by the engine (`basis_tails`); terms that do not
  commute qubit-wise are read in several bases, one block of 2^m rows per basis (`observable_columns`).
- ``expectation`` with a ``head`` {weight (C, J), bias (C)}: a classical linear layer over the J
  expectation values, as ``nn.Sequential(TorchConnector(qnn), nn.Linear(J, C))`` builds; the
  logits E A^T + b are again linear in the probabilities (they sum to one, so b is a constant
  row), hence one score matrix (2 E-columns - 1) A^T + 1 b^T. One row (C = 1) reads two classes
  by the logit's sign (BCEWithLogits style).
"""

from __future__ import annotations

import re

import numpy as np

from qmltest.errors import InputError

_TERM = re.compile(r"\s*([+-]?)\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)\s*\*?\s*)?([A-Za-z]+)\s*")


def terms(observable: str) -> list[tuple[float, str]]:
    """(coefficient, Pauli string) terms of an observable written as Qiskit labels: 'ZZII', '-ZI',
    '0.5*ZZII+0.5*IIZZ' (one output: a weighted sum with real coefficients)."""
    if not isinstance(observable, str) or not observable.strip():
        raise InputError(f"observable {observable!r} must be a Pauli string or a weighted sum of them")
    out, pos, text = [], 0, observable.strip()
    while pos < len(text):
        m = _TERM.match(text, pos)
        if not m or m.end() == pos or (out and not m.group(1)):
            raise InputError(f"observable '{observable}': cannot read a term at '{text[pos:]}' (e.g. 0.5*ZZ+0.5*IZ)")
        sign = -1.0 if m.group(1) == "-" else 1.0
        coef = sign * (float(m.group(2)) if m.group(2) else 1.0)
        label = m.group(3).upper()
        if set(label) - PAULIS:
            raise InputError(f"observable '{observable}': '{m.group(3)}' is not a Pauli string over I, X, Y, Z")
        out.append((coef, label))
        pos = m.end()
    return out


def canonical(observable: str) -> str:
    """The manifest form of an observable written in Qiskit's label syntax (`written`)."""
    return written(terms(observable))


def written(parts: list[tuple[float, str]]) -> str:
    """(coefficient, Pauli string) terms as the manifest writes them: a single unit term as its
    label, a sum as 'c*P+c*P' with exact floats."""
    if len(parts) == 1 and parts[0][0] == 1.0:
        return parts[0][1]
    return "".join(("+" if c >= 0 and i else "") + f"{c!r}*{p}" for i, (c, p) in enumerate(parts))


def labels(observables: list[str]) -> list[str]:
    """Every Pauli string of every term."""
    return [p for obs in observables for _, p in terms(obs)]


KINDS = ("basis", "parity", "modulo", "map", "expectation", "kernel")
PAULIS = frozenset("IXYZ")


def table(kind: str, num_measured: int, num_classes: int) -> list[int]:
    """Build a readout table: 'basis' (state k -> class k), 'parity' or 'modulo' (s % C)."""
    states = range(2**num_measured)
    if kind == "basis":
        if num_classes > 2**num_measured:
            raise InputError(f"readout 'basis': {num_classes} classes need more than {num_measured} qubits")
        return [s if s < num_classes else -1 for s in states]
    if kind == "parity":
        if num_classes != 2:
            raise InputError("readout 'parity' needs exactly 2 classes")
        return [bin(s).count("1") % 2 for s in states]
    if kind == "modulo":
        return [s % num_classes for s in states]
    raise InputError(f"unknown readout kind '{kind}' (basis, parity, modulo)")


def check_observables(observables: list[str], num_qubits: int, num_classes: int, head: dict | None = None) -> None:
    """Pauli strings (Qiskit order: last character = qubit 0) of the right width (terms that do
    not commute qubit-wise are read in several bases, `measurement_bases`); with a linear `head`, its shape fits the
    observables and the classes."""
    if not observables:
        raise InputError("readout 'expectation' needs at least one observable")
    for obs in observables:
        parts = terms(obs)
        for _, label in parts:
            if len(label) != num_qubits:
                raise InputError(f"observable '{obs}' has width {len(label)} but the circuit has {num_qubits} qubits")
        if all(set(label) == {"I"} or c == 0 for c, label in parts):
            raise InputError(f"observable '{obs}' is a multiple of the identity: it carries no class information")
    if num_classes == 0:  # a regressor: one real output
        outputs = len(observables) if head is None else np.asarray(head.get("bias", []), dtype=float).size
        if head is not None:
            check_head(head, len(observables), 0)
        if outputs != 1:
            raise InputError(f"a regressor reads one output (one observable, or a head of one row), got {outputs}")
    elif head is not None:
        check_head(head, len(observables), num_classes)
    elif len(observables) == 1 and num_classes != 2:
        raise InputError(f"one observable reads out exactly 2 classes (sign or threshold), got {num_classes}")
    elif len(observables) > 1 and len(observables) != num_classes:
        raise InputError(f"{len(observables)} observables need {len(observables)} classes (argmax), got {num_classes}")


def check_head(head: dict, num_outputs: int, num_classes: int) -> None:
    """A linear head: weight (C, J) over the J expectation values and bias (C), finite; C rows read
    C classes by argmax, one row reads two classes by its sign."""
    try:
        w = np.asarray(head["weight"], dtype=float)
        b = np.asarray(head["bias"], dtype=float)
    except (KeyError, TypeError, ValueError):
        raise InputError("readout head must be {'weight': [[...]], 'bias': [...]} of numbers") from None
    if w.ndim != 2 or w.shape[1] != num_outputs:
        raise InputError(
            f"readout head weight must be (classes, {num_outputs}) for {num_outputs} observables, got {w.shape}"
        )
    if b.shape != (w.shape[0],):
        raise InputError(f"readout head bias must have {w.shape[0]} entries, got {b.shape}")
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(b))):
        raise InputError("readout head weight and bias must be finite")
    rows = w.shape[0]
    if num_classes and rows != num_classes and not (rows == 1 and num_classes == 2):
        raise InputError(f"readout head has {rows} output(s) but the model has {num_classes} classes")


def head_outputs(values: np.ndarray, head: dict | None) -> np.ndarray:
    """Logits of a linear head over expectation values (the values themselves without a head)."""
    if head is None:
        return values
    return values @ np.asarray(head["weight"], dtype=float).T + np.asarray(head["bias"], dtype=float)


def support(observables: list[str]) -> list[int]:
    """Qubits some term of some observable acts on (the measured register of an expectation readout)."""
    return sorted({q for obs in labels(observables) for q, p in enumerate(reversed(obs)) if p != "I"})


def measurement_bases(observables: list[str]) -> list[dict[int, str]]:
    """Qubit-wise commuting groups of the observables' Pauli terms, each as the Pauli measured per
    qubit: first fit in order of appearance (deterministic; Qiskit's estimators group the same way
    up to order). One group for commuting observables; several when a qubit is read in two bases."""
    bases: list[dict[int, str]] = []
    for label in labels(observables):
        need = {q: p for q, p in enumerate(reversed(label)) if p != "I"}
        for basis in bases:
            if all(basis.get(q, p) == p for q, p in need.items()):
                basis.update(need)
                break
        else:
            bases.append(dict(need))
    return [dict(sorted(b.items())) for b in bases] or [{}]


def group_of(label: str, bases: list[dict[int, str]]) -> int:
    """Index of the first basis that measures every non-identity qubit of `label` in its Pauli."""
    for g, basis in enumerate(bases):
        if all(p == "I" or basis.get(q) == p for q, p in enumerate(reversed(label))):
            return g
    raise ValueError(f"no measurement basis reads {label}")  # measurement_bases covers every term


def plus_indicators(observables: list[str], measured: list[int]) -> np.ndarray:
    """(2^m, J): 1 where basis state s is in the +1 eigenspace of observable j (measured basis)."""
    states = np.arange(2 ** len(measured))
    cols = []
    for obs in observables:
        mask = sum(1 << b for b, q in enumerate(measured) if obs[len(obs) - 1 - q] != "I")
        odd = np.array([bin(int(s) & mask).count("1") % 2 for s in states], dtype=float)
        cols.append(1.0 - odd)
    return np.stack(cols, axis=1)


def observable_columns(observables: list[str], measured: list[int]) -> np.ndarray:
    """(G 2^m, J): (1 + G sum_{t in g} c_t P_t(s)) / 2 for row (g, s), the outcome s of the measured
    register in measurement basis g (`measurement_bases`) with P_t(s) = +-1.

    The engine returns one row per input over (g, s) with probability p_g(s) / G (each basis chosen
    with weight 1/G), so probs @ column j is (1 + <O_j>) / 2; with one basis (G = 1) this is the
    plain measured-basis form, and for one unit Pauli term the +1 indicator.
    """
    bases = measurement_bases(observables)
    size, count = 2 ** len(measured), len(bases)
    cols = np.zeros((count * size, len(observables)))
    for j, obs in enumerate(observables):
        acc = np.zeros((count, size))
        for c, p in terms(obs):
            acc[group_of(p, bases)] += c * (2 * plus_indicators([p], measured)[:, 0] - 1)
        cols[:, j] = (1.0 + count * acc.reshape(-1)) / 2
    return cols


def expectation_matrix(
    observables: list[str], measured: list[int], threshold: float = 0.0, head: dict | None = None
) -> np.ndarray:
    """(2^m, C) score matrix of an expectation readout over the measured qubits (module docstring)."""
    plus = observable_columns(observables, measured)
    if head is not None:
        logits = head_outputs(2 * plus - 1, head)  # rows are basis states: E(s) A^T + b
        return np.concatenate([-logits / 2, logits / 2], axis=1) if logits.shape[1] == 1 else logits
    if len(observables) == 1:
        return np.stack([1.0 - plus[:, 0] + threshold / 2, plus[:, 0] - threshold / 2], axis=1)
    return plus


def value_matrix(observables: list[str], measured: list[int], head: dict | None = None) -> np.ndarray:
    """(G 2^m, 1) output column of a regressor: probs @ V is <O> (one observable) or the head's
    E A^T + b over the J values, exactly as EstimatorQNN.forward (and the head) compute it; linear
    because each row of probabilities sums to one, so shot frequencies give the plug-in estimate."""
    values = 2 * observable_columns(observables, measured) - 1
    return head_outputs(values, head)[:, :1] if head is not None else values[:, :1]


def basis_tails(readout: dict) -> list[list[tuple[str, int]]]:
    """Per measurement basis, the gates (name, qubit) that turn its X/Y reads into Z measurements;
    one empty tail for a map readout."""
    if readout.get("kind") != "expectation":
        return [[]]
    tails = []
    for basis in measurement_bases(readout["observables"]):
        out: list[tuple[str, int]] = []
        for q, p in basis.items():
            if p == "X":
                out.append(("h", q))
            elif p == "Y":
                out += [("sdg", q), ("h", q)]
        tails.append(out)
    return tails


def matrix(readout: dict, num_classes: int) -> np.ndarray:
    """The score matrix of a manifest's readout (either form); a regressor's (no classes) is its
    output column (`value_matrix`); a kernel model's is over its kernel outcomes (`kernel.matrix`)."""
    if readout.get("kind") == "kernel":
        from qmltest.model import kernel

        return kernel.matrix(readout, num_classes)
    if readout.get("kind") == "expectation" and num_classes == 0:
        return value_matrix(readout["observables"], readout["qubits"], readout.get("head"))
    if readout.get("kind") == "expectation":
        return expectation_matrix(
            readout["observables"], readout["qubits"], float(readout.get("threshold", 0.0)), readout.get("head")
        )
    return class_matrix(readout["map"], num_classes)


def class_matrix(mapping: list[int] | np.ndarray, num_classes: int) -> np.ndarray:
    """(2^m, C) 0/1 matrix so that probs @ M sums the states of each class (a matrix passes through)."""
    if isinstance(mapping, np.ndarray) and mapping.ndim == 2:
        return mapping
    table = np.asarray(mapping, dtype=int)
    m = np.zeros((len(table), num_classes))
    rows = np.flatnonzero(table >= 0)
    m[rows, table[rows]] = 1.0  # vectorized: a Python loop over 2^16 states per mutant took a minute
    return m


def class_probabilities(probs: np.ndarray, mapping: list[int] | np.ndarray, num_classes: int) -> np.ndarray:
    """Class probabilities, renormalized over the states that carry a class."""
    q = np.clip(probs @ class_matrix(mapping, num_classes), 0.0, None)
    total = q.sum(axis=1, keepdims=True)
    return q / np.where(total > 0, total, 1.0)


def predict(probs: np.ndarray, mapping: list[int] | np.ndarray, num_classes: int) -> np.ndarray:
    """Predicted class index per row (exact probabilities or shot counts); ties go to the lower."""
    return np.argmax(probs @ class_matrix(mapping, num_classes), axis=1)


def expectation_values(probs: np.ndarray, observables: list[str], measured: list[int]) -> np.ndarray:
    """<O_j> per row from probabilities over the measured register (in the measured basis)."""
    return probs @ (2 * observable_columns(observables, measured) - 1)


def state_index_map(measured: list[int], n: int) -> np.ndarray:
    """For every full basis index j, the index of its measured-register state."""
    j = np.arange(2**n)
    out = np.zeros(2**n, dtype=int)  # an array even for an empty register (every state -> outcome 0)
    for i, q in enumerate(measured):
        out |= ((j >> q) & 1) << i
    return out


def marginalize(full: np.ndarray, measured: list[int], n: int) -> np.ndarray:
    """Probabilities over `measured` from probabilities over all n qubits (N, 2^n)."""
    out = np.zeros((full.shape[0], 2 ** len(measured)))
    idx = state_index_map(measured, n)
    for s in range(out.shape[1]):
        out[:, s] = full[:, idx == s].sum(axis=1)
    return out


# ---------------------------------------------------------------- class readouts

BUCKET_OUTCOMES = 1024
"""Past this many readout outcomes a class readout's single vote is drawn per class bucket."""


def is_class_readout(cmat: np.ndarray) -> bool:
    """A 0/1 readout where every state carries at most one class (the vote is a count majority)."""
    return bool(np.all((cmat == 0) | (cmat == 1)) and np.all(cmat.sum(axis=1) <= 1))


def normalized(probs: np.ndarray) -> np.ndarray:
    """Probabilities clipped at 0 and renormalized per row (rounding leaves tiny negatives)."""
    p = np.clip(probs, 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


def class_q(probs: np.ndarray, cmat: np.ndarray) -> np.ndarray:
    """Class probabilities of a class readout from state probabilities (clipped, renormalized).

    Past `BUCKET_OUTCOMES` outcomes the classes are summed before the division, and the clip
    is skipped when nothing is negative (a statevector's are not): two reads of the outcomes
    instead of five passes and two new arrays (16 qubits, 100 inputs: 5.9 against 11 ms per
    call). Equal up to rounding (1e-16); narrower readouts keep the arithmetic the shipped
    results were made with."""
    if probs.shape[1] <= BUCKET_OUTCOMES:
        return normalized(probs) @ cmat
    p = probs if probs.min() >= 0 else np.clip(probs, 0.0, None)
    return (p @ cmat) / p.sum(axis=1, keepdims=True)


def needed_bits(matrix: np.ndarray) -> list[int]:
    """The outcome bits (bit k of an outcome index: the k-th measured qubit) the readout's class
    scores depend on: bit k is left out when flipping it never changes a row of `matrix`
    (x % 2 over 20 measured qubits depends on bit 0 alone). Exact comparison."""
    rows = matrix.shape[0]
    m = rows.bit_length() - 1
    if rows != 1 << m:
        return list(range(max(m, 0)))
    needed = []
    for k in range(m):
        pairs = matrix.reshape(rows >> (k + 1), 2, 1 << k, -1)
        if not np.array_equal(pairs[:, 0], pairs[:, 1]):
            needed.append(k)
    return needed


def on_bits(matrix: np.ndarray, bits: list[int]) -> np.ndarray:
    """The readout matrix over the outcomes of `bits` alone (the rows where every other bit is 0,
    ordered by those bits): what the marginal over the qubits of `bits` is read with."""
    index = np.zeros(1 << len(bits), dtype=np.int64)
    for i, k in enumerate(bits):
        index |= ((np.arange(1 << len(bits)) >> i) & 1) << k
    return np.ascontiguousarray(matrix[index])
