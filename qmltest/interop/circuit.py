"""`from_circuit`: any Qiskit circuit + trained weights -> a qmltest Model (model.qasm + model.json).

The circuit is flattened to standard gates (library blocks appended as one instruction are
decomposed, and remembered as layers), the weights are bound as numbers, the data parameters are
renamed ``x_000, x_001, ...`` in feature order (QASM3 export mangles other names and the loader
sorts them as strings; DESIGN.md), final measurements are replaced by the readout's, and the
result is exported to OpenQASM 3 and loaded back, so the model is exactly what `qmltest` reads
from disk. Nothing here touches the file system.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from qiskit.circuit import (
    ClassicalRegister,
    Instruction,
    Parameter,
    ParameterExpression,
    QuantumCircuit,
)

from qmltest.errors import InputError
from qmltest.interop import layers as lay
from qmltest.interop import roundtrip
from qmltest.interop.flattening import bind_weights, flatten, split_parameters  # noqa: F401
from qmltest.interop.preprocessing import to_head, to_steps
from qmltest.interop.readouts import TASKS, UNTRAINED, readout_spec  # noqa: F401  (their old home)
from qmltest.model import artifact, qasm
from qmltest.model import ir as irmod
from qmltest.model import readout as ro
from qmltest.simulate import statevector


def _role(op: Instruction, inputs: set[Parameter], weights: set[Parameter]) -> str:
    role = "C"
    for p in op.params:
        if isinstance(p, ParameterExpression) and p.parameters:
            if p.parameters & inputs:
                return "D"
            if p.parameters & weights:
                role = "W"
        elif isinstance(p, (int, float)) and not isinstance(p, bool):
            if lay.angle_role(float(p)) == "W":
                role = "W"
    return role


def _json_label(c: object) -> object:
    if isinstance(c, (np.integer,)):
        return int(c)
    if isinstance(c, (np.floating,)):
        return float(c)
    if isinstance(c, np.str_):
        return str(c)
    if isinstance(c, (int, float, str)) and not isinstance(c, bool):
        return c
    raise InputError(f"class label {c!r} must be an integer, number or string")


def from_circuit(
    circuit: QuantumCircuit,
    weights: object = None,
    input_params: Sequence[Parameter | str] | None = None,
    *,
    readout: str = "modulo",
    classes: Sequence | None = None,
    measure: Sequence[int] | None = None,
    readout_map: Sequence[int] | None = None,
    interpret: Callable[[int], int] | None = None,
    observables: Sequence[str] | None = None,
    threshold: float = 0.0,
    preprocessing: object = None,
    head: object = None,
    layers: str = "auto",
    encoding: str = "angle",
    name: str = "imported",
    provenance: dict | None = None,
    lenient: bool = False,
    task: str = "classification",
    kernel: dict | None = None,
) -> artifact.Model:
    """Build a qmltest Model from a Qiskit circuit and its trained weights (module docstring).

    readout: basis | parity | modulo (Qiskit ML VQC's ``x % C``) | map (readout_map or interpret)
    | expectation (observables: Pauli strings, Qiskit order). layers: auto | barriers | a spec
    ``0-24:feature_map,24-44:ansatz``. preprocessing: manifest steps or fitted scikit-learn
    scalers / PCA / a Pipeline of them / torch layers. head: a linear layer over the expectation
    values (torch ``nn.Linear`` or {'weight', 'bias'}; `to_head`). lenient: a class the readout
    never predicts is recorded in the manifest's ``import.warnings`` instead of refused (to mirror
    a library model as it is). task: 'regression' for a model whose output is the expectation value
    itself (one observable or a one-row head; no classes).
    """
    flat = flatten(circuit)
    inputs, weight_params = _parameters(circuit, input_params, weights, readout, encoding)
    binding: dict[Parameter, object] = dict(bind_weights(weight_params, weights))
    features = [Parameter(f"x_{i:03d}") for i in range(len(inputs))]
    binding.update(zip(inputs, features))
    roles = [_role(op, set(inputs), set(weight_params)) for op, _ in flat.gates]
    n = circuit.num_qubits
    warnings: list[str] | None = [] if lenient else None

    measured = _measured(readout, observables, measure, flat, n)
    labels_in = None if classes is None else list(classes)
    how = (readout_map, interpret, observables, threshold, n, warnings, to_head(head), task, kernel)
    spec, labels = readout_spec(readout, measured, labels_in, *how)
    labels = [_json_label(c) for c in labels]

    table = _layer_table(layers, flat, roles)
    text = _exported(flat, table, binding, spec["qubits"], n)
    feature_names = [p.name for p in features]
    model_ir, table = _loaded_back(text, feature_names, table)

    steps = to_steps(preprocessing)
    encoded_as = {"kind": "amplitude", "dim": 2**n, "padding": 0.0} if encoding == "amplitude" else {"kind": "angle"}
    notes = list(warnings or []) + ([UNTRAINED] if "W" not in roles and kernel is None else [])
    source_info = dict(provenance or {}, source_features=[p.name for p in inputs], weights=len(weight_params))
    source_info["warnings"] = notes
    manifest = _manifest(name, n, feature_names, encoded_as, steps, spec, labels, table, source_info, text)
    if task == "regression":
        manifest["task"] = "regression"
    artifact.validate_manifest(manifest, name)
    model = artifact.Model(text, model_ir, manifest, name)
    _check_preprocessing(model, steps)
    weight_set = set(weight_params)
    bound = {p: v for p, v in binding.items() if p in weight_set}
    _round_trip(model, circuit, bound, inputs, spec, encoding == "amplitude")
    return model


def _parameters(circuit: QuantumCircuit, input_params, weights, readout: str, encoding: str) -> tuple[list, list]:
    """(features, weights) of the circuit, once the readout and encoding are known and the
    encoding fits the features found (one line otherwise)."""
    if readout not in ro.KINDS:
        raise InputError(f"unknown readout '{readout}' (choose from {', '.join(ro.KINDS)})")
    if encoding not in ("angle", "amplitude"):
        raise InputError(f"encoding must be 'angle' or 'amplitude', got '{encoding}'")
    inputs, weight_params = split_parameters(circuit, input_params, weights)
    if encoding == "amplitude" and inputs:
        raise InputError("amplitude encoding prepares the state outside the circuit: it must have no data parameters")
    if encoding == "angle" and not inputs:
        raise InputError("the circuit has no data parameters: nothing to feed the inputs into (angle encoding)")
    return inputs, weight_params


def _loaded_back(text: str, feature_names: list[str], table: list[dict]) -> tuple[irmod.ModelIR, list[dict]]:
    """The exported text read back as qmltest reads a file (IR and layer table); unsupported
    symbolic gates fail here, not later."""
    loaded, spans = qasm.loads(text, "exported model")
    model_inputs = qasm.inputs_by_name(loaded, feature_names, "exported model")
    rows = [{k: r[k] for k in ("name", "kind", "start", "stop")} for r in table]
    model_ir, table = irmod.build(loaded, model_inputs, rows, spans)
    statevector.compile_circuit(irmod.unitary_part(model_ir))
    return model_ir, table


def _round_trip(
    model: artifact.Model, circuit: QuantumCircuit, bound: dict, inputs, spec: dict, amplitude: bool
) -> None:
    """The import's check against the source circuit (Qiskit Statevector), in the manifest."""

    def source(x: np.ndarray) -> np.ndarray | None:
        return roundtrip.circuit_outputs(circuit, bound, inputs, spec, x, amplitude)

    diff = roundtrip.check(model, source, "its source circuit (Qiskit Statevector)")
    model.manifest["import"]["roundtrip"] = (
        {
            "against": "qiskit.quantum_info.Statevector",
            "inputs": roundtrip.inputs_for(model.ir.num_qubits),
            "max_abs_diff": diff,
        }
        if diff is not None
        else {"against": None, "reason": "mid-circuit measurement or reset: no statevector reference"}
    )


