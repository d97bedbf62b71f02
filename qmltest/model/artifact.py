"""The model artifact: `model.qasm` (OpenQASM 3, weights bound, features as inputs) + `model.json`.

Loading checks the manifest's every field and the QASM3 hash; saving is atomic. A plain QASM3 file
without a manifest loads too: all measured qubits are the readout, classes by parity (two
classes), and what was inferred is listed in `Model.inferred`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from qmltest import schemas
from qmltest.data.preprocess import amplitude_states, preprocess
from qmltest.errors import InputError
from qmltest.model import ir as irmod
from qmltest.model import qasm, readout
from qmltest.model.qasm import MAX_ANGLE
from qmltest.model.readout import marginalize
from qmltest.util.files import readable
from qmltest.util.memo import Memo, memo_field
from qmltest.util.writers import read_json, write_text_atomic

FORMAT_VERSION = 1
QASM_NAME, MANIFEST_NAME = "model.qasm", "model.json"
REQUIRED = (
    "format_version",
    "name",
    "num_qubits",
    "feature_names",
    "encoding",
    "preprocessing",
    "readout",
    "classes",
    "layers",
    "qasm_sha256",
)


@dataclass(frozen=True)
class Model:
    """A loaded model, as data: QASM3 text, IR, manifest, and the helpers to encode inputs and read
    outputs. Running it is `qmltest.simulate` (`program.of_model`, `runner.probabilities`)."""

    qasm_text: str
    ir: irmod.ModelIR
    manifest: dict
    source: str = "<memory>"
    inferred: tuple[str, ...] = field(default_factory=tuple)
    memo: Memo = memo_field()
    """What is derived from this model (its compiled program): `qmltest.simulate.program`."""

    def __repr__(self) -> str:
        """One line: name, size, what it outputs, where it came from (not its QASM text)."""
        outputs = "one real output" if self.is_regressor else f"classes {self.classes}"
        kind = " kernel" if self.is_kernel else ""
        size = f"{self.ir.num_qubits} qubits, {len(self.ir.gates)} gates"
        return f"<Model{kind} {self.manifest.get('name', '?')!r}: {size}, {outputs}, from {self.source}>"

    @property
    def classes(self) -> list:
        return list(self.manifest["classes"])

    @property
    def num_classes(self) -> int:
        return len(self.manifest["classes"])

    @property
    def task(self) -> str:
        """'classification' (a class per input) or 'regression' (one real output per input)."""
        return str(self.manifest.get("task", "classification"))

    @property
    def is_regressor(self) -> bool:
        return self.task == "regression"

    @property
    def is_kernel(self) -> bool:
        """A fidelity-kernel SVM (`qmltest.model.kernel`): the circuit is its feature map."""
        return self.manifest["readout"].get("kind") == "kernel"

    def outputs(self, probs_or_freqs: np.ndarray) -> np.ndarray:
        """A regressor's output per row, from exact probabilities or shot frequencies (counts / shots)."""
        return (np.asarray(probs_or_freqs) @ self.readout_matrix)[:, 0]

    @property
    def readout_map(self) -> list[int]:
        """The state -> class table of a map readout (expectation readouts have none)."""
        return list(self.manifest["readout"].get("map", []))

    @cached_property
    def readout_matrix(self) -> np.ndarray:
        """(2^m, C) class-score matrix of the readout (see `qmltest.model.readout`)."""
        return readout.matrix(self.manifest["readout"], self.num_classes)

    @property
    def amplitude(self) -> bool:
        return self.manifest["encoding"]["kind"] == "amplitude"

    @property
    def sha256(self) -> str:
        return self.manifest["qasm_sha256"]

    @cached_property
    def measurement_bases(self) -> int:
        """How many measurement bases the readout needs (1 unless observables do not commute qubit-wise)."""
        return len(readout.basis_tails(self.manifest["readout"]))

    def readout_from_full(self, full: np.ndarray) -> np.ndarray:
        """Readout-register probabilities from all-qubit probabilities (per measurement basis)."""
        g, n = self.measurement_bases, self.ir.num_qubits
        blocks = np.asarray(full).reshape(len(full), g, 2**n)
        return np.concatenate([marginalize(blocks[:, b], list(self.ir.measured), n) for b in range(g)], axis=1)

    def encode(self, raw: np.ndarray) -> np.ndarray:
        """Raw dataset features -> engine input (angles (N, F) or states (N, 2^n))."""
        x = preprocess(self.manifest["preprocessing"], raw)
        if self.amplitude:
            return amplitude_states(x, self.ir.num_qubits, float(self.manifest["encoding"].get("padding", 0.0)))
        if x.shape[1] != len(self.ir.inputs):
            raise InputError(
                f"wrong feature count: {self.source} expects {len(self.ir.inputs)} features, got {x.shape[1]}"
            )
        far = np.abs(x) > MAX_ANGLE
        if far.any():
            i, j = (int(v) for v in np.argwhere(far)[0])
            raise InputError(
                f"input {i}: feature {self.ir.inputs[j].name} is {x[i, j]:g} after the model's preprocessing, beyond "
                f"{MAX_ANGLE:g}: the angles it sets keep no significant digit"
            )
        return x

    def predict(self, probs_or_counts: np.ndarray) -> np.ndarray:
        if self.is_regressor:
            raise InputError(f"{self.source} is a regressor: it outputs values (Model.outputs), not classes")
        return readout.predict(probs_or_counts, self.readout_matrix, self.num_classes)

    def save(self, folder: str | Path) -> Path:
        """Write the usual model folder (model.qasm + model.json) atomically."""
        return save(self.exported(), folder)

    def exported(self) -> Model:
        """This model with its QASM3 text present (export deferred by with_ir(export=False))."""
        return self if self.qasm_text else self.with_ir(self.ir)

    def with_manifest(self, **updates: object) -> Model:
        """The same circuit with manifest fields replaced (e.g. a data mutation's preprocessing)."""
        return replace(self, manifest=dict(self.manifest, **updates))

    def with_ir(self, new_ir: irmod.ModelIR, export: bool = True, **manifest_updates: object) -> Model:
        """A new model from a transformed IR; the QASM3 text and hash are regenerated.

        export=False skips the QASM3 export (the costly part of making a mutant): the model can be
        simulated, and `exported()` writes the text when the mutant is saved.
        """
        if not export:
            manifest = dict(self.manifest, layers=new_ir.layer_table(), qasm_sha256="", **manifest_updates)
            return replace(self, qasm_text="", ir=new_ir, manifest=manifest)
        text = qasm.dumps(irmod.to_circuit(new_ir))
        manifest = dict(self.manifest, layers=new_ir.layer_table(), qasm_sha256=qasm.sha256(text), **manifest_updates)
        return replace(self, qasm_text=text, ir=new_ir, manifest=manifest)


