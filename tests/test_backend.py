"""One simulator seam: every command that simulates takes --backend; auto picks by the measured
crossover; the choice reaches the mutation evaluator and its report; numpy and Aer agree to 1e-9."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.errors import InputError
from qmltest.model import artifact
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.simulate import program
from qmltest.simulate.backends import REGISTRY
from qmltest.simulate.compiled import Compiled

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def test_auto_follows_the_cost_model_and_the_choice_is_explicit() -> None:
    # one readout qubit: numpy up to 11 qubits (measured: 118-120 vs 140-143 us at 11, 193-235 vs 126-186 at 12)
    assert REGISTRY.resolve("auto", 11, 1, 107).name == "numpy" and REGISTRY.resolve("auto", 12, 1, 117).name == "aer"
    # every qubit read out: Aer's cost of returning 2^n probabilities keeps numpy ahead (16: 6.5 vs 9.9 ms)
    assert REGISTRY.resolve("auto", 16, 16, 157).name == "numpy" and REGISTRY.resolve("auto", 16, 8, 157).name == "aer"
    numpy_, aer_ = REGISTRY.get("numpy"), REGISTRY.get("aer")
    for n, m, ops in [(8, 1, 80), (12, 12, 120), (18, 1, 180), (20, 20, 200)]:
        pick = REGISTRY.resolve("auto", n, m, ops)
        other = aer_ if pick is numpy_ else numpy_
        assert pick.estimate_us(n, m, ops) <= other.estimate_us(n, m, ops)
    assert REGISTRY.resolve("aer", 4) is aer_ and REGISTRY.resolve(None, 20) is aer_
    assert REGISTRY.resolve(numpy_, 20) is numpy_  # a Backend passes through
    with pytest.raises(InputError, match="unknown backend 'gpu0' \\(choose from auto, numpy, aer, gpu\\)"):
        REGISTRY.resolve("gpu0", 4)
    with pytest.raises(InputError, match="unknown backend"):
        REGISTRY.resolve("device", 4)  # the fake-device entry is reached through --target, not by name
    assert "QMLTEST_BACKEND" not in "".join(p.read_text() for p in (ROOT / "qmltest").rglob("*.py"))


def test_only_the_registry_compares_backend_names() -> None:
    """Outside simulate/backend.py and the entries' own files, no code compares a backend name."""
    import re

    pattern = re.compile(r"""(backend|name)\s*(==|!=|in)\s*\(?["'](numpy|aer|gpu|device)["']""")
    found = []
    for path in (ROOT / "qmltest").rglob("*.py"):
        if path.parent.name == "backends" or path.name == "backend.py":
            continue
        found += [f"{path.name}:{i}" for i, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []


@pytest.mark.parametrize("command", ["evaluate", "profile", "cover", "fuzz", "mutate", "suite build", "suite attack"])
def test_every_simulating_command_takes_backend(command) -> None:
    res = runner.invoke(app, [*command.split(), "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "--backend" in res.output


def test_mutation_records_and_uses_the_backend(iris_model, tmp_path) -> None:
    """The evaluator runs on the chosen backend (Aer: no prefix reuse) and the report names it; the
    probabilities equal numpy's to 1e-9, so exact runs give the same verdicts."""
    model = artifact.load(iris_model)
    x = np.random.default_rng(0).uniform(0, 1, (10, 4))
    from qmltest.data.labelled import Data

    data = Data("d", model.encode(x), np.zeros(10, int), x)
    a = Evaluator(model, 5, None, 0, backend="aer")
    b = Evaluator(model, 5, None, 0, backend="numpy")
    assert a.backend.name == "aer" and b.backend.name == "numpy"
    assert b.backend.capabilities.prefix_reuse and not a.backend.capabilities.prefix_reuse
    assert np.max(np.abs(a.original_probs(data) - b.original_probs(data))) < 1e-9
    reports = {}
    for name in ("numpy", "aer"):
        args = ["mutate", str(iris_model), "--suite", "qml", "--operators", "ALD", "--test", "iris:test", "--exact"]
        args += ["--null-copies", "5", "--backend", name, "--json", str(tmp_path / f"{name}.json"), "--quiet"]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        reports[name] = json.loads((tmp_path / f"{name}.json").read_text())
        assert reports[name]["meta"]["backend"] == name
    assert [m["status"] for m in reports["numpy"]["mutants"]] == [m["status"] for m in reports["aer"]["mutants"]]


ROOT_MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
SHIPPED = sorted(p.name for p in ROOT_MODELS.iterdir())


def _random_inputs(model: artifact.Model, k: int, seed: int) -> np.ndarray:
    """k encoded inputs: normalized complex states (amplitude encoding) or angles in [-pi, pi]."""
    rng = np.random.default_rng(seed)
    if model.amplitude:
        z = rng.normal(size=(k, 2**model.ir.num_qubits)) + 1j * rng.normal(size=(k, 2**model.ir.num_qubits))
        return z / np.linalg.norm(z, axis=1, keepdims=True)
    return rng.uniform(-np.pi, np.pi, size=(k, len(program.of_model(model).inputs)))


@pytest.mark.parametrize("name", SHIPPED)
def test_array_kernel_on_numpy_equals_aer_on_every_shipped_model(name) -> None:
    """The gpu backend's kernel, run on numpy (the same code CuPy runs), against Aer: 1e-9."""
    from qmltest.simulate import arraykernel, engine

    model = artifact.load(ROOT_MODELS / name)
    job = program.of_model(model)
    encoded = _random_inputs(model, 6, 1)
    ours = arraykernel.probabilities(np, job.groups[0] if job.groups else job, encoded, "numpy")
    if job.groups:
        job = job.groups[0]
    ref = engine.probabilities(job, encoded, backend="aer")
    assert ours.shape == ref.shape
    assert np.max(np.abs(ours - ref)) < 1e-9
    # marginals over a reversed, non-contiguous subset of qubits, against a sum over basis states
    psi0, values = program.start_rows(job, encoded)
    psi = arraykernel.run(np, job.ops, psi0, values, job.num_qubits)
    measured = list(range(job.num_qubits))[::-2]
    full = np.abs(np.asarray(psi)) ** 2
    expect = np.zeros((len(encoded), 2 ** len(measured)))
    for s in range(full.shape[1]):
        expect[:, sum(((s >> q) & 1) << b for b, q in enumerate(measured))] += full[:, s]
    assert np.allclose(arraykernel.marginal(np, psi, measured, job.num_qubits), expect, atol=1e-15)


def test_gpu_backend_without_cupy_is_one_line() -> None:
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed: the GPU path is tested in test_gpu_equals_aer")
    except ImportError:
        pass
    from qmltest.simulate import engine

    model = artifact.load(ROOT_MODELS / "qcl-mnist01")
    with pytest.raises(InputError, match=r"--backend gpu needs CuPy"):
        engine.probabilities(program.of_model(model), np.zeros((2, len(program.of_model(model).inputs))), backend="gpu")


def test_gpu_equals_aer() -> None:
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:
        pytest.skip("CuPy without a CUDA device")
    from qmltest.simulate import engine

    for name in ("qcl-mnist01", "zzfm-su2-wine", "qcnn-mnist_0vr"):
        model = artifact.load(ROOT_MODELS / name)
        x = np.random.default_rng(2).uniform(-np.pi, np.pi, size=(50, len(program.of_model(model).inputs)))
        gpu = engine.probabilities(program.of_model(model), x, backend="gpu")
        assert np.max(np.abs(gpu - engine.probabilities(program.of_model(model), x, backend="aer"))) < 1e-9


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "{m}", "--exact", "--json", "-"],
        ["diversity", "{m}", "--json", "-"],
        ["mutate", "{m}", "--suite", "qml", "--operators", "ALD", "--exact", "--null-copies", "3", "--json", "-"],
    ],
)
def test_data_defaults_to_the_model_s_own_data_set(args) -> None:
    """A model trained on iris is tested on iris:test without naming it (not on MNIST)."""
    res = runner.invoke(app, [a.format(m=ROOT_MODELS / "zfm-ra-iris") for a in args])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    text = json.dumps(doc)
    assert "iris" in text and "mnist" not in text


