"""Train a VQC on iris with qiskit-machine-learning and save it the qmltest way: QPY + weights.

    python docs/examples/train_vqc_iris.py OUT [--maxiter N]

Writes OUT/vqc.qpy (the circuit, features `x[i]`, weights `θ[j]` unbound) and OUT/weights.npy
(the trained weights in the circuit's parameter order). The features are iris's training split
(qmltest's fixed split) scaled to [0, 1], so `qmltest import ... --preprocess scale=0:1 --data
iris:train` records the same scaler. Never pickle a Qiskit ML model to share it (its `save()` uses
dill, which runs code on load): QPY and a weight vector carry everything.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from qiskit import qpy
from qiskit.circuit.library import real_amplitudes, zz_feature_map
from qiskit_machine_learning.algorithms import VQC
from qiskit_machine_learning.optimizers import COBYLA
from qiskit_machine_learning.primitives import QMLSampler
from sklearn.preprocessing import MinMaxScaler

from qmltest.data import datasets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--maxiter", type=int, default=60)
    args = parser.parse_args()
    x, y = datasets.select("iris", "train")
    scaler = MinMaxScaler().fit(x)
    rng = np.random.default_rng(0)
    vqc = VQC(
        feature_map=zz_feature_map(4, reps=1),
        ansatz=real_amplitudes(4, reps=2),
        optimizer=COBYLA(maxiter=args.maxiter),
        sampler=QMLSampler(),  # exact probabilities
        output_shape=3,  # without it qiskit-ml 0.9 keeps the x % 2 readout of two classes
        initial_point=rng.uniform(-np.pi, np.pi, 12),
    )
    vqc.fit(scaler.transform(x), y)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "vqc.qpy", "wb") as fh:
        qpy.dump(vqc.circuit, fh)
    np.save(args.out / "weights.npy", vqc.weights)
    print(f"train accuracy {vqc.score(scaler.transform(x), y):.3f}; wrote {args.out}/vqc.qpy and weights.npy")


if __name__ == "__main__":
    main()