def _fail(source: str, msg: str) -> InputError:
    return InputError(f"{source}: {msg}")


WIDE_MAP = 1024
"""A readout map longer than this (a model reading out 11 or more qubits) has its items checked
in one pass rather than one schema descent each: 1.1 s for a 16-qubit map, 17 s for 20 qubits."""


def validate_manifest(m: dict, source: str) -> None:
    """Check every field (the published JSON Schema, then what a schema cannot say); raise one
    InputError naming the file, the field and what was expected."""
    if not isinstance(m, dict):
        raise _fail(source, "manifest must be a JSON object")
    for key in REQUIRED:
        if key not in m:
            raise _fail(source, f"manifest field '{key}' is missing")
    if m["format_version"] != FORMAT_VERSION:
        raise _fail(
            source, f"manifest 'format_version' {m['format_version']} is not supported (expected {FORMAT_VERSION})"
        )
    ro_in = m.get("readout")
    table = ro_in.get("map") if isinstance(ro_in, dict) else None
    if isinstance(table, list) and len(table) > WIDE_MAP:  # the schema's item rule, checked at once
        if not all(type(v) in (int, float) and v >= -1 for v in table):  # floats: refused below
            raise _fail(source, "manifest 'readout.map' must hold integers of at least -1")
        schemas.validate("manifest", dict(m, readout=dict(ro_in, map=table[:1])), source)
    else:
        schemas.validate("manifest", m, source)  # types, ranges, required keys, finite numbers
    whole = [("num_qubits", [m["num_qubits"]]), ("readout.qubits", m["readout"]["qubits"])]
    whole.append(("readout.map", m["readout"].get("map", [])))
    for name, values in whole:  # JSON Schema counts 4.0 as an integer; indices must be written as ints
        if any(isinstance(v, float) for v in values):
            raise _fail(source, f"manifest '{name}' must hold whole numbers written without a decimal point")
    if m["encoding"]["kind"] == "amplitude" and m["feature_names"]:
        raise _fail(source, "manifest 'feature_names' must be empty for amplitude encoding")
    classes, ro = m["classes"], m["readout"]
    if ro["kind"] == "expectation":
        _validate_expectation(ro, m, source)
    elif ro["kind"] == "kernel":
        from qmltest.model import kernel

        try:
            if m["encoding"]["kind"] != "angle":
                raise InputError("a kernel model's feature map takes its features as angles")
            kernel.check(ro, len(m["feature_names"]), m["num_qubits"], len(classes))
        except InputError as exc:
            raise _fail(source, f"manifest 'readout': {exc}") from None
    else:
        if len(ro["map"]) != 2 ** len(ro["qubits"]):
            raise _fail(source, f"manifest 'readout.map' must have 2^{len(ro['qubits'])} entries")
        if not all(c < len(classes) for c in ro["map"]):
            raise _fail(source, "manifest 'readout.map' entries must be class indices or -1")
        never = [classes[c] for c in range(len(classes)) if c not in ro["map"]]
        if never and not ro.get("allow_unreachable", False):
            raise _fail(
                source,
                f"manifest 'readout.map' never predicts class(es) {never} "
                "(set readout.allow_unreachable to true to keep such a model as it is)",
            )
    _validate_preprocessing(m, source)


