"""Issue 60: valid OpenQASM 3 that qmltest does not take says "not supported: WHAT" with its line;
only text that does not parse is "malformed" (with its line and column)."""

from __future__ import annotations

import pytest

from qmltest.errors import InputError
from qmltest.model import qasm

HEAD = 'OPENQASM 3.0;\ninclude "stdgates.inc";\n'


@pytest.mark.parametrize(
    "body, says",
    [
        ("const float[64] w = 0.5;\nqubit[1] q;\nrx(w) q[0];\n", "m.qasm:3: not supported: const declarations"),
        ("input array[float[64], 2] x;\nqubit[1] q;\nrx(x[0]) q[0];\n", "m.qasm:3: not supported: only 'float'"),
    ],
)
def test_valid_but_unsupported_qasm_is_not_called_malformed(body, says) -> None:
    with pytest.raises(InputError) as err:
        qasm.loads(HEAD + body, "m.qasm")
    assert str(err.value).startswith(says) and "malformed" not in str(err.value)
    assert "\n" not in str(err.value)


def test_text_that_does_not_parse_names_its_line_and_column() -> None:
    with pytest.raises(InputError, match=r"^m\.qasm:4:\d+: "):
        qasm.loads(HEAD + "qubit[1] q;\nrx(0.1 q[0];\n", "m.qasm")
