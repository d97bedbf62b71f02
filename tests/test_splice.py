"""Spliced mutant texts are Qiskit's exported texts, byte for byte (`qmltest.model.splice`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from qmltest.data.labelled import Data
from qmltest.model import artifact, qasm
from qmltest.model.ir import to_circuit
from qmltest.model.splice import Splicer
from qmltest.mutation import pipeline
from qmltest.mutation.operators import quanforge as qf_ops
from qmltest.mutation.operators import registry, sites
from qmltest.mutation.operators.scope import Scope

ZOO = "data/models"


@pytest.mark.parametrize(
    ("name", "suite", "step"),
    [
        ("qcl-mnist01", "qml", 2),  # amplitude encoded: no inputs
        ("zzfm-su2-iris", "qml", 1),  # angle encoded: input declarations in the header
        ("zzfm-su2-iris", "classic", 10),  # added, removed and replaced gates, measurements
        ("qcnn-mnist_0vr", "qml", 25),
    ],
)
def test_spliced_text_is_qiskits_export(name: str, suite: str, step: int) -> None:
    model = artifact.load(f"{ZOO}/{name}")
    splicer = Splicer(model.ir)
    assert splicer.ok
    made = [
        g
        for g in sites.iter_generate(model, sites.plan(model, registry.operators(suite, None), "directed"), {})
        if g.model is not None
    ]
    spliced = 0
    for g in made[::step]:
        text = splicer.text(g.model.ir)
        if text is not None:
            assert text == qasm.dumps(to_circuit(g.model.ir)), g.site.describe()
            spliced += 1
    assert spliced >= 0.9 * len(made[::step])  # the fast path is the one taken


def test_splicer_declines_what_it_cannot_match() -> None:
    model = artifact.load(f"{ZOO}/zzfm-su2-iris")
    splicer = Splicer(model.ir)
    remove = registry.operators("classic", ["remove-measure"])
    fewer = next(
        g.model for g in sites.iter_generate(model, sites.plan(model, remove, "directed"), {}) if g.model is not None
    )
    text = splicer.text(fewer.ir)  # a smaller measurement register: the header's bit line changes
    assert text is None or text == qasm.dumps(to_circuit(fewer.ir))
    first = model.ir.layers[0]  # the feature map: deleting it leaves the inputs unread
    gone = replace(model.ir, layers=model.ir.layers[1:])
    assert first.kind == "feature_map" and splicer.text(gone) is None


def test_run_folder_mutants_load_back(tmp_path) -> None:
    model = artifact.load(f"{ZOO}/zzfm-su2-iris")
    raw = np.full((4, len(model.manifest["feature_names"])), 0.3)
    suite = Data("flat", model.encode(raw), np.zeros(4, dtype=int), raw)
    opts = pipeline.Options(suite="qml", operators=("APGC", "ALD"), shots=100, repeats=3, seed=0)
    pipeline.run(model, [suite], opts, out=tmp_path / "run")
    folders = sorted((tmp_path / "run" / "mutants").iterdir())
    assert folders
    for folder in folders[:: max(1, len(folders) // 6)]:
        mutant = artifact.load(folder)  # the manifest's hash matches the text; the schema holds
        assert mutant.qasm_text == qasm.dumps(to_circuit(mutant.ir))


@pytest.mark.parametrize("name", ["qcl-mnist01", "zzfm-su2-iris"])
def test_spliced_text_of_quanforge_mutants(name: str) -> None:
    """The nine QuanForge operators at several percentages (RGA adds gates outside `PLAIN` too)."""
    model = artifact.load(f"{ZOO}/{name}")
    splicer = Splicer(model.ir)
    rng = np.random.default_rng(7)
    spliced = tried = 0
    for op_name in list(qf_ops.REGISTRY):
        for pct in (0.05, 0.3):
            made = qf_ops.get(op_name).mutate(model.ir, Scope(), pct, rng)
            if made is None:
                continue
            tried += 1
            text = splicer.text(made[0])
            if text is not None:
                assert text == qasm.dumps(to_circuit(made[0])), (op_name, pct)
                spliced += 1
    assert tried >= 14 and spliced >= tried // 2