def _validate_preprocessing(m: dict, source: str) -> None:
    """The steps must chain: each step's input width is the previous one's output width, and the
    last gives as many features as the circuit reads (angle) or at most 2^n (amplitude)."""
    steps = m["preprocessing"]
    if not steps:
        return
    from qmltest.data.preprocess import input_width

    width = input_width(steps[0])
    if width is None:
        return
    try:
        with np.errstate(all="ignore"):
            out = preprocess(steps, np.zeros((1, width)))
    except InputError as exc:
        raise _fail(source, f"manifest 'preprocessing': {exc}") from None
    except (ValueError, IndexError, TypeError) as exc:
        raise _fail(source, f"manifest 'preprocessing' steps do not chain: {exc}") from None
    need = len(m["feature_names"])
    if m["encoding"]["kind"] == "amplitude":
        if out.shape[1] > 2 ** m["num_qubits"]:
            raise _fail(source, f"manifest 'preprocessing' gives {out.shape[1]} values for {m['num_qubits']} qubits")
    elif out.shape[1] != need:
        raise _fail(source, f"manifest 'preprocessing' gives {out.shape[1]} features but 'feature_names' has {need}")


def _validate_expectation(ro: dict, m: dict, source: str) -> None:
    """An expectation readout: observables over the circuit's width, measured = their support."""
    obs = ro["observables"]
    try:
        readout.check_observables(obs, m["num_qubits"], len(m["classes"]), ro.get("head"))
        if "head" in ro and "threshold" in ro:
            raise InputError("a linear head carries its own bias: drop 'threshold'")
    except InputError as exc:
        raise _fail(source, f"manifest 'readout': {exc}") from None
    support = readout.support(obs)
    if ro["qubits"] != support:
        raise _fail(source, f"manifest 'readout.qubits' must be the observables' support {support}")


