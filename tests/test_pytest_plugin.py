"""The pytest plugin (issue 46) as a user's test project uses it: fixtures from the ini file, and
assert_mutation_score passing at a bar the suite reaches and failing, with the surviving mutants
listed, at one it cannot."""

from __future__ import annotations

from pathlib import Path

pytest_plugins = ["pytester"]

QCL = Path(__file__).resolve().parents[1] / "data" / "models" / "qcl-mnist01"


def test_plugin_fixtures_and_assertion_in_a_test_project(pytester) -> None:
    pytester.makeini(f"[pytest]\nqmltest_model = {QCL}\nqmltest_suite = mnist:test\n")
    pytester.makepyfile(
        test_model="""
        import pytest
        from qmltest.testing import assert_mutation_score

        OPTS = dict(suite="qml", operators="APC", per_class=10)

        def test_fixtures(qmltest_model, qmltest_suite):
            assert qmltest_model.num_classes == 2 and qmltest_suite == "mnist:test"

        def test_reaches_a_low_bar(qmltest_model, qmltest_suite):
            r = assert_mutation_score(qmltest_model, qmltest_suite, at_least=0.05, **OPTS)
            assert 0.05 <= r.score <= 1

        def test_misses_an_impossible_bar(qmltest_model, qmltest_suite):
            with pytest.raises(AssertionError) as info:
                assert_mutation_score(qmltest_model, qmltest_suite, at_least=1.01, **OPTS)
            text = str(info.value)
            assert "mutation score" in text and "< 1.010" in text and "surviving mutants" in text
        """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_missing_model_setting_is_one_clear_failure(pytester) -> None:
    pytester.makepyfile(test_x="def test_a(qmltest_model):\n    pass\n")
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*give --qmltest-model PATH or qmltest_model = PATH*"])