def _manifest(
    name: str, n: int, features: list[str], encoding: dict, steps: list, spec: dict, labels: list, table, source, text
) -> dict:
    """The imported model's manifest (artifact.FORMAT_VERSION)."""
    return {
        "format_version": artifact.FORMAT_VERSION,
        "name": name,
        "arch": "imported",
        "num_qubits": n,
        "feature_names": features,
        "encoding": encoding,
        "preprocessing": steps,
        "readout": spec,
        "classes": labels,
        "layers": table,
        "training": {},
        "import": source,
        "qasm_sha256": qasm.sha256(text),
    }


def _measured(readout: str, observables, measure, flat, n: int) -> list[int]:
    """The qubits the readout reads: the observables' support, --measure, the circuit's own
    measurements, or every qubit; each a distinct qubit of the circuit (one line otherwise)."""
    if readout == "kernel":  # compute-uncompute reads every qubit
        measured = list(range(n))
    elif readout == "expectation":
        measured = ro.support(list(observables or [])) if observables else []
        if measure is not None and sorted(measure) != measured:
            raise InputError(f"--measure {list(measure)} does not fit the observables' support {measured}")
    elif measure is not None:
        measured = [int(q) for q in measure]
    elif flat.measures:
        measured = [q for _, q in flat.measures]
    else:
        measured = list(range(n))
    if any(not 0 <= q < n for q in measured) or len(set(measured)) != len(measured):
        raise InputError(f"measured qubits {measured} must be distinct qubits of the {n}-qubit circuit")
    return measured


