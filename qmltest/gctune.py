"""Garbage-collector settings for long runs: the same in the CLI, on Dask workers and in benchmarks.

A run makes hundreds of thousands of short-lived Python objects (IR gates, canonical entries, task
records) beside ~200k long-lived ones (Qiskit, Aer, numpy, Dask). CPython's defaults (700, 10, 10)
collect the young generation every 700 allocations and rescan the long-lived heap often; measured
on directed QML generation (32,692 DRNN mutants) the collector took more than half the time.
"""

from __future__ import annotations

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
