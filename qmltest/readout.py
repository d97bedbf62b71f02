"""Readout: how probabilities over the measured register map to class probabilities and labels.

The manifest stores an explicit table `map[s] = class index or -1` for every basis state s of the
measured register (index bit i = measured qubit i), so parity, ``x % num_classes`` (Qiskit ML's
VQC default) and one-state-per-class readouts are all the same code.
"""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError


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


def class_matrix(mapping: list[int], num_classes: int) -> np.ndarray:
    """(2^m, C) 0/1 matrix so that probs @ M sums the states of each class."""
    m = np.zeros((len(mapping), num_classes))
    for s, c in enumerate(mapping):
        if c >= 0:
            m[s, c] = 1.0
    return m


def class_probabilities(probs: np.ndarray, mapping: list[int], num_classes: int) -> np.ndarray:
    """Class probabilities, renormalized over the states that carry a class."""
    q = probs @ class_matrix(mapping, num_classes)
    total = q.sum(axis=1, keepdims=True)
    return q / np.where(total > 0, total, 1.0)


def predict(probs: np.ndarray, mapping: list[int], num_classes: int) -> np.ndarray:
    """Predicted class index per row (exact probabilities or shot counts); ties go to the lower."""
    return np.argmax(probs @ class_matrix(mapping, num_classes), axis=1)
