"""Gate knowledge the operators need: QuanForge Table 1 categories, replacement groups, controls."""

from __future__ import annotations

from qiskit.circuit import Instruction
from qiskit.circuit.library import get_standard_gate_name_mapping

from qmltest.errors import InputError

_STANDARD = get_standard_gate_name_mapping()

# QuanForge Table 1 (gate function and gate size criteria), in Qiskit names.
CATEGORIES: dict[str, frozenset[str]] = {
    "controlled": frozenset({"cx", "cy", "cz", "crx", "cry", "crz", "cp", "ch", "cswap"}),
    "hadamard": frozenset({"h"}),
    "pauli": frozenset({"x", "y", "z", "cx", "cz"}),
    "phase": frozenset({"p", "cp"}),
    "rotation": frozenset({"rx", "ry", "rz", "u", "u3", "crx", "cry", "crz", "rxx", "ryy", "rzz"}),
    "swap": frozenset({"swap", "cswap"}),
    "single": frozenset({"h", "x", "y", "z", "p", "rx", "ry", "rz", "u", "u3", "s", "sdg", "t", "tdg", "sx"}),
    "two": frozenset({"cx", "cy", "cz", "swap", "crx", "cry", "crz", "cp", "ch", "rxx", "ryy", "rzz"}),
    "multi": frozenset({"cswap", "ccx"}),
}

# Same size and parameter count (GR keeps the circuit structure and the parameters).
REPLACEMENT_GROUPS: list[frozenset[str]] = [
    frozenset({"x", "y", "z", "h", "s", "t", "sx"}),
    frozenset({"rx", "ry", "rz", "p"}),
    frozenset({"cx", "cy", "cz", "ch", "swap"}),
    frozenset({"crx", "cry", "crz", "cp", "rxx", "ryy", "rzz"}),
]

# GSM: single-qubit gate <-> its controlled form (control first).
CONTROLLED = {"x": "cx", "y": "cy", "z": "cz", "h": "ch", "rx": "crx", "ry": "cry", "rz": "crz", "p": "cp"}
UNCONTROLLED = {v: k for k, v in CONTROLLED.items()}

PARAMETERIZED_1Q = ("rx", "ry", "rz", "p")


def categories_of(name: str) -> set[str]:
    return {c for c, names in CATEGORIES.items() if name in names}


def check_types(types: list[str] | None) -> list[str] | None:
    if types is None:
        return None
    unknown = [t for t in types if t not in CATEGORIES]
    if unknown:
        raise InputError(f"unknown gate type(s) {unknown} (choose from {', '.join(CATEGORIES)})")
    return types


def make(name: str, params: list) -> Instruction:
    """A standard Qiskit gate by name."""
    if name not in _STANDARD:
        raise InputError(f"unknown gate '{name}'")
    std = _STANDARD[name]
    return type(std)(*params) if params else std


def num_params(name: str) -> int:
    if name not in _STANDARD:
        raise InputError(f"unknown gate '{name}'")
    return len(_STANDARD[name].params)


def num_qubits(name: str) -> int:
    if name not in _STANDARD:
        raise InputError(f"unknown gate '{name}'")
    return _STANDARD[name].num_qubits