def _on_numpy(monkeypatch) -> None:
    """Route the gpu backend's array namespace to numpy: the dispatch, batching and kernels CuPy
    would run, checked on any machine."""
    from qmltest.simulate import arraykernel

    monkeypatch.setattr(arraykernel, "namespace", lambda: np)


def test_mutants_x_inputs_kernel_equals_one_by_one_and_aer() -> None:
    """`engine.probabilities_many`: every directed QML mutant of QCL in signature groups, one batch
    of mutants x inputs per group; equal to each mutant's own numpy run and to Aer."""
    from qmltest.data import datasets
    from qmltest.mutation.operators import registry, sites
    from qmltest.simulate import arraykernel, engine

    model = artifact.load(ROOT_MODELS / "qcl-mnist01")
    x, _ = datasets.select("mnist:test", "test", model.classes, 6, 0)
    enc = model.encode(x)
    made, _ = sites.generate(model, registry.operators("qml", None), "directed")
    jobs = [program.of_model(model)] + [
        program.of_model(g.model)
        for g in made
        if g.model is not None and g.model.manifest["preprocessing"] == model.manifest["preprocessing"]
    ]
    groups = {arraykernel.signature(j.ops) for j in jobs}
    assert len(jobs) > 100 and 1 < len(groups) < len(jobs)  # shared structures, and more than one
    many = engine.probabilities_many(jobs, enc, "numpy")
    assert len(many) == len(jobs)
    worst = max(float(np.max(np.abs(p - engine.probabilities(j, enc, "numpy")))) for p, j in zip(many, jobs))
    assert worst < 1e-12
    for i in range(0, len(jobs), 37):
        assert np.max(np.abs(many[i] - engine.probabilities(jobs[i], enc, "aer"))) < 1e-9


