"""Evaluate Qiskit parameter expressions on arrays (one value per input) in one pass.

Feature-map angles such as ``2*(pi - x_0)*(pi - x_1)`` must be computed for a whole batch; binding
one input at a time costs tens of microseconds per gate. We replay the expression's own operation
tape (the one QPY serializes) with numpy ufuncs.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from qiskit.circuit import Parameter, ParameterExpression

from qmltest.errors import InputError

_BINARY = {
    "ADD": np.add,
    "SUB": np.subtract,
    "MUL": np.multiply,
    "DIV": np.divide,
    "POW": np.power,
    "RSUB": lambda a, b: np.subtract(b, a),
    "RDIV": lambda a, b: np.divide(b, a),
    "RPOW": lambda a, b: np.power(b, a),
}
_UNARY = {
    "SIN": np.sin,
    "COS": np.cos,
    "TAN": np.tan,
    "ASIN": np.arcsin,
    "ACOS": np.arccos,
    "ATAN": np.arctan,
    "EXP": np.exp,
    "LOG": np.log,
    "SIGN": np.sign,
    "ABS": np.abs,
    "CONJ": np.conj,
}


def _leaf(v: object, values: Mapping[Parameter, np.ndarray]) -> np.ndarray | float | complex:
    if isinstance(v, Parameter):
        return values[v]
    if isinstance(v, ParameterExpression):
        return evaluate(v, values)
    return v  # type: ignore[return-value]


def evaluate(expr: object, values: Mapping[Parameter, np.ndarray]) -> np.ndarray:
    """Value of `expr` (number, Parameter or expression) for every entry of the bound arrays."""
    if isinstance(expr, Parameter):
        return np.asarray(values[expr], dtype=float)
    if not isinstance(expr, ParameterExpression):
        return np.asarray(float(expr))
    if not expr.parameters:
        return np.asarray(float(expr.numeric()))
    stack: list = []
    for step in expr._qpy_replay:
        name = str(step.op).rsplit(".", 1)[-1]
        if name in _BINARY:
            rhs = stack.pop() if step.rhs is None else _leaf(step.rhs, values)
            lhs = stack.pop() if step.lhs is None else _leaf(step.lhs, values)
            stack.append(_BINARY[name](lhs, rhs))
        elif name in _UNARY:
            arg = stack.pop() if step.lhs is None else _leaf(step.lhs, values)
            stack.append(_UNARY[name](arg))
        else:
            raise InputError(f"unsupported operation {name} in parameter expression {expr}")
    out = np.asarray(stack[-1])
    return out.real.astype(float) if np.iscomplexobj(out) else out.astype(float)
