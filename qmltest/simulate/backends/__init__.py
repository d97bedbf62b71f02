"""The registry of simulator backends: one file per backend in this package, one line here.

`REGISTRY.names()` is what `--backend` accepts; `REGISTRY.for_run` picks the backend of a job
(``auto`` by the entries' cost models, a fake-device target on the device entry).
"""

from __future__ import annotations

from qmltest.simulate.backend import Registry
from qmltest.simulate.backends.aer import AerBackend
from qmltest.simulate.backends.device import DeviceBackend
from qmltest.simulate.backends.gpu import GpuBackend
from qmltest.simulate.backends.numpy import NumpyBackend
from qmltest.util import plugins

REGISTRY = Registry()
REGISTRY.register(NumpyBackend())
REGISTRY.register(AerBackend())
REGISTRY.register(GpuBackend())
REGISTRY.register(DeviceBackend())

plugins.load("qmltest.backends")  # other packages' backends (their import registers them here)