def test_gpu_dispatch_on_numpy_equals_aer_noise_free_and_under_trivial_noise(monkeypatch) -> None:
    from qmltest.noise.config import load
    from qmltest.simulate import engine

    _on_numpy(monkeypatch)
    root = ROOT_MODELS.parents[1]
    for name in ("qcl-mnist01", "zzfm-su2-wine"):
        model = artifact.load(ROOT_MODELS / name)
        x = _random_inputs(model, 7, 3)
        ref = engine.probabilities(program.of_model(model), x, backend="aer")
        assert np.max(np.abs(engine.probabilities(program.of_model(model), x, backend="gpu") - ref)) < 1e-9
        zero = load(root / "configs/noise/zero.toml")  # all channels at zero: the noise-free path
        assert np.max(np.abs(engine.probabilities(program.of_model(model), x, backend="gpu", noise=zero) - ref)) < 1e-9


NOISE = sorted(p.stem for p in (ROOT_MODELS.parents[1] / "configs/noise").glob("*.toml") if p.stem != "zero")


@pytest.mark.parametrize("config", NOISE)
@pytest.mark.parametrize("name", ["qcnn-mnist01", "zfm-ra-iris", "drnn-mnist01", "qcl-mnist01"])
def test_array_density_kernel_equals_aer_under_every_noise_config(monkeypatch, name: str, config: str) -> None:
    """The gpu backend's density-matrix path (`arraykernel.run_density`, here on numpy) against Aer's
    density matrix: 1e-9, rows summing to 1; DRNN too, which the numpy engine leaves to Aer, and the
    amplitude-encoded QCL (no prefix: its readout operators are read against each input state)."""
    from qmltest.noise.config import load
    from qmltest.simulate import engine

    _on_numpy(monkeypatch)
    model = artifact.load(ROOT_MODELS / name)
    cfg = load(ROOT_MODELS.parents[1] / "configs/noise" / f"{config}.toml")
    x = _random_inputs(model, 2, 4)
    ours = engine.probabilities(program.of_model(model), x, "gpu", cfg)
    ref = engine.probabilities(program.of_model(model), x, "aer", cfg)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.sum(axis=1), 1.0, atol=1e-9)


def test_gpu_refuses_noise_it_cannot_run_in_one_line(monkeypatch) -> None:
    from qmltest.noise.config import from_dict
    from qmltest.simulate import engine

    _on_numpy(monkeypatch)
    model = artifact.load(ROOT_MODELS / "zfm-ra-iris")
    fake = from_dict({"backend": {"fake": "FakeManilaV2"}})
    with pytest.raises(InputError, match=r"gpu backend runs a config's noise channels .* fake device"):
        engine.probabilities(program.of_model(model), np.zeros((1, len(program.of_model(model).inputs))), "gpu", fake)


def test_mutate_on_gpu_batches_mutants_x_inputs_with_numpy_s_verdicts(iris_model, tmp_path, monkeypatch) -> None:
    """`mutate --backend gpu` (its kernel on numpy here): each task's mutants are simulated as one
    mutants x inputs batch, and the report equals the numpy backend's in every mutant's status,
    verdicts and mean accuracy, with shots (statistical and vote evidence drawn from them; p-values
    far below alpha differ in their last digits, as the probabilities do at 1e-15)."""
    from qmltest.simulate import engine

    _on_numpy(monkeypatch)
    batches: list[int] = []
    real = engine.probabilities_many

    def spy(jobs, encoded, backend="gpu"):
        batches.append(len(jobs))
        return real(jobs, encoded, backend)

    monkeypatch.setattr(engine, "probabilities_many", spy)
    reports = {}
    for name in ("numpy", "gpu"):
        args = ["mutate", str(iris_model), "--suite", "qml", "--operators", "ALD,LS,ILS,DFC", "--test", "iris:test"]
        args += ["--null-copies", "10", "--backend", name, "--json", str(tmp_path / f"{name}.json"), "--quiet"]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        reports[name] = json.loads((tmp_path / f"{name}.json").read_text())
        assert reports[name]["meta"]["backend"] == name
    assert batches and max(batches) > 1  # mutants went out together
    rows = {k: [(m["id"], m["status"], m["verdicts"]) for m in r["mutants"]] for k, r in reports.items()}
    assert len(rows["gpu"]) > 5 and rows["gpu"] == rows["numpy"]
    for a, b in zip(reports["gpu"]["mutants"], reports["numpy"]["mutants"]):  # equal to rounding, not bits
        for suite, ev in (a.get("evidence") or {}).items():
            if "mean_accuracy" in ev:
                assert abs(ev["mean_accuracy"] - b["evidence"][suite]["mean_accuracy"]) < 1e-6
    assert reports["gpu"]["mutation_score"] == reports["numpy"]["mutation_score"]