def load(path: str | Path, manifest_path: str | Path | None = None) -> Model:
    """Load a model folder (model.qasm + model.json) or a bare .qasm file (manifest given or inferred)."""
    path = Path(path)
    if path.is_dir():
        qasm_path = path / QASM_NAME
        if manifest_path is None and (path / MANIFEST_NAME).exists():
            manifest_path = path / MANIFEST_NAME
    else:
        qasm_path = path
    readable(qasm_path, "an OpenQASM 3 file")
    try:
        text = qasm_path.read_text()
    except UnicodeDecodeError:
        raise InputError(f"{qasm_path}: not a UTF-8 text file") from None
    circuit, spans = qasm.loads(text, str(qasm_path))
    if manifest_path is None:
        return _infer(text, circuit, spans, str(qasm_path))
    manifest_path = Path(manifest_path)
    manifest = read_json(manifest_path)
    validate_manifest(manifest, str(manifest_path))  # type: ignore[arg-type]
    if manifest["qasm_sha256"] != qasm.sha256(text):
        raise InputError(f"{manifest_path}: 'qasm_sha256' does not match {qasm_path} (the circuit was changed)")
    if manifest["num_qubits"] != circuit.num_qubits:
        raise InputError(
            f"{manifest_path}: 'num_qubits' is {manifest['num_qubits']} but the circuit has {circuit.num_qubits}"
        )
    inputs = qasm.inputs_by_name(circuit, manifest["feature_names"], str(qasm_path))
    model_ir, _ = irmod.build(circuit, inputs, manifest["layers"] or None, spans)
    if list(model_ir.measured) != list(manifest["readout"]["qubits"]):
        raise InputError(
            f"{manifest_path}: 'readout.qubits' {manifest['readout']['qubits']} "
            f"differ from the measured qubits {list(model_ir.measured)}"
        )
    return Model(text, model_ir, manifest, str(path))


def _natural_key(name: str) -> tuple:
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _infer(text: str, circuit, spans, source: str) -> Model:
    names = sorted((p.name for p in circuit.parameters), key=_natural_key)
    inputs = qasm.inputs_by_name(circuit, names, source)
    model_ir, table = irmod.build(circuit, inputs, None, spans)
    manifest = {
        "format_version": FORMAT_VERSION,
        "name": Path(source).stem,
        "arch": "unknown",
        "num_qubits": circuit.num_qubits,
        "feature_names": names,
        "encoding": {"kind": "angle"},
        "preprocessing": [],
        "readout": {
            "kind": "parity",
            "qubits": list(model_ir.measured),
            "map": readout.table("parity", len(model_ir.measured), 2),
        },
        "classes": [0, 1],
        "layers": table,
        "training": {},
        "qasm_sha256": qasm.sha256(text),
    }
    inferred = (
        "no manifest: features are the QASM3 inputs in natural name order",
        "encoding: angle, no preprocessing",
        f"readout: parity over measured qubits {list(model_ir.measured)}, classes [0, 1]",
        "layers: " + ", ".join(f"{r['name']}({r['kind']}, gates {r['start']}-{r['stop']})" for r in table),
    )
    return Model(text, model_ir, manifest, source, inferred)


def save(model: Model, folder: str | Path, validate: bool = True) -> Path:
    """Write model.qasm and model.json atomically; the manifest hash is recomputed.

    validate=False skips the schema check (4.5 ms): for a run folder's mutants, whose manifests
    differ from an already checked one only in the layer table and hash that qmltest wrote."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = dict(model.manifest, qasm_sha256=qasm.sha256(model.qasm_text))
    if validate:
        validate_manifest(manifest, str(folder / MANIFEST_NAME))
    write_text_atomic(folder / QASM_NAME, model.qasm_text)
    write_text_atomic(folder / MANIFEST_NAME, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return folder
