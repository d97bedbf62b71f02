"""The TOML noise config (configs/noise/*.toml): parsed, validated, unknown keys refused.

[noise]               name, mode = "gates" (every gate) | "random-insertion" (each gate with
                      `insertion_probability`, QuanForge Sec. 4.7.3), seed, trajectories
[depolarizing]        p1, p2                  single- and two-qubit depolarizing rates
[bit_flip]            p                       X error after every gate, per qubit
[phase_flip]          p                       Z error after every gate, per qubit
[amplitude_damping]   gamma
[phase_damping]       lambda
[thermal_relaxation]  t1, t2, time_1q, time_2q  (seconds; t2 <= 2 t1)
[readout]             p01, p10                P(read 1 | 0), P(read 0 | 1), applied to probabilities
[crosstalk]           zz_angle, pauli_p, coupling = "line" | "ring" | [[a, b], ...]
                      after each two-qubit gate, a coherent ZZ rotation (and a Z error with
                      probability pauli_p) between each gate qubit and its coupled spectators
[drift]               sigma, repetitions      per-repetition N(0, sigma) over-rotation of every
                      numeric gate angle; probabilities are averaged over the repetitions
[backend]             fake = "FakeManilaV2"   NoiseModel.from_backend (needs qiskit-ibm-runtime)
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from qmltest.errors import InputError


@dataclass(frozen=True)
class NoiseConfig:
    tables: dict = field(default_factory=dict)
    source: str = "<config>"
    sha256: str = ""

    def get(self, table: str, key: str, default: float | int | str | None = None):
        return self.tables.get(table, {}).get(key, default)

    def has(self, table: str) -> bool:
        return table in self.tables

    @property
    def name(self) -> str:
        return str(self.get("noise", "name", Path(self.source).stem))

    @property
    def mode(self) -> str:
        return str(self.get("noise", "mode", "gates"))

    @property
    def seed(self) -> int:
        return int(self.get("noise", "seed", 0))


def _fail(source: str, key: str, msg: str) -> InputError:
    return InputError(f"{source}: '{key}' {msg}")


def validate(tables: dict, source: str) -> None:
    """The published schema (qmltest/schemas/noise.schema.json: tables, keys, types, rates in [0, 1],
    bounds, no NaN) names the first bad key; then what it cannot say: T2 <= 2 T1, crosstalk edges
    between two distinct qubits."""
    from qmltest import schemas

    schemas.validate("noise", tables, source)
    thermal = tables.get("thermal_relaxation")
    if thermal is not None and thermal["t2"] > 2 * thermal["t1"]:
        raise _fail(source, "thermal_relaxation.t2", f"must be <= 2 * t1 ({thermal['t2']} > {2 * thermal['t1']})")
    fake = (tables.get("backend") or {}).get("fake")
    if fake is not None:
        _check_fake(str(fake), source)
    coupling = (tables.get("crosstalk") or {}).get("coupling")
    if isinstance(coupling, list):
        loops = [edge for edge in coupling if edge[0] == edge[1]]
        if loops:
            raise _fail(source, "crosstalk.coupling", f"edge {loops[0]} couples a qubit to itself")


def _check_fake(name: str, source: str) -> None:
    """backend.fake names a device of qiskit-ibm-runtime's fake provider (checked when it loads)."""
    try:
        from qiskit_ibm_runtime import fake_provider
    except ImportError:
        raise _fail(source, "backend.fake", "needs qiskit-ibm-runtime: pip install 'qmltest[hardware]'") from None
    if not name.startswith("Fake") or not hasattr(fake_provider, name):
        raise _fail(source, "backend.fake", f"'{name}' is not a device of qiskit_ibm_runtime.fake_provider")


def load(path: str | Path) -> NoiseConfig:
    from qmltest.util.files import readable

    path = readable(path, "a noise config")
    try:
        text = path.read_text()
        tables = tomllib.loads(text)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    validate(tables, str(path))
    return NoiseConfig(tables, str(path), hashlib.sha256(text.encode()).hexdigest())


def from_dict(tables: dict, source: str = "<dict>") -> NoiseConfig:
    validate(tables, source)
    return NoiseConfig(tables, source, hashlib.sha256(repr(sorted(tables.items())).encode()).hexdigest())
