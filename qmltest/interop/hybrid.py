"""`from_torch`: a torch hybrid around a Qiskit ML `TorchConnector` -> a qmltest Model.

``nn.Sequential(Linear, Tanh, ..., TorchConnector(qnn), Linear)``: the layers before the connector
become manifest preprocessing steps, the connector's QNN and its trained weights the circuit, and
one Linear after it the readout's linear head (`qmltest.model.readout`). Nothing imports torch here;
the objects are read through their attributes.

The check against the library: TorchConnector returns float32 (``torch.as_tensor(result,
dtype=torch.float)``), so its forward pass cannot agree to 1e-9 with anything computed in float64.
The reference is the same composition in float64: the torch layers run in double on a copy, the
QNN's own ``forward`` on the connector's weights (float32 values, exact in float64), the head in
double. Against the float32 module itself the import records the largest difference too.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from qmltest.data.preprocess import input_width
from qmltest.errors import InputError
from qmltest.interop import roundtrip
from qmltest.interop.qiskit_ml import from_qiskit_ml
from qmltest.model import artifact


def _parts(module: object) -> tuple[list, object, list]:
    """(layers before, the TorchConnector, layers after) of a Sequential (or a bare connector)."""
    layers = list(module) if type(module).__name__ == "Sequential" else [module]  # type: ignore[call-overload]
    at = [i for i, layer in enumerate(layers) if type(layer).__name__ == "TorchConnector"]
    if len(at) != 1:
        raise InputError(
            f"a torch hybrid must hold exactly one TorchConnector (qiskit-machine-learning), found {len(at)}"
        )
    return layers[: at[0]], layers[at[0]], layers[at[0] + 1 :]


def from_torch(module: object, *, classes: Sequence | None = None, name: str = "imported") -> artifact.Model:
    """Convert a torch hybrid (module docstring); refused in one line when its parts are unsupported
    or the imported model differs from the float64 composition of the library's layers by > 1e-9."""
    before, connector, after = _parts(module)
    heads = [layer for layer in after if type(layer).__name__ not in ("Identity", "Flatten", "Dropout")]
    if len(heads) > 1 or (heads and type(heads[0]).__name__ != "Linear"):
        raise InputError(
            "after the TorchConnector qmltest reads one Linear layer (the readout head), got "
            + ", ".join(type(layer).__name__ for layer in heads)
        )
    qnn = connector.neural_network  # type: ignore[attr-defined]
    weights = connector.weight.detach().cpu().numpy().astype(float)  # type: ignore[attr-defined]
    model = from_qiskit_ml(
        qnn,
        weights,
        classes=classes,
        preprocessing=before or None,
        head=heads[0] if heads else None,
        name=name,
    )
    model.manifest["import"].update(library="torch + qiskit-machine-learning", object=type(module).__name__)
    _check_against_torch(model, module, before, qnn, weights, heads)
    return model


def _check_against_torch(
    model: artifact.Model, module: object, before: list, qnn: object, weights: np.ndarray, heads: list
) -> None:
    """Raw inputs through the model and through the library's layers (float64 and as trained)."""
    import torch

    steps = model.manifest["preprocessing"]
    width = (input_width(steps[0]) if steps else None) or len(model.ir.inputs)
    raw = np.random.default_rng(2).uniform(-1.0, 1.0, size=(roundtrip.INPUTS, width))
    with torch.no_grad():
        hidden = raw
        if before:
            hidden = copy.deepcopy(torch.nn.Sequential(*before)).double()(torch.from_numpy(raw)).numpy()
        out = np.asarray(qnn.forward(hidden, weights), dtype=float).reshape(len(raw), -1)  # type: ignore[attr-defined]
        if heads:
            out = copy.deepcopy(heads[0]).double()(torch.from_numpy(out)).numpy()
        as_trained = module(torch.from_numpy(raw).float()).double().numpy().reshape(len(raw), -1)  # type: ignore[operator]
    ours = roundtrip.model_outputs(model, model.encode(raw), per_class=True)
    diff = float(np.max(np.abs(ours - out)))
    if not diff <= roundtrip.TOLERANCE:
        raise InputError(
            f"import refused: the model differs from the torch hybrid's layers (float64) by {diff:.3g} "
            f"(tolerance {roundtrip.TOLERANCE:g}): it would compute a different model"
        )
    model.manifest["import"]["torch_roundtrip"] = {
        "against": "torch layers in float64 + QNN.forward",
        "inputs": roundtrip.INPUTS,
        "max_abs_diff": diff,
        "max_abs_diff_float32_module": float(np.max(np.abs(ours - as_trained))),
    }
