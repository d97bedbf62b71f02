"""The simulator seam: one `Backend` interface and one `Registry` of them.

A backend turns a compiled program (`program.Circuit`) and a batch of encoded inputs into exact
output probabilities; what it can do beyond that it states in `Capabilities`, and callers ask
those flags, never its name. The entries (numpy, aer, gpu, and the fake-device path) live in
`qmltest.simulate.backends`, one file each, registered there by one line. ``auto`` picks, among
the entries that take part in it, the lowest `estimate_us` for the job (ties: the first
registered), the cost model measured by `make bench-engine`.

A choice is passed explicitly (a name or a Backend) to `engine.probabilities`, to an
`Evaluator`, to every worker task; nothing is read from the environment.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from qmltest.errors import InputError

AUTO = "auto"


@dataclass(frozen=True)
class Capabilities:
    """What a backend does beyond noise-free probabilities of one program."""

    auto: bool = False
    """A candidate of ``auto`` (its `estimate_us` is measured, not a guess)."""
    prefix_reuse: bool = False
    """Mutants may resume from the original's cached states (`resume.Checkpoints`, numpy arrays)."""
    mutant_batching: bool = False
    """`probabilities_many` runs several programs as one mutants x inputs batch (worth a prefetch)."""
    noise: bool = False
    """`noisy` runs a noise config's channels."""
    device_targets: bool = True
    """A fake-device target may run while this backend is chosen (on the registry's target entry)."""
    targets: bool = False
    """This entry runs fake-device targets (the registry sends them here)."""
    selectable: bool = True
    """Named by `--backend` (the target entry is reached through `--target fake:NAME` instead)."""


def interpolated(table: tuple[tuple[int, float], ...], num_qubits: int) -> float:
    """A measured per-width figure at `num_qubits`: linear between the table's widths, the end
    rows' values beyond them."""
    widths = [w for w, _ in table]
    return float(np.interp(num_qubits, widths, [v for _, v in table]))


class Backend(ABC):
    """One simulator. Subclasses set `name`, `help` and `capabilities` and implement
    `probabilities`; the rest have defaults a small backend can keep."""

    name: ClassVar[str]
    help: ClassVar[str]
    capabilities: ClassVar[Capabilities] = Capabilities()

    @abstractmethod
    def probabilities(self, job: object, encoded: np.ndarray) -> np.ndarray:
        """Exact probabilities (N, 2^m) over `job.measured` for encoded inputs (angles (N, F) or
        amplitude states (N, 2^n)); one measurement basis (the engine splits the others off)."""

    def noisy(self, job: object, encoded: np.ndarray, noise: object) -> np.ndarray:
        """Noisy probabilities (N, 2^m) under a NoiseConfig (not all-zero)."""
        raise InputError(f"the {self.name} backend runs no noise model: use --backend numpy or aer")

    def probabilities_many(self, jobs: list, encoded: np.ndarray) -> list[np.ndarray]:
        """Probabilities of several programs (a model's mutants) on the same inputs, each as
        `probabilities` returns it. Default: one after another."""
        return [self.probabilities(job, encoded) for job in jobs]

    def estimate_us(self, num_qubits: int, measured: int, ops: int) -> float:
        """Estimated microseconds per input (the cost model ``auto`` compares)."""
        return float("inf")

    def mutant_us(self, num_qubits: int, measured: int, ops: int, inputs: int) -> float:
        """Estimated microseconds per (mutant, input) in a mutation run that sends each mutant with
        `inputs` inputs (what ``auto`` compares for mutate and its projection); default: a fresh
        run per mutant, `estimate_us`."""
        return self.estimate_us(num_qubits, measured, ops)

    def __repr__(self) -> str:
        return f"<backend {self.name}>"


