"""The import round trip: an imported model must compute what its source computes, or be refused.

Every import compares the model (its QASM3 text, parsed again and run by qmltest's engine) with
the source's own meaning on random inputs: Qiskit's `Statevector` of the source circuit with the
weights and features bound (probabilities over the measured qubits, or the observables' expectation
values), and, where the caller has one, the source library's own forward pass. A largest difference
above TOLERANCE refuses the import with one line naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from qiskit.circuit import Parameter, QuantumCircuit

from qmltest.errors import InputError
from qmltest.simulate import program

TOLERANCE = 1e-9
INPUTS = 8
WIDE = 16
"""Past this many qubits the check runs WIDE_INPUTS inputs: Qiskit's Statevector took 3.8 s per
input at 20 qubits (8 inputs: 36 s of a 38 s import), and two random inputs already exercise every
feature and weight."""
WIDE_INPUTS = 2


def inputs_for(num_qubits: int) -> int:
    """Random inputs the round trip checks on a model of this width."""
    return INPUTS if num_qubits <= WIDE else WIDE_INPUTS


def model_outputs(model: object, encoded: np.ndarray, per_class: bool = False, decision: bool = False) -> np.ndarray:
    """What the model reads out per input: measured-register probabilities (per_class: summed per
    class, as a SamplerQNN with an interpret returns them), or <O_j> for an expectation readout,
    or a linear head's logits over them (what a library's forward pass returns); `decision`: a
    kernel model's decision value f(x) (its feature map's probabilities otherwise)."""
    from qmltest.model import readout
    from qmltest.simulate import engine

    if decision:
        from qmltest.model import kernel as kernel_model
        from qmltest.simulate import fidelity

        spec = model.manifest["readout"]  # type: ignore[attr-defined]
        return (
            fidelity.outcomes(model, encoded)
            @ kernel_model.decision_column(spec["dual_coef"], spec["intercept"])[:, None]
        )

    probs = engine.probabilities(program.of_model(model), encoded)  # type: ignore[attr-defined]
    spec = model.manifest["readout"]  # type: ignore[attr-defined]
    if spec.get("kind") == "expectation":
        values = readout.expectation_values(probs, spec["observables"], spec["qubits"])
        return readout.head_outputs(values, spec.get("head"))
    if per_class:
        return probs @ readout.class_matrix(spec["map"], model.num_classes)  # type: ignore[attr-defined]
    return probs


def circuit_outputs(
    circuit: QuantumCircuit,
    binding: dict[Parameter, float],
    inputs: Sequence[Parameter],
    spec: dict,
    encoded: np.ndarray,
    amplitude: bool,
) -> np.ndarray | None:
    """The source circuit's outputs by Qiskit's Statevector (None when it has mid-circuit
    measurements or resets, which a statevector cannot carry)."""
    from qiskit.quantum_info import SparsePauliOp, Statevector

    from qmltest.model import readout

    body = circuit.remove_final_measurements(inplace=False)
    if any(inst.operation.name in ("measure", "reset") for inst in body.data):
        return None
    body = body.assign_parameters({p: v for p, v in binding.items() if p in body.parameters})
    rows = []
    for x in encoded:
        if amplitude:
            state = Statevector(np.asarray(x, dtype=complex)).evolve(body)
        else:
            state = Statevector(body.assign_parameters(dict(zip(inputs, (float(v) for v in x)))))
        if spec.get("kind") == "expectation":
            ops = [SparsePauliOp.from_list([(p, c) for c, p in readout.terms(o)]) for o in spec["observables"]]
            values = np.array([float(np.real(state.expectation_value(op))) for op in ops])
            rows.append(readout.head_outputs(values[None, :], spec.get("head"))[0])
        else:
            rows.append(state.probabilities(list(spec["qubits"])))
    return np.asarray(rows, dtype=float)


def random_inputs(model: object, count: int, rng: np.random.Generator) -> np.ndarray:
    """Encoded inputs that exercise every feature: angles in [-pi, pi], or random unit states."""
    n = model.ir.num_qubits  # type: ignore[attr-defined]
    if model.amplitude:  # type: ignore[attr-defined]
        z = rng.normal(size=(count, 2**n)) + 1j * rng.normal(size=(count, 2**n))
        return z / np.linalg.norm(z, axis=1, keepdims=True)
    return rng.uniform(-np.pi, np.pi, size=(count, len(model.ir.inputs)))  # type: ignore[attr-defined]


def check(
    model: object,
    reference: Callable[[np.ndarray], np.ndarray | None],
    against: str,
    encoded: np.ndarray | None = None,
    seed: int = 0,
    per_class: bool = False,
    decision: bool = False,
) -> float | None:
    """Largest |model - reference| over the inputs (random ones by default); InputError above
    TOLERANCE. None when the reference cannot be computed (nothing checked)."""
    count = inputs_for(model.ir.num_qubits)  # type: ignore[attr-defined]
    x = random_inputs(model, count, np.random.default_rng(seed)) if encoded is None else encoded
    ref = reference(x)
    if ref is None:
        return None
    ours = model_outputs(model, x, per_class, decision)
    ref = np.asarray(ref, dtype=float).reshape(ours.shape)
    diff = float(np.max(np.abs(ours - ref))) if ours.size else 0.0
    if not diff <= TOLERANCE:
        row = int(np.unravel_index(np.argmax(np.abs(ours - ref)), ours.shape)[0])
        raise InputError(
            f"import refused: the model differs from {against} by {diff:.3g} (tolerance {TOLERANCE:g}) "
            f"on input {np.round(x[row], 4).tolist()}: it would compute a different model"
        )
    return diff
