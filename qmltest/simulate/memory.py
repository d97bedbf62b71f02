"""How much memory a simulation needs, and the one refusal when it does not fit.

One formula per method: a statevector job holds three states (input, output, spare) of
16 x 2^n bytes per input; a density-matrix job three vectors of 16 x 4^n bytes. Every backend
asks here before work, so a job too wide for the machine is one line and exit 2, not a
MemoryError halfway.
"""

from __future__ import annotations

import os

from qmltest.errors import InputError

MAX_STATE_BYTES = 8 * 2**30
"""Refuse a job whose single statevector working set would exceed this (16 bytes x 2^n x 3)."""
CHUNK_BYTES = 64 * 2**20
"""Working set of one batch (three states). Small enough that every state array stays under
glibc's 32 MiB mmap ceiling and is reused from the heap: a fresh mapping costs a page fault per
4 KiB on first touch, and at 16 qubits 85-input batches ran 13-20 ms per input, 21-input ones 10.5."""
MAX_DENSITY_BYTES = 4 * 2**30
"""The largest density-matrix working set the density engines and Aer's density method take."""


def required_bytes(num_qubits: int, batch: int = 1) -> int:
    """Statevector working set of `batch` inputs."""
    return 3 * 16 * (2**num_qubits) * batch


def density_bytes(num_qubits: int, batch: int = 1) -> int:
    """Density-matrix working set of `batch` inputs."""
    return 3 * 16 * 4**num_qubits * batch


def density_fits(num_qubits: int) -> bool:
    """Whether one density matrix of this width fits MAX_DENSITY_BYTES (else trajectories)."""
    return density_bytes(num_qubits) <= MAX_DENSITY_BYTES


def available_bytes() -> int:
    """Memory this process can still use: MemAvailable from /proc/meminfo, else physical pages."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return MAX_STATE_BYTES


def check_size(num_qubits: int, method: str = "statevector", batch: int = 1) -> None:
    """Refuse before any work a job whose working set exceeds the simulator's limit or the machine's
    available memory (exit 2, naming both numbers), instead of a MemoryError halfway."""
    need = required_bytes(num_qubits, batch) if method == "statevector" else density_bytes(num_qubits, batch)
    limit = min(MAX_STATE_BYTES, int(0.8 * available_bytes()))
    if need > limit:
        raise InputError(
            f"{num_qubits} qubits need about {need / 2**30:.2f} GiB for the {method} method, "
            f"but {limit / 2**30:.2f} GiB are available: too many qubits for this simulator"
        )


def batch_budget(free: int | None, per_item: int, what: str, name: str) -> int:
    """How many states of `per_item` bytes one batch holds: half the `free` device memory, or
    CHUNK_BYTES on the host (free None); one line, exit 2, when not even one fits."""
    budget = CHUNK_BYTES if free is None else free // 2
    if per_item > budget:
        raise InputError(
            f"{what} needs {per_item / 2**30:.2f} GiB per input on the {name} backend, "
            f"but {budget / 2**30:.2f} GiB are free there"
        )
    return max(1, budget // per_item)
