"""The way in: Qiskit circuits, Qiskit ML classifiers, OpenQASM 3/2 and QPY files -> qmltest models."""

from qmltest.interop.circuit import from_circuit
from qmltest.interop.qiskit_ml import from_qiskit_ml

__all__ = ["from_circuit", "from_qiskit_ml"]
