"""The seed recipe: a stable seed sequence from the parts that name a random choice (a run's root
seed, a mutant id, a suite's content), with no Python hash randomization, so the same seed gives
byte-identical reports on any machine."""

from __future__ import annotations

import hashlib


def seed_of(*parts: object) -> list[int]:
    """A stable seed sequence from strings/ints (no Python hash randomization)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
