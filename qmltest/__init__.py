"""qmltest: test quantum neural networks serialized as OpenQASM 3 (coverage, mutation, fuzzing)."""

__version__ = "0.1.0"
