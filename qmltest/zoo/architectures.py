"""Benchmark QNN architectures (QCov Table 1, QuanForge Table 2, QML-mutation paper Sec. V-A).

Each builder returns layers of gates with features `x_###` (data) and weights `w_###` as free
parameters; training binds the weights. All weight gates are single-angle rotations whose angle is
the bare weight, so the adjoint gradient applies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from qiskit.circuit import Parameter, QuantumCircuit
from qiskit.circuit.library import efficient_su2, real_amplitudes, z_feature_map, zz_feature_map

from qmltest.errors import InputError


@dataclass
class Built:
    """A parameterized architecture: layers (name, kind, fragment), readout, encoding."""

    num_qubits: int
    layers: list[tuple[str, str, QuantumCircuit]]
    measured: list[int]
    readout: str  # basis | modulo | parity
    encoding: str  # angle | amplitude
    features: list[Parameter] = field(default_factory=list)
    weights: list[Parameter] = field(default_factory=list)

    def circuit(self) -> QuantumCircuit:
        qc = QuantumCircuit(self.num_qubits)
        for i, (_, _, frag) in enumerate(self.layers):
            if i:
                qc.barrier()
            qc.compose(frag, inplace=True)
        return qc


class _Params:
    """Hands out weight parameters w_000, w_001, ... in creation order."""

    def __init__(self) -> None:
        self.made: list[Parameter] = []

    def __call__(self) -> Parameter:
        p = Parameter(f"w_{len(self.made):03d}")
        self.made.append(p)
        return p


def features(count: int) -> list[Parameter]:
    """Zero-padded names, so string order equals feature order."""
    return [Parameter(f"x_{i:03d}") for i in range(count)]


def qcl(num_classes: int, depth: int = 5, n: int = 8) -> Built:
    """QCL (Mitarai et al.): amplitude encoding; layers of RX RZ RX rotations and a CNOT chain."""
    w = _Params()
    layers = []
    for d in range(depth):
        frag = QuantumCircuit(n)
        for q in range(n):
            frag.rx(w(), q)
            frag.rz(w(), q)
            frag.rx(w(), q)
        for q in range(n - 1):
            frag.cx(q, q + 1)
        layers.append((f"ansatz_{d}", "ansatz", frag))
    measured = [0, 1] if num_classes == 2 else list(range(num_classes))  # QuanForge Table 2
    return Built(n, layers, measured, "basis", "amplitude", [], w.made)


def ccqc(num_classes: int, depth: int = 4, n: int = 8) -> Built:
    """CCQC (Schuld et al.): general single-qubit rotations and ring-shaped controlled rotations."""
    w = _Params()
    layers = []
    ranges = [1, 3, 1, 3]
    for d in range(depth):
        frag = QuantumCircuit(n)
        for q in range(n):
            frag.rz(w(), q)
            frag.ry(w(), q)
            frag.rz(w(), q)
        r = ranges[d % len(ranges)]
        for q in range(n):
            frag.crx(w(), q, (q + r) % n)
        layers.append((f"ansatz_{d}", "ansatz", frag))
    return Built(n, layers, [0] if num_classes == 2 else [0, 1], "basis", "amplitude", [], w.made)


def _conv(frag: QuantumCircuit, w: _Params, a: int, b: int) -> None:
    frag.ry(w(), a)
    frag.ry(w(), b)
    frag.cx(a, b)
    frag.ry(w(), a)
    frag.ry(w(), b)
    frag.cx(b, a)


def _pool(frag: QuantumCircuit, w: _Params, src: int, dst: int) -> None:
    frag.crz(w(), src, dst)
    frag.x(src)
    frag.crx(w(), src, dst)


def qcnn(num_classes: int, n: int = 8) -> Built:
    """QCNN (Cong et al., Hur et al.): convolution and pooling layers 8 -> 4 -> 2 qubits."""
    w = _Params()
    stages = [
        ([(0, 1), (2, 3), (4, 5), (6, 7), (1, 2), (3, 4), (5, 6), (7, 0)], [(1, 0), (3, 2), (5, 4), (7, 6)]),
        ([(0, 2), (4, 6), (2, 4), (6, 0)], [(4, 0), (6, 2)]),
        ([(0, 2)], []),
    ]
    layers = []
    for i, (convs, pools) in enumerate(stages):
        frag = QuantumCircuit(n)
        for a, b in convs:
            _conv(frag, w, a, b)
        layers.append((f"conv_{i}", "ansatz", frag))
        if pools:
            frag = QuantumCircuit(n)
            for s, d in pools:
                _pool(frag, w, s, d)
            layers.append((f"pool_{i}", "ansatz", frag))
    return Built(n, layers, [0, 2], "basis", "amplitude", [], w.made)


def _so4(frag: QuantumCircuit, w: _Params, a: int, b: int) -> None:
    """U_SO4 of Hur et al.: the QCNN convolution RY RY CNOT RY RY CNOT, then RY RY (6 parameters)."""
    _conv(frag, w, a, b)
    frag.ry(w(), a)
    frag.ry(w(), b)


def _ttn(frag: QuantumCircuit, w: _Params, a: int, b: int) -> None:
    """U_TTN of Hur et al.: RY RY CNOT (2 parameters)."""
    frag.ry(w(), a)
    frag.ry(w(), b)
    frag.cx(a, b)


def _u3(frag: QuantumCircuit, w: _Params, q: int) -> None:
    """A general single-qubit rotation as RZ RY RZ (three single-angle gates, adjoint-friendly)."""
    frag.rz(w(), q)
    frag.ry(w(), q)
    frag.rz(w(), q)


def _su4(frag: QuantumCircuit, w: _Params, a: int, b: int) -> None:
    """U_SU4 of Hur et al. (15 parameters): U3 x U3, CNOT, RY RZ, CNOT, RY, CNOT, U3 x U3."""
    _u3(frag, w, a)
    _u3(frag, w, b)
    frag.cx(a, b)
    frag.ry(w(), a)
    frag.rz(w(), b)
    frag.cx(b, a)
    frag.ry(w(), a)
    frag.cx(a, b)
    _u3(frag, w, a)
    _u3(frag, w, b)


HCQC_LEVELS = [
    [(0, 1), (2, 3), (4, 5), (6, 7), (1, 2), (3, 4), (5, 6), (7, 0)],
    [(1, 3), (5, 7), (3, 5), (7, 1)],
    [(3, 7)],
]


def _hcqc(block: Callable[[QuantumCircuit, _Params, int, int], None], n: int = 8) -> Built:
    """Hierarchical blocks 8 -> 4 -> 2 -> readout qubit 7 (Hur et al.)."""
    w = _Params()
    layers = []
    for i, pairs in enumerate(HCQC_LEVELS):
        frag = QuantumCircuit(n)
        for a, b in pairs:
            block(frag, w, a, b)
        layers.append((f"level_{i}", "ansatz", frag))
    return Built(n, layers, [7], "basis", "amplitude", [], w.made)


def hcqc_so4(num_classes: int) -> Built:
    """HCQC with U_SO4 blocks (6 parameters each)."""
    return _hcqc(_so4)


def hcqc_su4(num_classes: int) -> Built:
    """HCQC with U_SU4 blocks (15 parameters each)."""
    return _hcqc(_su4)


def hcqc_ttn(num_classes: int) -> Built:
    """HCQC with U_TTN blocks (2 parameters each)."""
    return _hcqc(_ttn)


def drnn(num_classes: int, n: int = 8, num_features: int = 64) -> Built:
    """Data re-uploading classifier (Perez-Salinas et al.): RX(x) encodings between RY RZ + CRZ ring."""
    w = _Params()
    x = features(num_features)
    layers = []
    for i in range(0, num_features, n):
        enc = QuantumCircuit(n)
        for q in range(n):
            if i + q < num_features:
                enc.rx(x[i + q], q)
        layers.append((f"encode_{i // n}", "feature_map", enc))
        frag = QuantumCircuit(n)
        for q in range(n):
            frag.ry(w(), q)
            frag.rz(w(), q)
        for q in range(n):
            frag.crz(w(), q, (q + 1) % n)
        layers.append((f"ansatz_{i // n}", "ansatz", frag))
    return Built(n, layers, [0, 1] if num_classes > 2 else [0], "basis", "angle", x, w.made)


def hqnn(num_classes: int, n: int = 8, depth: int = 3) -> Built:
    """HQNN (Shi et al.): a classical linear layer (in the manifest) feeding RY angles, then QCL layers."""
    x = features(n)
    enc = QuantumCircuit(n)
    for q in range(n):
        enc.ry(x[q], q)
    body = qcl(num_classes, depth, n)
    layers = [("encode", "feature_map", enc)] + body.layers
    return Built(n, layers, body.measured, "basis", "angle", x, body.weights)


def _library(fm_fn: Callable, ans_fn: Callable, num_features: int, reps: int) -> Built:
    fm = fm_fn(num_features)
    ans = ans_fn(num_features, reps=reps)
    x = features(num_features)
    w = [Parameter(f"w_{i:03d}") for i in range(ans.num_parameters)]
    fm = fm.assign_parameters(dict(zip(fm.parameters, x)))
    ans = ans.assign_parameters(dict(zip(ans.parameters, w)))
    layers = [("feature_map", "feature_map", fm), ("ansatz", "ansatz", ans)]
    return Built(num_features, layers, list(range(num_features)), "modulo", "angle", x, w)


def zfm_ra(num_classes: int, num_features: int = 4) -> Built:
    """Qiskit ML family: z_feature_map x real_amplitudes (reps=3), VQC readout x % C."""
    return _library(z_feature_map, real_amplitudes, num_features, 3)


def zzfm_su2(num_classes: int, num_features: int = 4) -> Built:
    """Qiskit ML family: zz_feature_map x efficient_su2 (reps=2), VQC readout x % C."""
    return _library(zz_feature_map, efficient_su2, num_features, 2)


@dataclass(frozen=True)
class Arch:
    name: str
    build: Callable[[int], Built]
    description: str


ARCHS: dict[str, Arch] = {
    a.name: a
    for a in [
        Arch("qcl", qcl, "QCL: amplitude encoding, RX-RZ-RX + CNOT chain (Mitarai et al.)"),
        Arch("ccqc", ccqc, "CCQC: amplitude encoding, rotations + ring CRX (Schuld et al.)"),
        Arch("qcnn", qcnn, "QCNN: amplitude encoding, conv/pool 8->4->2 (Cong et al.)"),
        Arch("hcqc_so4", hcqc_so4, "HCQC with U_SO4 blocks, readout qubit 7 (Hur et al.)"),
        Arch("hcqc_su4", hcqc_su4, "HCQC with U_SU4 blocks (15 parameters), readout qubit 7"),
        Arch("hcqc_ttn", hcqc_ttn, "HCQC with U_TTN blocks (2 parameters), readout qubit 7"),
        Arch("drnn", drnn, "DRNN: data re-uploading of 8x8 images, angle encoding"),
        Arch("hqnn", hqnn, "HQNN: classical linear layer -> RY angles -> QCL layers (Shi et al.)"),
        Arch("zfm_ra", zfm_ra, "Qiskit ML: ZFeatureMap x RealAmplitudes, VQC readout"),
        Arch("zzfm_su2", zzfm_su2, "Qiskit ML: ZZFeatureMap x EfficientSU2, VQC readout"),
    ]
}


def get(name: str) -> Arch:
    if name not in ARCHS:
        raise InputError(f"unknown architecture '{name}' (choose from {', '.join(ARCHS)})")
    return ARCHS[name]