class Registry:
    """Backends by name, in registration order; `resolve` turns ``auto`` into one of them."""

    def __init__(self) -> None:
        self._entries: dict[str, Backend] = {}

    def register(self, backend: Backend) -> Backend:
        """Add a backend (its name must be new and not ``auto``); returns it."""
        if backend.name == AUTO or backend.name in self._entries:
            raise ValueError(f"backend name '{backend.name}' is taken")
        self._entries[backend.name] = backend
        return backend

    def unregister(self, name: str) -> None:
        """Remove a backend (a test's toy backend)."""
        self._entries.pop(name, None)

    def names(self) -> tuple[str, ...]:
        """What `--backend` accepts: auto, then every selectable entry."""
        return (AUTO,) + tuple(n for n, b in self._entries.items() if b.capabilities.selectable)

    def help(self) -> str:
        """One help text for `--backend`, read from the entries."""
        return "Simulator: " + "; ".join(
            [f"{AUTO} (the fastest of {', '.join(self._auto_names())} by a measured cost model)"]
            + [f"{b.name} ({b.help})" for b in self._entries.values() if b.capabilities.selectable]
        )

    def _auto_names(self) -> list[str]:
        return [n for n, b in self._entries.items() if b.capabilities.auto]

    def check(self, name: str) -> str:
        """`name` when `--backend` accepts it, else one line (exit 2) listing what it accepts."""
        if name not in self.names():
            raise InputError(f"unknown backend '{name}' (choose from {', '.join(self.names())})")
        return name

    def get(self, name: str) -> Backend:
        """The entry of a concrete name (auto depends on the job: `resolve`)."""
        if name == AUTO:
            raise ValueError("auto is resolved per job: use Registry.resolve or for_job")
        return self._entries[self.check(name)]

    def resolve(
        self, choice: str | Backend | None, num_qubits: int, measured: int = 1, ops: int | None = None
    ) -> Backend:
        """The concrete backend for a job of `num_qubits` qubits reading out `measured` of them with
        `ops` compiled ops (default 10 per qubit); `choice` None means auto."""
        if isinstance(choice, Backend):
            return choice
        name = self.check(choice or AUTO)
        if name != AUTO:
            return self._entries[name]
        length = 10 * num_qubits if ops is None else ops
        candidates = [self._entries[n] for n in self._auto_names()]
        return min(candidates, key=lambda b: b.estimate_us(num_qubits, measured, length))

    def for_mutants(self, choice: str | Backend | None, job: object, inputs: int) -> Backend:
        """The backend of a mutation run of `job`'s model, each mutant on `inputs` inputs: the
        chosen one, or for auto the lowest `mutant_us` (prefix reuse and per-mutant costs count)."""
        if isinstance(choice, Backend) or (choice or AUTO) != AUTO:
            return self.for_job(choice, job)
        n, m, ops = job.num_qubits, len(job.measured), len(job.ops)  # type: ignore[attr-defined]
        return min((self._entries[name] for name in self._auto_names()), key=lambda b: b.mutant_us(n, m, ops, inputs))

    def for_job(self, choice: str | Backend | None, job: object) -> Backend:
        """`resolve` for a program: its width, readout and compiled length."""
        return self.resolve(choice, job.num_qubits, len(job.measured), len(job.ops))  # type: ignore[attr-defined]

    def for_run(self, choice: str | Backend | None, job: object, noise: object = None) -> Backend:
        """The backend that runs a job under `noise`: the chosen one, or the target entry when the
        noise config names a fake device (refused in one line where the choice cannot hand off)."""
        chosen = self.for_job(choice, job)
        if noise is None or not _targets_device(noise):
            return chosen
        if not chosen.capabilities.device_targets:
            raise InputError(
                f"the {chosen.name} backend runs a config's noise channels on density matrices that fit in memory; "
                "for a fake device or a wider model use --backend numpy or aer"
            )
        for entry in self._entries.values():
            if entry.capabilities.targets:
                return entry
        raise InputError("no backend that runs fake-device targets is registered")


def _targets_device(noise: object) -> bool:
    """Whether a NoiseConfig names a fake device (its [backend] table)."""
    has = getattr(noise, "has", None)
    return bool(has and has("backend"))
