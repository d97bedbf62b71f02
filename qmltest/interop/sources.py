"""Files a user brings: OpenQASM 3, OpenQASM 2 (PennyLane's `to_openqasm`), QPY; weight files.

Never unpickles: Qiskit ML's `save()` writes dill pickles, which can run code on load; the QPY
route (`qiskit.qpy.dump` of the circuit + `numpy.save` of the weights) carries the same facts.

OpenQASM 2 has no free parameters, so an exported QASM 2 circuit has its features bound as numbers.
Export it with distinct *probe* feature values and pass them (``probe``): every angle equal to probe
value i becomes feature i, and angles that are simple functions of the probe values (a multiple, a
product x_i x_j as IQP embeddings make, a sum or difference, Qiskit's ZZ-map form) become those
functions. A second export at other values (``--verify FILE=VALUES``) checks the recovered circuit
away from the probe; without one, the import says so in one line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from qiskit.circuit import Parameter, QuantumCircuit

from qmltest.errors import InputError
from qmltest.model import qasm
from qmltest.util.files import readable

FORMATS = ("qasm3", "qasm2", "qpy")


def detect(path: Path) -> str:
    """The format of a circuit file, from its suffix and, for text, its OPENQASM header."""
    if path.suffix.lower() == ".qpy":
        readable(path, "a QPY file")
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
    readable(path, "a circuit file")
    try:
        return path.read_text()
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file") from None


def load_qasm2(text: str, source: str, probe: list[float] | None, bound: bool = False) -> QuantumCircuit:
    """An OpenQASM 2 program; angles equal to probe values become features x_000, x_001, ..."""
    from qiskit import qasm2

    try:
        circuit = qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
    except Exception as exc:  # QASM2ParseError and friends
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{source}: malformed OpenQASM 2: {first}") from None
    if bound:
        return circuit
    if not probe:
        raise InputError(
            f"{source}: an OpenQASM 2 file has its features bound as numbers: export it with distinct probe "
            "feature values and pass them (--probe v0,v1,...)"
        )
    return apply_probe(circuit, probe, source)


def _candidates(values: np.ndarray, params: list[Parameter]) -> list[tuple[float, object, str]]:
    """(value, expression, description) of every angle form the probe method recognizes: x_i, a
    sign flip or a small multiple of it, x_i * x_j (IQP embeddings' ZZ angles), x_i +- x_j, and
    Qiskit's ZZ-map (pi - x_i)(pi - x_j) with factor 1 or 2."""
    out: list[tuple[float, object, str]] = []
    for i, (v, p) in enumerate(zip(values, params)):
        for c in (1.0, -1.0, 2.0, -2.0, 0.5, -0.5):
            out.append((c * v, p if c == 1.0 else c * p, f"{c:g}*x{i}" if c != 1 else f"x{i}"))
        for j in range(i, len(values)):
            w, q = values[j], params[j]
            out.append((v * w, p * q, f"x{i}*x{j}"))
            if j > i:
                out += [(v + w, p + q, f"x{i}+x{j}"), (v - w, p - q, f"x{i}-x{j}"), (w - v, q - p, f"x{j}-x{i}")]
                for c in (1.0, 2.0):
                    out.append(
                        (c * (np.pi - v) * (np.pi - w), c * (np.pi - p) * (np.pi - q), f"{c:g}(pi-x{i})(pi-x{j})")
                    )
    return out


def apply_probe(circuit: QuantumCircuit, probe: list[float], source: str) -> QuantumCircuit:
    """Replace every gate angle that is a recognized function of the probe values (`_candidates`,
    to 1e-12 relative) by that function of the parameters x_i; an angle that two different forms
    explain is refused (choose other probe values), and so is a probe value found nowhere."""
    values = np.asarray(probe, dtype=float)
    if not np.all(np.isfinite(values)) or len(np.unique(values)) != len(values):
        raise InputError("probe values must be finite and distinct")
    params = [Parameter(f"x_{i:03d}") for i in range(len(values))]
    forms = _candidates(values, params)
    table = np.array([f[0] for f in forms])
    found = np.zeros(len(values), dtype=bool)
    out = circuit.copy_empty_like()
    for inst in circuit.data:
        op = inst.operation
        new_params, changed = [], False
        for p in op.params:
            if isinstance(p, (int, float)) and not isinstance(p, bool) and float(p) != 0.0:
                hit = np.flatnonzero(np.abs(table - float(p)) <= 1e-12 * max(1.0, abs(float(p))))
                if len(hit):
                    exprs = {str(forms[h][1]) for h in hit}
                    if len(exprs) > 1:
                        names = ", ".join(sorted({forms[h][2] for h in hit}))
                        raise InputError(
                            f"{source}: angle {float(p)!r} of '{op.name}' is explained by several feature forms "
                            f"({names}): export again with other probe values"
                        )
                    expr = forms[hit[0]][1]
                    new_params.append(expr)
                    for q in getattr(expr, "parameters", {expr}):
                        found[params.index(q)] = True
                    changed = True
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


def verify_probe(model_circuit: QuantumCircuit, other: QuantumCircuit, values: list[float], source: str) -> float:
    """The probe-recovered circuit, bound to a second export's feature values, must equal that
    export (Qiskit Statevector, 1e-9): the recovered angle forms hold away from the first probe."""
    from qiskit.quantum_info import Statevector

    params = {p.name: p for p in model_circuit.parameters}
    if len(values) != len(params):
        raise InputError(f"--verify gives {len(values)} feature values; the circuit has {len(params)} features")
    bound = model_circuit.assign_parameters({params[f"x_{i:03d}"]: float(v) for i, v in enumerate(values)})
    a = Statevector(bound.remove_final_measurements(inplace=False)).data
    b = Statevector(other.remove_final_measurements(inplace=False)).data
    diff = float(np.max(np.abs(np.abs(a) ** 2 - np.abs(b) ** 2)))
    overlap = abs(np.vdot(a, b))
    if diff > 1e-9 or abs(overlap - 1) > 1e-9:
        raise InputError(
            f"{source}: import refused: at the second export's feature values the recovered circuit differs from it "
            f"by {diff:.3g} in probability (a feature enters an angle in a form the probe method does not know)"
        )
    return diff


def load_circuit(path: Path, probe: list[float] | None = None, bound: bool = False) -> tuple[QuantumCircuit, str]:
    """(circuit, format) from a .qasm (version 2 or 3) or .qpy file; `bound`: an OpenQASM 2 export
    read as it is, features bound (the second export of --verify)."""
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
        return load_qasm2(text, str(path), probe, bound), fmt
    if probe:
        raise InputError("--probe applies to OpenQASM 2 files only (OpenQASM 3 declares its inputs)")
    circuit, _ = qasm.loads(text, str(path))
    return circuit, fmt


def load_weights(path: Path) -> np.ndarray | dict[str, float]:
    """Trained weights: .npy (a vector in parameter order), .npz (one array), .json (list or {name: value})."""
    readable(path, "a weights file")
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


def load_json(path: Path) -> object:
    """A small JSON file a user brings (a readout head, a step list): parsed, or one line why not."""
    readable(path, "a JSON file")
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not JSON ({exc})") from None
