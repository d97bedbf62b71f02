"""Noisy output probabilities on Aer, once per (circuit, input); shots are sampled from them.

Density-matrix method where it fits in memory, else averaged trajectories (statevector method,
`trajectories` shots averaged by save_probabilities). Amplitude encoding starts each input from
its state via Aer's set_density_matrix / set_statevector. Drift re-simulates per repetition with
N(0, sigma) over-rotations of every numeric gate angle and averages the repetitions.
"""

from __future__ import annotations

import numpy as np
from qiskit.circuit import Parameter, ParameterExpression, QuantumCircuit
from qiskit_aer import AerSimulator

from qmltest.errors import InputError, SimulatorError
from qmltest.noise import build
from qmltest.noise.config import NoiseConfig
from qmltest.simulate import aer

MAX_DENSITY_BYTES = 4 * 2**30


def density_fits(num_qubits: int) -> bool:
    return 3 * 16 * 4**num_qubits <= MAX_DENSITY_BYTES


def _drifted(circuit: QuantumCircuit, sigma: float, rng: np.random.Generator) -> QuantumCircuit:
    out = circuit.copy_empty_like()
    for inst in circuit.data:
        op = inst.operation
        numeric = [p for p in op.params if not (isinstance(p, ParameterExpression) and p.parameters)]
        if sigma > 0 and op.params and len(numeric) == len(op.params) and op.name not in build.SKIP:
            try:
                op = op.copy()
                op.params = [float(p) + rng.normal(0.0, sigma) for p in op.params]
            except (TypeError, ValueError):
                op = inst.operation
        out.append(op, inst.qubits, inst.clbits)
    return out


def probabilities(
    circuit: QuantumCircuit,
    measured: list[int],
    inputs: list[Parameter],
    encoded: np.ndarray,
    amplitude: bool,
    cfg: NoiseConfig,
) -> np.ndarray:
    """Noisy probabilities (N, 2^m) over `measured` for a batch of encoded inputs."""
    circuit, _ = aer.dephased(circuit)  # mid-circuit measurements: dephasing, as on the noise-free paths
    density = density_fits(circuit.num_qubits)
    method = "density_matrix" if density else "statevector"
    shots = 1 if density else int(cfg.get("noise", "trajectories", 200))
    reps = int(cfg.get("drift", "repetitions", 1)) if cfg.has("drift") else 1
    sigma = float(cfg.get("drift", "sigma", 0.0)) if cfg.has("drift") else 0.0
    rng = np.random.default_rng(cfg.seed)
    total = np.zeros((len(encoded), 2 ** len(measured)))
    try:
        for _ in range(reps):
            qc = _drifted(circuit, sigma, rng)
            qc = build.with_random_insertion(build.with_crosstalk(qc, cfg), cfg)
            model = build.noise_model(cfg, qc)
            sim = AerSimulator(method=method, noise_model=model, seed_simulator=cfg.seed)
            total += aer.run_batch(sim, qc, measured, inputs, encoded, amplitude, density, shots)
    except (SimulatorError, InputError):
        raise
    except Exception as exc:
        raise SimulatorError(
            f"Aer (noisy) failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from exc
    return build.apply_readout(total / reps, cfg)