def test_prefetch_keeps_one_batch_within_its_budget(monkeypatch) -> None:
    """What a batch prefetched and nobody read is dropped by the next batch; past PREFETCH_BYTES the
    rest run one by one (nothing held)."""
    from qmltest.data import datasets
    from qmltest.data.labelled import Data
    from qmltest.mutation.operators import registry, sites

    _on_numpy(monkeypatch)
    model = artifact.load(ROOT_MODELS / "qcl-mnist01")
    x, y = datasets.select("mnist:test", "test", model.classes, 5, 0)
    data = Data("d", model.encode(x), np.zeros(len(x), int), x)
    made, _ = sites.generate(model, registry.operators("qml", ["ALD", "LS"]), "directed")
    mutants = [g.model for g in made if g.model is not None][:6]
    ev = Evaluator(model, 5, None, 0, backend="gpu")
    assert ev.prefetch([(mutants[:3], data)]) == 3
    assert ev.prefetch([(mutants[3:], data)]) == 3 and len(ev.sim._batched) == 3  # the first batch's are gone
    p = ev.probs(mutants[4], data)
    assert (
        len(ev.sim._batched) == 2
        and np.max(np.abs(p - Evaluator(model, 5, None, 0, backend="numpy").probs(mutants[4], data))) < 1e-12
    )
    one = 8 * len(x) * 2 ** len(program.of_model(model).measured)  # one mutant's probabilities
    monkeypatch.setattr(Compiled, "PREFETCH_BYTES", one)
    assert ev.prefetch([(mutants, data)]) == 0 and not ev.sim._batched


def test_readme_adding_a_backend_block_runs(iris_model, tmp_path) -> None:
    """The docs' (how-to/extend) 'Adding a backend' block, run as written: one class and one registry line, then
    `--backend qiskit-sv` on evaluate and mutate gives numpy's numbers and verdicts."""
    import re

    readme = (ROOT / "docs" / "howto" / "extend.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme.split("### Adding a backend", 1)[1], re.DOTALL).group(1)
    try:
        exec(compile(code, "docs/howto/extend.md", "exec"), {})
        assert "qiskit-sv" in REGISTRY.names() and "qiskit-sv" in REGISTRY.help()
        model = artifact.load(iris_model)
        x = _random_inputs(model, 5, 3)
        from qmltest.simulate import engine

        job = program.of_model(model)
        assert np.max(np.abs(engine.probabilities(job, x, "qiskit-sv") - engine.probabilities(job, x, "aer"))) < 1e-9
        out: dict[str, dict] = {}
        for name in ("numpy", "qiskit-sv"):
            ev = runner.invoke(
                app, ["evaluate", str(iris_model), "--data", "iris", "--exact", "--backend", name, "--json", "-"]
            )
            assert ev.exit_code == 0, ev.output
            args = ["mutate", str(iris_model), "--suite", "qml", "--operators", "ALD,LS", "--test", "iris:test"]
            args += ["--exact", "--null-copies", "3", "--backend", name, "--json", str(tmp_path / f"{name}.json"), "-q"]
            res = runner.invoke(app, args)
            assert res.exit_code == 0, res.output
            out[name] = {
                "evaluate": json.loads(ev.output),
                "mutate": json.loads((tmp_path / f"{name}.json").read_text()),
            }
            assert out[name]["evaluate"]["backend"] == name and out[name]["mutate"]["meta"]["backend"] == name
        assert out["qiskit-sv"]["evaluate"]["accuracy"] == out["numpy"]["evaluate"]["accuracy"]
        verdicts = {k: [(m["id"], m["status"]) for m in v["mutate"]["mutants"]] for k, v in out.items()}
        assert len(verdicts["numpy"]) > 3 and verdicts["qiskit-sv"] == verdicts["numpy"]
    finally:
        REGISTRY.unregister("qiskit-sv")
    bad = runner.invoke(app, ["evaluate", str(iris_model), "--backend", "qiskit-sv"])
    assert bad.exit_code == 2 and "unknown backend 'qiskit-sv'" in bad.output
