"""gpu: the array-API kernel (`arraykernel`) on CuPy (``qmltest[gpu]``), batched over inputs, or
over mutants x inputs in `mutate`; a config's noise on density matrices. The same kernel runs on
numpy in the default tests. Not a candidate of auto: its costs are still to be measured on a device."""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError
from qmltest.simulate import aer_jobs as aer
from qmltest.simulate import memory, program
from qmltest.simulate.backend import Backend, Capabilities


class GpuBackend(Backend):
    name = "gpu"
    help = "CuPy array kernel, mutants x inputs batches; needs qmltest[gpu] and a CUDA device"
    capabilities = Capabilities(mutant_batching=True, noise=True, device_targets=False)

    def probabilities(self, job: program.Circuit, encoded: np.ndarray) -> np.ndarray:
        from qmltest.simulate import arraykernel

        return arraykernel.probabilities(arraykernel.namespace(), job, encoded, self.name)

    def noisy(self, job: program.Circuit, encoded: np.ndarray, noise: object) -> np.ndarray:
        from qmltest.simulate import arraykernel, noisy

        circuit = aer.dephased(job.circuit)[0]
        if not memory.density_fits(circuit.num_qubits):
            raise InputError(
                "the gpu backend runs a config's noise channels on density matrices that fit in memory; "
                "for a fake device or a wider model use --backend numpy or aer"
            )
        xp = arraykernel.namespace()
        inputs, feats = program.bound_inputs(job, encoded)

        def run(prep, inputs, encoded, amplitude):  # type: ignore[no-untyped-def]
            return arraykernel.density_probabilities(xp, prep, inputs, encoded, amplitude)

        return noisy.probabilities(circuit, list(job.measured), inputs, feats, job.amplitude, noise, run)  # type: ignore[arg-type]

    def probabilities_many(self, jobs: list, encoded: np.ndarray) -> list[np.ndarray]:
        from qmltest.simulate import arraykernel

        return arraykernel.probabilities_many(arraykernel.namespace(), jobs, encoded, self.name, self.probabilities)
