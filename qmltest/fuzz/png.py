"""A minimal grayscale PNG writer (zlib only), for failure images beside their seeds."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode(image: np.ndarray) -> bytes:
    """8-bit grayscale PNG bytes of a 2-D array already scaled to 0..255."""
    img = np.clip(np.rint(image), 0, 255).astype(np.uint8)
    h, w = img.shape
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))
    header = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    body = _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def side_by_side(seed: np.ndarray, mutant: np.ndarray, low: float, high: float, scale: int = 4) -> np.ndarray:
    """Seed | gap | mutant, rescaled to 0..255 and enlarged `scale` times."""
    norm = lambda a: (a - low) / max(high - low, 1e-12) * 255.0  # noqa: E731
    gap = np.full((seed.shape[0], 2), 128.0)
    row = np.concatenate([norm(seed), gap, norm(mutant)], axis=1)
    return np.kron(row, np.ones((scale, scale)))


def write(path: Path, image: np.ndarray) -> None:
    path.write_bytes(encode(image))
