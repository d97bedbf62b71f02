"""aer: Qiskit Aer with batched parameter binds, the reference, fused and multi-threaded, the
faster path for large circuits; Aer's density-matrix method (or trajectories) under noise."""

from __future__ import annotations

import numpy as np

from qmltest.simulate import aer_jobs as aer
from qmltest.simulate import program
from qmltest.simulate.backend import Backend, Capabilities, interpolated

US_PER_INPUT = 150.0
"""Fixed cost per input (130-220 us per input at 8-13 qubits, one readout qubit)."""
US_PER_OUTCOME = 0.18
"""Cost per readout probability and input (returning 2^m values through its result object:
20 qubits, all read, 187 ms per input against 0.3 ms for one; 0.13-0.24 us from 12 to 20)."""
NS_PER_OP_AMPLITUDE = 0.015
"""Time per op and amplitude (fused, vectorized; 40x below numpy's)."""


MUTANT_NS = ((12, 2.1), (16, 0.81), (20, 0.70))
"""Measured ns per op and amplitude per (mutant, input) in a mutation run (2 cores, Aer's own
threads; the models of `numpy.MUTANT_NS`, 12 mutants on 10 and 50 inputs to split off the fixed
part): each mutant is a circuit built, transpiled and run afresh."""
US_PER_MUTANT = 9000.0
"""Fixed cost per mutant (its circuit built and transpiled, the job submitted): 9-10 ms at 12-16 qubits."""


class AerBackend(Backend):
    name = "aer"
    help = "Qiskit Aer, the reference, batched binds"
    capabilities = Capabilities(auto=True, noise=True)

    def probabilities(self, job: program.Circuit, encoded: np.ndarray) -> np.ndarray:
        inputs, feats = program.bound_inputs(job, encoded)
        if job.amplitude:
            return aer.probabilities(job.circuit, list(job.measured), inputs, None, encoded)
        return aer.probabilities(job.circuit, list(job.measured), inputs, feats, None)

    def noisy(self, job: program.Circuit, encoded: np.ndarray, noise: object) -> np.ndarray:
        from qmltest.simulate import noisy  # Aer's noise module: loaded for noisy runs only

        inputs, feats = program.bound_inputs(job, encoded)
        return noisy.probabilities(job.circuit, list(job.measured), inputs, feats, job.amplitude, noise)  # type: ignore[arg-type]

    def estimate_us(self, num_qubits: int, measured: int, ops: int) -> float:
        return US_PER_INPUT + US_PER_OUTCOME * 2.0**measured + NS_PER_OP_AMPLITUDE * 1e-3 * ops * 2.0**num_qubits

    def mutant_us(self, num_qubits: int, measured: int, ops: int, inputs: int) -> float:
        per_amplitude = interpolated(MUTANT_NS, num_qubits) * 1e-3 * ops * 2.0**num_qubits
        return US_PER_MUTANT / max(inputs, 1) + US_PER_OUTCOME * 2.0**measured + per_amplitude
