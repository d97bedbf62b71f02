"""The one operator registry (issue 28): every operator of the three suites, by its family/NAME,
lists sites, applies each to a model that differs from the original and survives the QASM3
round trip, and draws its random values from the root seed alone."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit import qasm3
from qiskit.circuit import Parameter, QuantumCircuit

from qmltest.errors import InputError
from qmltest.model import artifact
from qmltest.mutation.operators import registry
from qmltest.mutation.operators.canonical import canonical
from qmltest.simulate.runner import model_probabilities


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A 3-qubit model with a feature map, two units of rotations + entanglers and two measured qubits."""
    xs = [Parameter(f"x_{i:03d}") for i in range(3)]
    qc = QuantumCircuit(3, 2)
    for q, x in enumerate(xs):
        qc.ry(x, q)
    qc.barrier()
    for rep in range(2):
        for q in range(3):
            qc.ry(0.1 + 0.2 * q + rep, q)
            qc.rz(0.7 - 0.1 * q, q)
        qc.cx(0, 1)
        qc.cx(1, 2)
    qc.barrier()
    qc.measure(0, 0)
    qc.measure(1, 1)
    path = tmp_path_factory.mktemp("m") / "small.qasm"
    path.write_text(qasm3.dumps(qc))
    return artifact.load(path)


def test_the_registry_holds_the_three_suites() -> None:
    names = registry.names()
    assert len(names) == 9 + 7 + 5 and len(set(names)) == len(names)
    assert {"quanforge/PF", "qml/APC", "qml/ILS", "classic/add-gate", "classic/remove-measure"} <= set(names)


@pytest.mark.parametrize("name", registry.names())
def test_every_operator_lists_sites_and_applies_them(small, name, tmp_path) -> None:
    op = registry.make(name, seed=3)
    sites = op.sites(small, directed=False)
    assert sites, f"{name} found no site on a model with weights, entanglers and two measured qubits"
    assert all(s.operator == name.split("/")[1] for s in sites)
    original = canonical(small).text
    picks = sorted({0, len(sites) // 2, len(sites) - 1})
    changed = 0
    for k in picks:
        mutant = op.apply(small, sites[k])
        changed += canonical(mutant).text != original
        again = artifact.load(mutant.save(tmp_path / f"m{k}"))  # written as QASM3, parsed again
        x = np.random.default_rng(k).uniform(-np.pi, np.pi, size=(4, 3))
        assert np.allclose(model_probabilities(again, x), model_probabilities(mutant, x), atol=1e-12)
    assert changed >= len(picks) - 1  # a site may be equivalent (e.g. a gate swapped with a twin)


@pytest.mark.parametrize("name", ["quanforge/RGA", "quanforge/PF", "quanforge/GR", "qml/APC", "qml/ALA"])
def test_random_draws_come_from_the_root_seed(small, name) -> None:
    """Same seed, same mutants (in any order of generation); another seed, other draws."""

    def forms(seed: int, reverse: bool = False) -> list[str]:
        op = registry.make(name, seed=seed)
        sites = op.sites(small, directed=False)
        made = {s: canonical(op.apply(small, s)).text for s in (reversed(sites) if reverse else sites)}
        return [made[s] for s in op.sites(small, directed=False)]

    assert forms(5) == forms(5, reverse=True)
    assert forms(5) != forms(6)


def test_names_are_checked_against_the_suite() -> None:
    assert [op.name for op in registry.operators("quanforge", ["quanforge/PS", "GR"])] == ["PS", "GR"]
    with pytest.raises(InputError, match="not in the qml suite"):
        registry.operators("qml", ["quanforge/PF"])
    with pytest.raises(InputError, match="unknown operator 'qml/XYZ'"):
        registry.make("qml/XYZ")


def test_readme_adding_an_operator_block_runs(small) -> None:
    """The docs' (how-to/extend) 'Adding an operator' block, run as written: it registers, lists and mutates."""
    import re
    from pathlib import Path

    from qmltest.mutation.operators.classic import CLASSIC

    readme = (Path(__file__).resolve().parents[1] / "docs" / "howto" / "extend.md").read_text()
    section = readme.split("### Adding an operator", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    try:
        exec(compile(code, "docs/howto/extend.md", "exec"), {})
        assert "classic/reverse-2q" in registry.names()
        op = registry.operators("classic", ["reverse-2q"], seed=0)[0]
        sites = op.sites(small, directed=True)
        assert len(sites) == 4  # the four cx gates
        mutant = op.apply(small, sites[0])
        assert [g.qubits for g in mutant.ir.gates if g.name == "cx"][0] == (1, 0)
        x = np.random.default_rng(0).uniform(-np.pi, np.pi, size=(8, 3))
        assert not np.allclose(model_probabilities(mutant, x), model_probabilities(small, x))
    finally:
        CLASSIC.pop("reverse-2q", None)
