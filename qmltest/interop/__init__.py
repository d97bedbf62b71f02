"""The way in: Qiskit circuits, Qiskit ML classifiers, torch hybrids, PennyLane QNodes, OpenQASM 3/2,
QPY -> qmltest models."""

from qmltest.interop.circuit import from_circuit
from qmltest.interop.hybrid import from_torch
from qmltest.interop.pennylane import from_pennylane
from qmltest.interop.qiskit_ml import from_qiskit_ml

__all__ = ["from_circuit", "from_pennylane", "from_qiskit_ml", "from_torch"]
