"""Which simulator runs a job: one registry of backend names and one dispatch rule.

- ``numpy``: qmltest's batched statevector (`statevector`), the fastest path for small circuits
  (no per-experiment overhead, prefix reuse across mutants);
- ``aer``: Qiskit Aer with batched parameter binds, the reference, fused and multi-threaded, the
  faster path for large circuits;
- ``gpu``: the array-API kernel (`arraykernel`) on CuPy (``qmltest[gpu]``), batched over inputs,
  or mutants x inputs in `mutate`; config noise on density matrices; the same kernel runs on numpy
  in the default tests;
- ``auto`` (default): whichever of numpy and Aer the cost model `estimate_us` says is faster for
  the job's width, readout and length (never the GPU: its costs are still to be measured on a
  device). The constants are measured with `make bench-engine` (scaling table).

A command chooses with `--backend`; `using` puts the choice in QMLTEST_BACKEND, where every
simulation of the process, and of the local worker processes it starts, reads it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from qmltest.errors import InputError

NAMES = ("auto", "numpy", "aer", "gpu")
NUMPY_NS_PER_OP_AMPLITUDE = 0.5
"""numpy: time per compiled op and state amplitude, fused (`make bench-engine` scaling table,
hardware-efficient circuit, 64 inputs, 2 cores: 0.40-0.97 ns from 12 to 20 qubits, median 0.46,
with passes split over the cores; 0.7 before). One readout qubit: numpy up to 11 qubits (measured
118-120 against Aer's 140-143 us per input), Aer from 12 (126-186 against numpy's 193-235)."""
AER_US_PER_INPUT = 150.0
"""Aer, batched binds: fixed cost per input (130-220 us per input at 8-13 qubits, one readout qubit)."""
AER_US_PER_OUTCOME = 0.18
"""Aer: cost per readout probability and input (returning 2^m values through its result object:
20 qubits, all read, 187 ms per input against 0.3 ms for one; 0.13-0.24 us from 12 to 20)."""
AER_NS_PER_OP_AMPLITUDE = 0.015
"""Aer: time per op and amplitude (fused, vectorized; 40x below numpy's)."""


def estimate_us(backend: str, num_qubits: int, measured: int, ops: int) -> float:
    """Estimated microseconds per input of a job on numpy or Aer (the cost model `auto` uses)."""
    amplitudes = 2.0**num_qubits
    if backend == "numpy":
        return NUMPY_NS_PER_OP_AMPLITUDE * 1e-3 * ops * amplitudes
    return AER_US_PER_INPUT + AER_US_PER_OUTCOME * 2.0**measured + AER_NS_PER_OP_AMPLITUDE * 1e-3 * ops * amplitudes


ENV = "QMLTEST_BACKEND"


def check(name: str) -> str:
    if name not in NAMES:
        raise InputError(f"unknown backend '{name}' (choose from {', '.join(NAMES)})")
    return name


def current() -> str:
    """The backend chosen for this process ($QMLTEST_BACKEND, set by `using`), else auto."""
    return check(os.environ.get(ENV) or "auto")


def resolve(name: str | None, num_qubits: int, measured: int = 1, ops: int | None = None) -> str:
    """The concrete backend (numpy, aer or gpu) for a job of `num_qubits` qubits reading out
    `measured` of them with `ops` compiled ops (default: 10 per qubit)."""
    chosen = check(name) if name else current()
    if chosen == "auto":
        length = 10 * num_qubits if ops is None else ops
        numpy = estimate_us("numpy", num_qubits, measured, length)
        return "numpy" if numpy <= estimate_us("aer", num_qubits, measured, length) else "aer"
    return chosen


def for_job(name: str | None, job) -> str:
    """`resolve` for an engine job (`engine.Circuit`): its width, readout and compiled length."""
    return resolve(name, job.num_qubits, len(job.measured), len(job.ops))


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
