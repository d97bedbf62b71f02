"""Where a model runs: `ideal` (noise-free), `noise:FILE` (a noise config) or `fake:NAME` (one of
qiskit-ibm-runtime's fake devices: the model transpiled to it with a seeded layout and routing,
read out through the final layout, with the device's gate and readout errors; `simulate.fake_device`)
or `ibm:NAME` (shots from a real device through qiskit-ibm-runtime; `ibm:fake_*` runs the same code in
Runtime's local testing mode; `simulate.runtime`)."""

from __future__ import annotations

from dataclasses import dataclass

from qmltest.errors import InputError
from qmltest.noise import config as noise_config

KINDS = ("ideal", "noise:FILE", "fake:NAME", "ibm:NAME")


@dataclass(frozen=True)
class Hardware:
    """An `ibm:NAME` target: shots from a device through qiskit-ibm-runtime (`simulate.runtime`)."""

    device: str

    @property
    def name(self) -> str:
        return f"ibm:{self.device}"


def parse(spec: str) -> object | None:
    """The noise config of a target (None for ideal), or a `Hardware` target; one clear error for
    anything else."""
    if spec == "ideal":
        return None
    kind, sep, value = spec.partition(":")
    if not sep or not value:
        raise InputError(f"unknown target '{spec}' (choose from {', '.join(KINDS)})")
    if kind == "noise":
        return noise_config.load(value)
    if kind == "fake":
        try:
            from qiskit_ibm_runtime import fake_provider
        except ImportError:
            raise InputError("fake: targets need qiskit-ibm-runtime: pip install 'qmltest[hardware]'") from None
        if not hasattr(fake_provider, value):
            raise InputError(f"unknown fake backend '{value}' (qiskit_ibm_runtime.fake_provider has no such device)")
        return noise_config.from_dict({"noise": {"name": spec}, "backend": {"fake": value}}, spec)
    if kind == "ibm":
        return Hardware(value)
    raise InputError(f"unknown target '{spec}' (choose from {', '.join(KINDS)})")
