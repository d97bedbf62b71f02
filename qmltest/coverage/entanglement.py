"""Entanglement of a model's final states: the Meyer-Wallach measure Q (Meyer and Wallach, J. Math.
Phys. 43, 4273 (2002); the QCov prototype's KEC reads it, MinqiShao/qnn_qml tools/entanglement.py).

Q(psi) = 2 (1 - (1/n) sum_j tr(rho_j^2)), rho_j the reduced state of qubit j: 0 for a product
state, 1 for a GHZ state on two or more qubits. Exact on the numpy statevector engine, from the
state before measurement (noise-free, no shots: the value is a property of the state).
"""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError
from qmltest.simulate import memory, program, statevector


def meyer_wallach(states: np.ndarray, num_qubits: int) -> np.ndarray:
    """Q per row of (N, 2^n) normalised states."""
    psi = np.asarray(states, dtype=complex).reshape(len(states), *(2,) * num_qubits)
    purity = np.zeros(len(states))
    for j in range(1, num_qubits + 1):
        a = np.moveaxis(psi, j, 1).reshape(len(states), 2, -1)  # qubit j's two halves
        rho = np.einsum("nik,njk->nij", a, a.conj())
        purity += np.real(np.einsum("nij,nji->n", rho, rho))
    return np.clip(2.0 * (1.0 - purity / num_qubits), 0.0, 1.0)


def values(model: object, raw: np.ndarray, batch: int = 256) -> np.ndarray:
    """Q of the model's final state (all gates, before measurement) for each raw input."""
    if getattr(model, "is_kernel", False):
        raise InputError("entanglement coverage reads a circuit model's state; a kernel model has none")
    n = model.ir.num_qubits  # type: ignore[attr-defined]
    memory.check_size(n)
    job = program.of_model(model, "all")
    body = statevector.compile_gates(model.ir.gates)  # type: ignore[attr-defined]
    encoded = model.encode(np.asarray(raw, dtype=float))  # type: ignore[attr-defined]
    out = []
    for i in range(0, len(encoded), batch):
        start, vals = program.start_rows(job, encoded[i : i + batch])
        out.append(meyer_wallach(statevector.run(body, start, vals, n), n))
    return np.concatenate(out) if out else np.zeros(0)
