"""A mutant as its difference from the original, for shipping to workers.

A mutant shares the original's unchanged layer objects (`edit.rebuild` keeps them), so a task
needs only the layers that changed; the original travels once, with the shared task state.
Measured on the 8-qubit QCL model: a whole mutant pickles to 19 KB and unpickles in 3.4 ms on a
worker (its qiskit gate objects), 14% of the mutant's evaluation; a delta is the changed layers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from qmltest.artifact import Model
from qmltest.ir import Layer


@dataclass(frozen=True)
class Delta:
    """Layers by the original's index where unchanged; the rest of the model as it is."""

    layers: tuple[int | Layer, ...]
    measured: tuple[int, ...]
    num_qubits: int
    inputs: tuple | None  # None: the original's feature parameters
    manifest: dict
    qasm_text: str | None  # None: the original's
    source: str
    inferred: tuple[str, ...]


def delta_of(original: Model, mutant: Model) -> Delta:
    """The mutant relative to `original` (exact: `apply` gives back an equal model)."""
    index = {id(layer): i for i, layer in enumerate(original.ir.layers)}
    layers = tuple(
        index[id(layer)] if id(layer) in index and original.ir.layers[index[id(layer)]] is layer else layer
        for layer in mutant.ir.layers
    )
    text = None if mutant.qasm_text == original.qasm_text else mutant.qasm_text
    inputs = None if mutant.ir.inputs == original.ir.inputs else mutant.ir.inputs
    return Delta(
        layers, mutant.ir.measured, mutant.ir.num_qubits, inputs, mutant.manifest, text, mutant.source, mutant.inferred
    )


def apply(original: Model, delta: Delta) -> Model:
    """The mutant back from its delta and the original."""
    layers = tuple(original.ir.layers[x] if isinstance(x, int) else x for x in delta.layers)
    inputs = original.ir.inputs if delta.inputs is None else delta.inputs
    ir = replace(original.ir, layers=layers, measured=delta.measured, num_qubits=delta.num_qubits, inputs=inputs)
    text = original.qasm_text if delta.qasm_text is None else delta.qasm_text
    return Model(text, ir, delta.manifest, delta.source, delta.inferred)
