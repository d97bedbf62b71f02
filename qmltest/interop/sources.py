"""Files a user brings: OpenQASM 3, OpenQASM 2 (PennyLane's `to_openqasm`), QPY; weight files.

Never unpickles: Qiskit ML's `save()` writes dill pickles, which can run code on load; the QPY
route (`qiskit.qpy.dump` of the circuit + `numpy.save` of the weights) carries the same facts.

OpenQASM 2 has no free parameters, so an exported QASM 2 circuit has its features bound as numbers.
Export it with distinct *probe* feature values and pass them (``probe``): every angle equal to probe
value i becomes feature i (features that enter through an expression, e.g. 2*x, cannot be recovered
this way and are refused with the probe value that was not found).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from qiskit.circuit import Parameter, QuantumCircuit

from qmltest import qasm
from qmltest.errors import InputError

FORMATS = ("qasm3", "qasm2", "qpy")


def detect(path: Path) -> str:
    """The format of a circuit file, from its suffix and, for text, its OPENQASM header."""
    if path.suffix.lower() == ".qpy":
        return "qpy"
    text = _read_text(path)
    m = re.search(r"^\s*OPENQASM\s+(\d+)(\.\d+)?\s*;", _strip_comments(text), re.MULTILINE)
    if not m:
        raise InputError(f"{path}: no 'OPENQASM 2.0;' or 'OPENQASM 3.0;' header (and not a .qpy file)")
    major = m.group(1)
    if major not in ("2", "3"):
        raise InputError(f"{path}: OpenQASM version {major} is not supported (2 or 3)")
    return f"qasm{major}"


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", text), flags=re.DOTALL)


def _read_text(path: Path) -> str:
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a circuit file")
    try:
        return path.read_text()
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file") from None


def load_qasm2(text: str, source: str, probe: list[float] | None) -> QuantumCircuit:
    """An OpenQASM 2 program; angles equal to probe values become features x_000, x_001, ..."""
    from qiskit import qasm2

    try:
        circuit = qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
    except Exception as exc:  # QASM2ParseError and friends
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{source}: malformed OpenQASM 2: {first}") from None
    if not probe:
        raise InputError(
            f"{source}: an OpenQASM 2 file has its features bound as numbers: export it with distinct probe "
            "feature values and pass them (--probe v0,v1,...)"
        )
    return apply_probe(circuit, probe, source)


def apply_probe(circuit: QuantumCircuit, probe: list[float], source: str) -> QuantumCircuit:
    """Replace every gate angle equal to probe[i] (to 1e-12) by the parameter x_i."""
    values = np.asarray(probe, dtype=float)
    if not np.all(np.isfinite(values)) or len(np.unique(values)) != len(values):
        raise InputError("probe values must be finite and distinct")
    params = [Parameter(f"x_{i:03d}") for i in range(len(values))]
    found = np.zeros(len(values), dtype=bool)
    out = circuit.copy_empty_like()
    for inst in circuit.data:
        op = inst.operation
        new_params, changed = [], False
        for p in op.params:
            if isinstance(p, (int, float)) and not isinstance(p, bool):
                hit = np.flatnonzero(np.abs(values - float(p)) <= 1e-12 * max(1.0, abs(float(p))))
                if len(hit):
                    new_params.append(params[hit[0]])
                    found[hit[0]] = changed = True
                    continue
            new_params.append(p)
        if changed:
            op = op.to_mutable()
            op.params = new_params
        out.append(op, inst.qubits, inst.clbits)
    if not found.all():
        i = int(np.flatnonzero(~found)[0])
        raise InputError(f"{source}: probe value {float(values[i])!r} (feature {i}) is not a gate angle in the circuit")
    return out


def load_circuit(path: Path, probe: list[float] | None = None) -> tuple[QuantumCircuit, str]:
    """(circuit, format) from a .qasm (version 2 or 3) or .qpy file."""
    fmt = detect(path)
    if fmt == "qpy":
        from qiskit import qpy

        try:
            with path.open("rb") as fh:
                circuits = qpy.load(fh)
        except Exception as exc:  # QpyError and unpacking errors
            raise InputError(f"{path}: not a readable QPY file ({type(exc).__name__}: {exc})") from None
        if len(circuits) != 1:
            raise InputError(f"{path}: holds {len(circuits)} circuits; import one at a time")
        circuit = circuits[0]
        if not isinstance(circuit, QuantumCircuit):
            raise InputError(f"{path}: holds a {type(circuit).__name__}, not a circuit")
        return circuit, fmt
    text = _read_text(path)
    if fmt == "qasm2":
        return load_qasm2(text, str(path), probe), fmt
    if probe:
        raise InputError("--probe applies to OpenQASM 2 files only (OpenQASM 3 declares its inputs)")
    circuit, _ = qasm.loads(text, str(path))
    return circuit, fmt


def load_weights(path: Path) -> np.ndarray | dict[str, float]:
    """Trained weights: .npy (a vector in parameter order), .npz (one array), .json (list or {name: value})."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                names = list(z.files)
                if len(names) != 1 and "weights" not in names:
                    raise InputError(f"{path}: holds arrays {names}; name the weight array 'weights'")
                arr = z["weights" if "weights" in names else names[0]]
        elif suffix == ".json":
            data = json.loads(path.read_text())
            if isinstance(data, dict):
                if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data.values()):
                    raise InputError(f"{path}: weight values must be numbers")
                return {str(k): float(v) for k, v in data.items()}
            arr = np.asarray(data)
        else:
            raise InputError(f"{path}: weights must be .npy, .npz or .json")
    except (ValueError, OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read weights ({type(exc).__name__}: {exc})") from None
    if arr.dtype.kind not in "iuf" or arr.ndim > 2:
        raise InputError(f"{path}: weights must be a numeric vector, got dtype {arr.dtype} shape {arr.shape}")
    return np.asarray(arr, dtype=float).ravel()
