"""`from_pennylane`: a PennyLane QNode (features first, then its trained weights) -> a qmltest Model.

PennyLane exports OpenQASM 2 with every angle a number (`qml.to_openqasm`), so the features are
recovered by the probe method (`sources.apply_probe`): the QNode is exported at two sets of
generic feature values, the first recovers the angle forms (x_i, x_i x_j, sums, multiples), the
second verifies them, and the model is finally compared with the QNode's own forward pass on
random inputs (1e-9), or refused. The readout follows the QNode's measurement: `probs(wires)`
(wire order as PennyLane's, the first wire most significant) or `expval` of Pauli words.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from qmltest.errors import InputError
from qmltest.interop import roundtrip, sources
from qmltest.interop.circuit import from_circuit
from qmltest.model import artifact


def _probes(count: int, seed: int) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.11, 1.37, count), rng.uniform(-1.29, -0.13, count)
    return [float(v) for v in a], [float(v) for v in b]


def _pauli_word(obs: object, n: int) -> str:
    """A PennyLane Pauli word (PauliZ(0) @ PauliX(2)) as a Qiskit-order string (last char = wire 0)."""
    import pennylane as qml

    word = qml.pauli.pauli_word_to_string(obs, wire_map={w: w for w in range(n)})
    return word[::-1]


def from_pennylane(
    qnode: object,
    weights: Sequence[object] = (),
    *,
    num_features: int,
    classes: Sequence | None = None,
    readout: str | None = None,
    threshold: float = 0.0,
    preprocessing: object = None,
    name: str = "imported",
    seed: int = 0,
    readout_map: Sequence[int] | None = None,
    task: str = "classification",
) -> artifact.Model:
    """Convert `qnode(x, *weights)`; readout defaults to 'basis' for probs and 'expectation' for
    expvals. `classes`: the labels in class-index order (default one per output: probs over w
    wires gives 2^w classes; one expval gives -1, 1 by sign). `readout="map"` with `readout_map`
    (one class index per basis state of the probs wires, -1 for none) reads probs(wires=[0, 1]) as
    e.g. two classes by parity; `readout="parity"` or "modulo" need `classes`. task="regression":
    one expval is the model's real output."""
    try:
        import pennylane as qml
    except ImportError:
        raise InputError("from_pennylane needs PennyLane: pip install 'qmltest[pennylane]'") from None
    p1, p2 = _probes(num_features, seed)
    export = qml.to_openqasm(qnode, rotations=False, precision=17)  # the readout adds its own basis changes
    circuit = sources.load_qasm2(export(np.array(p1), *weights), "the QNode's export", p1)
    other = sources.load_qasm2(export(np.array(p2), *weights), "the QNode's second export", None, bound=True)
    sources.verify_probe(circuit, other, p2, "the QNode")
    tape = qml.workflow.construct_tape(qnode)(np.array(p1), *weights)
    if len(tape.measurements) == 0:
        raise InputError("the QNode measures nothing")
    n = circuit.num_qubits
    wires = [int(w) for w in qnode.device.wires] if qnode.device.wires is not None else list(range(n))  # type: ignore[attr-defined]
    if wires != list(range(len(wires))):
        raise InputError(f"QNode wires {wires}: import QNodes on wires 0..n-1")
    kinds = {type(m).__name__ for m in tape.measurements}
    provenance = {"library": "pennylane", "version": qml.__version__, "probes": [p1, p2]}
    if kinds == {"ProbabilityMP"} and len(tape.measurements) == 1:
        measured = [int(w) for w in tape.measurements[0].wires][::-1]  # PennyLane: first wire most significant
        if task == "regression":
            raise InputError("a regressor reads one expval of a Pauli word, not probs(...)")
        if classes is None and readout_map is not None:
            labels = None
        else:
            labels = list(classes) if classes is not None else list(range(2 ** len(measured)))
        how: dict = {"readout": readout or "basis", "measure": measured, "readout_map": readout_map}
    elif kinds == {"ExpectationMP"}:
        observables = [_pauli_word(m.obs, n) for m in tape.measurements]
        labels = list(classes) if classes is not None else ([-1, 1] if len(observables) == 1 else None)
        labels = None if task == "regression" else labels
        how = {"readout": "expectation", "observables": observables, "threshold": threshold, "task": task}
    else:
        raise InputError(f"QNode measurements {sorted(kinds)}: import one probs(...) or expvals of Pauli words")
    model = from_circuit(
        circuit,
        None,
        None,
        classes=labels,
        preprocessing=preprocessing,
        name=name,
        provenance=provenance,
        lenient=True,
        **how,
    )

    def forward(x: np.ndarray) -> np.ndarray:
        rows = [np.atleast_1d(np.asarray(qnode(row, *weights), dtype=float)).ravel() for row in x]
        return np.asarray(rows)

    diff = roundtrip.check(model, forward, "the QNode's own forward pass", seed=seed + 1)
    model.manifest["import"]["roundtrip_library"] = {
        "against": "qnode forward",
        "inputs": roundtrip.inputs_for(model.ir.num_qubits),
        "max_abs_diff": diff,
    }
    return model
