"""numpy: qmltest's batched statevector (`statevector`, fused past 12 qubits), the fastest path for
small circuits (no per-experiment overhead; mutants resume from the original's checkpoints), and
the numpy density-matrix engine (`density`) for a config's noise where it applies."""

from __future__ import annotations

import numpy as np

from qmltest.simulate import memory, program, statevector
from qmltest.simulate.backend import Backend, Capabilities, interpolated

NS_PER_OP_AMPLITUDE = 0.5
"""Time per compiled op and state amplitude, fused (`make bench-engine` scaling table,
hardware-efficient circuit, 64 inputs, 2 cores: 0.40-0.97 ns from 12 to 20 qubits, median 0.46,
with passes split over the cores; 0.7 before). One readout qubit: numpy up to 11 qubits (measured
118-120 against Aer's 140-143 us per input), Aer from 12 (126-186 against numpy's 193-235)."""


MUTANT_NS = ((12, 0.48), (16, 0.55), (20, 0.97))
"""Measured ns per op and amplitude per (mutant, input) in a mutation run, QML mutants resumed from
the original's checkpoints (2 cores, z_feature_map + real_amplitudes(reps=2), 30, 20 and 6 mutants
on 100, 50 and 10 inputs; `benchmarks/scale.py`); linear in the width between the rows."""


class NumpyBackend(Backend):
    name = "numpy"
    help = "batched statevector, prefix reuse across mutants; density matrices under noise"
    capabilities = Capabilities(auto=True, prefix_reuse=True, noise=True)

    def probabilities(self, job: program.Circuit, encoded: np.ndarray) -> np.ndarray:
        n = job.num_qubits
        chunk = max(1, memory.CHUNK_BYTES // memory.required_bytes(n))
        starts = range(0, len(encoded), chunk)
        if not starts:
            return np.zeros((0, 2 ** len(job.measured)))
        # one batch at a time: two threads over the batches gained nothing on 2 cores (16 qubits,
        # 100 inputs: 6.8 against 6.8 ms per input): the passes are bound by memory bandwidth
        return np.concatenate([_batch(job, encoded[lo : lo + chunk]) for lo in starts])

    def noisy(self, job: program.Circuit, encoded: np.ndarray, noise: object) -> np.ndarray:
        """The density-matrix engine where `noisy.numpy_applies`, else Aer's noisy path."""
        from qmltest.simulate import aer_jobs as aer  # Aer's noise module: loaded for noisy runs only
        from qmltest.simulate import density, noisy

        inputs, feats = program.bound_inputs(job, encoded)
        circuit = aer.dephased(job.circuit)[0]
        run = density.Prepared.run if noisy.numpy_applies(circuit, noise) else None  # type: ignore[arg-type]
        return noisy.probabilities(circuit, list(job.measured), inputs, feats, job.amplitude, noise, run)  # type: ignore[arg-type]

    def probabilities_many(self, jobs: list, encoded: np.ndarray) -> list[np.ndarray]:
        """The array kernel on numpy, mutants x inputs (the gpu path's arithmetic, checked here)."""
        from qmltest.simulate import arraykernel

        return arraykernel.probabilities_many(np, jobs, encoded, self.name, self.probabilities)

    def estimate_us(self, num_qubits: int, measured: int, ops: int) -> float:
        return NS_PER_OP_AMPLITUDE * 1e-3 * ops * 2.0**num_qubits

    def mutant_us(self, num_qubits: int, measured: int, ops: int, inputs: int) -> float:
        return interpolated(MUTANT_NS, num_qubits) * 1e-3 * ops * 2.0**num_qubits


def _batch(job: program.Circuit, encoded: np.ndarray) -> np.ndarray:
    """Probabilities of one batch, states kept as columns throughout."""
    n, ops = job.num_qubits, job.ops
    if any(op.name == "dephase" for op in ops):
        psi0, values = program.start_rows(job, encoded)
        return statevector.probabilities_with_dephasing(ops, psi0, values, n, list(job.measured))
    state = program.start_columns(job, encoded)
    psi = statevector.run_columns(ops, state, program.values(job, encoded), n, job.boundaries, zero=not job.amplitude)
    return statevector.marginal_probabilities(psi.T, list(job.measured), n)
