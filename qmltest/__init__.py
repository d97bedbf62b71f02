"""qmltest: test quantum neural networks serialized as OpenQASM 3 (coverage, mutation, fuzzing).

The Python API is `qmltest.api` (`from qmltest import api`; `api.load`, `evaluate`, `profile`,
`cover`, `mutate`, `fuzz`, `diff`): the top level keeps the subpackages' names (`qmltest.fuzz`,
`qmltest.diff`, `qmltest.evaluate` are modules), so the calls live one level down.
"""

__version__ = "0.1.0"
