"""The fake-device target (`--target fake:NAME`, `[backend] fake = NAME`): the model transpiled to
the device and run on Aer with its noise and readout (`qmltest.simulate.fake_device`). The registry
sends a device-targeting noise config here; it is not named by `--backend`."""

from __future__ import annotations

import numpy as np

from qmltest.errors import InputError
from qmltest.simulate import aer_jobs as aer
from qmltest.simulate import program
from qmltest.simulate.backend import Backend, Capabilities


class DeviceBackend(Backend):
    name = "device"
    help = "a fake IBM device: transpiled, its noise and readout, on Aer"
    capabilities = Capabilities(noise=True, targets=True, selectable=False)

    def probabilities(self, job: program.Circuit, encoded: np.ndarray) -> np.ndarray:
        raise InputError("the device entry runs a fake device's noise: give --target fake:NAME")

    def noisy(self, job: program.Circuit, encoded: np.ndarray, noise: object) -> np.ndarray:
        from qmltest.simulate import (
            fake_device as device,  # the fake provider and noise models: loaded for targets only
        )

        inputs, feats = program.bound_inputs(job, encoded)
        circuit = aer.dephased(job.circuit)[0]
        trajectories = int(noise.get("noise", "trajectories", 200))  # type: ignore[attr-defined]
        name = str(noise.get("backend", "fake"))  # type: ignore[attr-defined]
        return device.probabilities(
            circuit,
            list(job.measured),
            inputs,
            feats,
            job.amplitude,
            name,
            noise.seed,
            trajectories,  # type: ignore[attr-defined]
        )
