"""Garbage-collector and allocator settings for long runs: the same in the CLI, on Dask workers and in
benchmarks.

A run makes hundreds of thousands of short-lived Python objects (IR gates, canonical entries, task
records) beside ~200k long-lived ones (Qiskit, Aer, numpy, Dask). CPython's defaults (700, 10, 10)
collect the young generation every 700 allocations and rescan the long-lived heap often; measured
on directed QML generation (32,692 DRNN mutants) the collector took more than half the time.
"""

from __future__ import annotations

import ctypes
import gc

THRESHOLDS = (50_000, 20, 20)
"""Young-generation threshold and the two older ratios: DRNN generation 0.056 -> 0.032 ms per mutant,
QCL 0.13 -> 0.10 (best of 7; 0.10 -> 0.09 on a quiet run). Garbage cycles wait for at most
50,000 allocations (a few MB) before they are freed."""


def settle(collect: bool = False) -> None:
    """Freeze what is alive now (imports, the loaded model) out of the collector, so full
    collections scan only what the run allocates, and raise the collection thresholds.

    `collect` first frees the garbage cycles alive now: frozen, they would never be freed. Worth a
    full collection (~0.15 s) where the process has already run something (a cluster starting in
    a long-lived client, a benchmark's second part); the CLI settles before any work, when there is
    only import-time garbage, and skips it."""
    if collect:
        gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    keep_arrays_on_heap()


HEAP_BYTES = 256 * 2**20
"""Allocations up to this size come from the heap, and up to twice it stays there when freed.

glibc maps every allocation above its mmap threshold (at most 32 MiB) afresh and unmaps it on
free, so each new large array costs a page fault per 4 KiB on first touch: on this VM filling a
fresh 52 MB array took 17.6 ms against 2.7 ms from the heap (100 MB: 50 against 5 ms). A 16-qubit
model's probabilities over 100 inputs are 52 MB per mutant, and their concatenation took 13% of a
16-qubit mutation run. The cost: up to 2 x HEAP_BYTES of freed memory stays with the process."""
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)


def keep_arrays_on_heap() -> bool:
    """Raise glibc's mmap and trim thresholds (see HEAP_BYTES); False where libc is not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, HEAP_BYTES)) and bool(libc.mallopt(M_TRIM_THRESHOLD, 2 * HEAP_BYTES))
    except (OSError, AttributeError):  # not Linux/glibc: the allocator's defaults stay
        return False
