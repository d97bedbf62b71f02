"""`qmltest import`: a circuit trained elsewhere (OpenQASM 3/2, QPY + weights) -> a model folder."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from qmltest_cli.common import err, handle_errors, parse_list, write_output
from qmltest_cli.inspect_cmd import describe, render

from qmltest.data import datasets
from qmltest.errors import InputError
from qmltest.interop import from_circuit, sources
from qmltest.interop.preprocessing import parse_cli
from qmltest.util import writers as report


def _labels(text: str | None) -> list | None:
    """Class labels: integers when every label is one, else strings."""
    if text is None:
        return None
    parts = [v.strip() for v in text.split(",") if v.strip()]
    if len(parts) < 2:
        raise InputError(f"--classes needs two or more comma-separated labels, got '{text}'")
    if len(set(parts)) != len(parts):
        raise InputError(f"--classes names a label twice: '{text}'")
    try:
        return [int(v) for v in parts]
    except ValueError:
        return parts


def _check_out(out_dir: Path, force: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out {out_dir}: exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not force:
        raise InputError(f"--out {out_dir}: is not empty (use --force to overwrite the model files)")


@handle_errors
def import_model(
    source: Path = typer.Argument(..., help="Circuit file: OpenQASM 3 or 2 (.qasm), or QPY (.qpy)."),
    out_dir: Path = typer.Option(..., "--out", help="Model folder to write (model.qasm + model.json)."),
    classes: str = typer.Option(None, help="Class labels in class-index order, e.g. 0,1,2."),
    task: str = typer.Option(
        "classification", help="classification, or regression: the output is the expectation value (--observables)."
    ),
    readout: str = typer.Option(
        None, help="basis, parity, modulo (VQC's x % C), map or expectation; default modulo (expectation: regression)."
    ),
    readout_map: str = typer.Option(None, "--map", help="map readout: class index per basis state (-1: none)."),
    measure: str = typer.Option(None, help="Readout qubits, bit 0 first (default: the circuit's final measurements)."),
    observables: str = typer.Option(None, help="expectation readout: Pauli strings (Qiskit order), e.g. ZIII,IZII."),
    threshold: float = typer.Option(0.0, help="expectation readout with one observable: class 1 when <P> > this."),
    weights: Path = typer.Option(None, help="Trained weights: .npy/.npz vector in parameter order or .json."),
    features: str = typer.Option(None, help="Names of the data parameters, in feature order."),
    probe: str = typer.Option(None, help="OpenQASM 2: the feature values the circuit was exported with."),
    verify: str = typer.Option(
        None, help="OpenQASM 2: a second export and its feature values, FILE=v0,v1,... (checks the recovered angles)."
    ),
    preprocess: list[str] = typer.Option(
        None, help="Repeatable: scale=LO:HI, standard (fitted on --data), pca=FILE.npz, steps=FILE.json."
    ),
    data: str = typer.Option(None, help="Training data to fit --preprocess scalers: name[:split] or file."),
    kernel: Path = typer.Option(
        None,
        help="A kernel SVM over the circuit as its feature map: NPZ of support_vectors, dual_coef, intercept, classes.",
    ),
    head: Path = typer.Option(
        None, help="expectation readout: a linear layer over the <O_j>, JSON {weight: [[..]], bias: [..]}."
    ),
    layers: str = typer.Option(
        "auto", help="auto, barriers, or START-STOP:KIND,... e.g. 0-24:feature_map,24-44:ansatz."
    ),
    encoding: str = typer.Option(
        "angle", help="angle (features in the circuit) or amplitude (state prepared outside)."
    ),
    name: str = typer.Option(None, help="Model name (default: the folder name)."),
    force: bool = typer.Option(False, "--force", help="Overwrite model files in a non-empty --out."),
    json_out: Path = typer.Option(None, "--json", help="Write what was decided as JSON ('-' for stdout)."),
) -> None:
    """Import a trained circuit as a qmltest model and print what was decided (as `inspect` does)."""
    started = time.perf_counter()
    _check_out(out_dir, force)
    circuit, fmt = sources.load_circuit(source, parse_list(probe, "--probe", float))
    provenance: dict = {"source": source.name, "format": fmt}
    if verify is not None:
        if fmt != "qasm2":
            raise InputError("--verify checks an OpenQASM 2 import's probe recovery: the source is not OpenQASM 2")
        path, sep, values = verify.partition("=")
        if not sep:
            raise InputError(f"--verify takes FILE=v0,v1,..., got '{verify}'")
        other, _ = sources.load_circuit(Path(path), None, bound=True)
        checked = sources.verify_probe(circuit, other, parse_list(values, "--verify", float) or [], path)
        provenance["probe_verified"] = {"against": Path(path).name, "max_abs_diff": checked}
    weight_values = sources.load_weights(weights) if weights is not None else None
    svm = None
    if kernel is not None:
        from qmltest.interop.svm import load_npz

        svm = load_npz(kernel)
        if svm["classes"] is None and task == "classification" and classes is None:
            task = "regression"  # an SVM without classes (QSVR) outputs its decision value
    data_x = None
    if data is not None:
        pick = datasets.select_targets if task == "regression" else datasets.select
        data_x, _ = pick(data, "train")
    steps = parse_cli(list(preprocess or []), data_x)
    model = from_circuit(
        circuit,
        weight_values,
        None if features is None else [f.strip() for f in features.split(",") if f.strip()],
        readout=readout or ("kernel" if svm is not None else "expectation" if task == "regression" else "modulo"),
        classes=_labels(classes),
        measure=parse_list(measure, "--measure"),
        readout_map=parse_list(readout_map, "--map"),
        observables=None if observables is None else [o.strip() for o in observables.split(",") if o.strip()],
        threshold=threshold,
        preprocessing=steps,
        head=None if head is None else sources.load_json(head),
        layers=layers,
        encoding=encoding,
        name=name or out_dir.resolve().name,
        provenance=provenance,
        task=task,
        kernel=svm,
    )
    if fmt == "qasm2" and "probe_verified" not in provenance:
        err.print(
            "note: the probe recovery is not checked away from the probe values: export again at other values "
            "and pass --verify FILE=v0,v1,...",
            markup=False,
        )
    for note in model.manifest["import"].get("warnings", []):
        err.print(f"warning: {note}", markup=False)
    model.save(out_dir)
    info = describe(model)
    info["source"] = str(out_dir)
    write_output(json_out, report.to_json(info))
    if str(json_out) == "-":
        return
    render(info)
    err.print(f"imported {source} ({fmt}) -> {out_dir} in {time.perf_counter() - started:.2f} s", markup=False)
