"""Which simulator runs a job: one registry of backend names and one dispatch rule.

- ``numpy``: qmltest's batched statevector (`statevector`), the fastest path for small circuits
  (no per-experiment overhead, prefix reuse across mutants);
- ``aer``: Qiskit Aer with batched parameter binds, the reference, fused and multi-threaded, the
  faster path for large circuits;
- ``gpu``: the array-API kernel (`arraykernel`) on CuPy, batched over inputs (``qmltest[gpu]``;
  noise-free; the same kernel runs on numpy in the default tests);
- ``auto`` (default): numpy up to CROSSOVER qubits, Aer above (never the GPU: its crossover is
  still to be measured on a device). The crossover is measured with
  `make bench-engine` (scaling table, hardware-efficient circuit, 64 inputs, exact probabilities).

A command chooses with `--backend`; `using` puts the choice in QMLTEST_BACKEND, where every
simulation of the process, and of the local worker processes it starts, reads it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from qmltest.errors import InputError

NAMES = ("auto", "numpy", "aer", "gpu")
CROSSOVER = 12
"""Largest qubit count that `auto` runs on numpy. Measured here (`make bench-engine`, 2 cores, 64
inputs, us per input, numpy vs Aer): 12 qubits 581 vs 986, 13: 1,813 vs 991, 14: 4,538 vs 1,023,
16: 36,077 vs 1,005."""
ENV = "QMLTEST_BACKEND"


def check(name: str) -> str:
    if name not in NAMES:
        raise InputError(f"unknown backend '{name}' (choose from {', '.join(NAMES)})")
    return name


def current() -> str:
    """The backend chosen for this process ($QMLTEST_BACKEND, set by `using`), else auto."""
    return check(os.environ.get(ENV) or "auto")


def resolve(name: str | None, num_qubits: int) -> str:
    """The concrete backend (numpy, aer or gpu) for a job of `num_qubits` qubits."""
    chosen = check(name) if name else current()
    if chosen == "auto":
        return "numpy" if num_qubits <= CROSSOVER else "aer"
    return chosen


@contextmanager
def using(name: str | None) -> Iterator[None]:
    """Run the block (and local workers started in it) with this backend; None changes nothing."""
    if name is None:
        yield
        return
    before = os.environ.get(ENV)
    os.environ[ENV] = check(name)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before
