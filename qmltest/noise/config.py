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

SCHEMA: dict[str, dict[str, type | tuple[type, ...]]] = {
    "noise": {"name": str, "mode": str, "insertion_probability": (int, float), "seed": int, "trajectories": int},
    "depolarizing": {"p1": (int, float), "p2": (int, float)},
    "bit_flip": {"p": (int, float)},
    "phase_flip": {"p": (int, float)},
    "amplitude_damping": {"gamma": (int, float)},
    "phase_damping": {"lambda": (int, float)},
    "thermal_relaxation": {"t1": (int, float), "t2": (int, float), "time_1q": (int, float), "time_2q": (int, float)},
    "readout": {"p01": (int, float), "p10": (int, float)},
    "crosstalk": {"zz_angle": (int, float), "pauli_p": (int, float), "coupling": (str, list)},
    "drift": {"sigma": (int, float), "repetitions": int},
    "backend": {"fake": str},
}
RATES = {
    ("depolarizing", "p1"),
    ("depolarizing", "p2"),
    ("bit_flip", "p"),
    ("phase_flip", "p"),
    ("amplitude_damping", "gamma"),
    ("phase_damping", "lambda"),
    ("readout", "p01"),
    ("readout", "p10"),
    ("crosstalk", "pauli_p"),
    ("noise", "insertion_probability"),
}
MODES = ("gates", "random-insertion")


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
    from qmltest import schemas

    for table, body in tables.items():
        if table not in SCHEMA:
            raise _fail(source, table, f"is not a known noise channel (known: {', '.join(SCHEMA)})")
        if not isinstance(body, dict):
            raise _fail(source, table, "must be a table")
        for key, value in body.items():
            if key not in SCHEMA[table]:
                raise _fail(source, f"{table}.{key}", f"is not a key of [{table}] (known: {', '.join(SCHEMA[table])})")
            expected = SCHEMA[table][key]
            if isinstance(value, bool) or not isinstance(value, expected):
                raise _fail(source, f"{table}.{key}", f"has the wrong type ({type(value).__name__})")
            if (table, key) in RATES and not 0.0 <= value <= 1.0:
                raise _fail(source, f"{table}.{key}", f"must be a probability in [0, 1], got {value}")
    schemas.validate("noise", tables, source)  # ranges, NaN (TOML allows nan), bounds like drift repetitions
    mode = tables.get("noise", {}).get("mode", "gates")
    if mode not in MODES:
        raise _fail(source, "noise.mode", f"must be one of {', '.join(MODES)}, got '{mode}'")
    thermal = tables.get("thermal_relaxation")
    if thermal is not None:
        for key in ("t1", "t2", "time_1q", "time_2q"):
            if key not in thermal:
                raise _fail(source, f"thermal_relaxation.{key}", "is required")
            if thermal[key] < 0 or (key in ("t1", "t2") and thermal[key] == 0):
                raise _fail(source, f"thermal_relaxation.{key}", "must be positive")
        if thermal["t2"] > 2 * thermal["t1"]:
            raise _fail(source, "thermal_relaxation.t2", f"must be <= 2 * t1 ({thermal['t2']} > {2 * thermal['t1']})")
    drift = tables.get("drift")
    if drift is not None and (drift.get("sigma", 0) < 0 or drift.get("repetitions", 1) < 1):
        raise _fail(source, "drift", "needs sigma >= 0 and repetitions >= 1")
    crosstalk = tables.get("crosstalk")
    if crosstalk is not None:
        coupling = crosstalk.get("coupling", "line")
        if isinstance(coupling, str) and coupling not in ("line", "ring"):
            raise _fail(source, "crosstalk.coupling", "must be 'line', 'ring' or a list of [a, b] pairs")
        if isinstance(coupling, list) and not all(
            isinstance(e, list) and len(e) == 2 and all(isinstance(q, int) and q >= 0 for q in e) for e in coupling
        ):
            raise _fail(source, "crosstalk.coupling", "must be a list of [a, b] qubit pairs")


def load(path: str | Path) -> NoiseConfig:
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a noise config")
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