def _layer_table(layers: str, flat, roles: list) -> list[dict]:
    """The layer table: the library's blocks (auto), inferred from the gates' roles with the feature
    maps first where there are none (`flat` reordered in place), barriers, or a spec."""
    if layers == "auto":
        table = lay.from_groups(flat.groups, flat.labels, roles)
        if table is None:  # no library blocks: infer, on an order with the feature maps first
            order = lay.feature_first(roles, [q for _, q in flat.gates])
            flat.gates, roles[:] = [flat.gates[i] for i in order], [roles[i] for i in order]
            table = lay.infer(roles, [q for _, q in flat.gates], [op.name for op, _ in flat.gates])
        return table
    if layers == "barriers":
        return lay.from_barriers(flat.barriers, roles)
    return lay.parse_spec(layers, len(flat.gates))


def _exported(flat, table: list[dict], binding: dict, qubits: list[int], n: int) -> str:
    """The model's OpenQASM 3: the gates with a barrier between layers, weights bound, features as
    inputs, then the readout's measurements."""
    qc = QuantumCircuit(n)
    cuts = {row["start"] for row in table[1:]}
    for pos, (op, on) in enumerate(flat.gates):
        if pos in cuts:
            qc.barrier()
        qc.append(op, list(on))
    qc.assign_parameters({p: v for p, v in binding.items() if p in qc.parameters}, inplace=True)
    qc.barrier()
    creg = ClassicalRegister(len(qubits), "meas")
    qc.add_register(creg)
    for c, q in enumerate(qubits):
        qc.measure(q, creg[c])
    return qasm.dumps(qc)


def _check_preprocessing(model: artifact.Model, steps: list[dict]) -> None:
    """The preprocessing must end in as many values as the circuit has features."""
    from qmltest.data.preprocess import input_width, preprocess

    if not steps:
        return
    width = input_width(steps[0])
    if width is None:
        return
    out = preprocess(steps, np.zeros((1, width)))
    need = 2**model.ir.num_qubits if model.amplitude else len(model.ir.inputs)
    if (model.amplitude and out.shape[1] > need) or (not model.amplitude and out.shape[1] != need):
        raise InputError(f"the preprocessing yields {out.shape[1]} features but the circuit takes {need}")
