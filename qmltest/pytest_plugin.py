"""The pytest plugin (entry point `pytest11`): a model and a suite as fixtures, from the command
line (`--qmltest-model`, `--qmltest-suite`) or the ini file (`qmltest_model`, `qmltest_suite`),
and `qmltest.testing`'s assertions re-exported as fixtures' companions.

    def test_suite_is_adequate(qmltest_model, qmltest_suite):
        assert_mutation_score(qmltest_model, qmltest_suite, at_least=0.8, suite="qml", sample=60)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qmltest.testing import assert_coverage, assert_mutation_score

__all__ = ["assert_coverage", "assert_mutation_score"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("qmltest")
    group.addoption("--qmltest-model", default=None, help="model folder for the qmltest_model fixture")
    group.addoption("--qmltest-suite", default=None, help="test suite (name:split or file) for qmltest_suite")
    parser.addini("qmltest_model", "model folder for the qmltest_model fixture (relative to the rootdir)")
    parser.addini("qmltest_suite", "test suite for the qmltest_suite fixture: name:split or a file")


def _setting(config: pytest.Config, name: str) -> str | None:
    return config.getoption(f"--qmltest-{name}") or config.getini(f"qmltest_{name}") or None


@pytest.fixture(scope="session")
def qmltest_model(pytestconfig: pytest.Config):
    """The model named by --qmltest-model or the ini's qmltest_model, loaded once per session."""
    from qmltest import api

    path = _setting(pytestconfig, "model")
    if path is None:
        pytest.fail("qmltest_model: give --qmltest-model PATH or qmltest_model = PATH in the ini file", pytrace=False)
    full = Path(path) if Path(path).is_absolute() else Path(pytestconfig.rootpath) / path
    return api.load(full)


@pytest.fixture(scope="session")
def qmltest_suite(pytestconfig: pytest.Config, qmltest_model) -> str:
    """The test suite named by --qmltest-suite or the ini (default: the model's own data, test split)."""
    from qmltest import api

    spec = _setting(pytestconfig, "suite")
    if spec is not None and Path(pytestconfig.rootpath, spec).exists():
        return str(Path(pytestconfig.rootpath, spec))
    return api.model_data(qmltest_model, spec, "test", "--qmltest-suite")
