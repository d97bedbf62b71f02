"""Input mutators with DeepHunter's validity constraint (Xie et al., ISSTA 2019).

Images: pixel-value transforms (noise, brightness, contrast) and affine transforms (translation,
scale, shear, rotation; at most one affine step per lineage, after which the affined image is the
new reference). A pixel mutant s' of reference s0 is valid when it changes few pixels
(L0 < alpha * size, any change) or changes many pixels only a little (L_inf <= beta * range).
Tabular / angle-encoded data: bounded feature perturbations |x' - x0|_inf <= eps * feature range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from qmltest.errors import InputError

PIXEL = ("noise", "brightness", "contrast")
AFFINE = ("translation", "scale", "shear", "rotation")


@dataclass(frozen=True)
class Seed:
    """A queue entry: the input, the reference it is judged against, its origin and label."""

    x: np.ndarray
    reference: np.ndarray  # the lineage's reference (original seed, or its affine transform)
    origin: int  # index of the initial seed
    label: int  # class index of the initial seed
    affined: bool = False
    depth: int = 0


@dataclass(frozen=True)
class ImageMutator:
    shape: tuple[int, int]
    low: float = 0.0
    high: float = 255.0
    alpha: float = 0.02  # DeepHunter's L0 fraction
    beta: float = 0.2  # DeepHunter's L_inf fraction of the value range
    tries: int = 20

    def valid(self, reference: np.ndarray, candidate: np.ndarray) -> bool:
        diff = np.abs(candidate - reference)
        l0 = int(np.count_nonzero(diff > 1e-9))
        if l0 < self.alpha * diff.size:
            return bool(diff.max(initial=0.0) <= (self.high - self.low))
        return bool(diff.max(initial=0.0) <= self.beta * (self.high - self.low))

    def _pixel(self, x: np.ndarray, kind: str, rng: np.random.Generator) -> np.ndarray:
        span = self.high - self.low
        if kind == "noise":
            out = x + rng.normal(0.0, 0.05 * span, x.shape)
        elif kind == "brightness":
            out = x + rng.uniform(-0.15, 0.15) * span
        else:
            out = (x - x.mean()) * rng.uniform(0.8, 1.2) + x.mean()
        return np.clip(out, self.low, self.high)

    def _affine(self, x: np.ndarray, kind: str, rng: np.random.Generator) -> np.ndarray:
        img = x.reshape(self.shape)
        h, w = self.shape
        centre = np.array([h / 2 - 0.5, w / 2 - 0.5])
        if kind == "translation":
            out = ndimage.shift(img, rng.integers(-2, 3, size=2), order=1, mode="constant", cval=self.low)
        else:
            if kind == "scale":
                s = rng.uniform(0.85, 1.15)
                m = np.diag([1 / s, 1 / s])
            elif kind == "shear":
                m = np.array([[1.0, rng.uniform(-0.2, 0.2)], [0.0, 1.0]])
            else:
                a = np.deg2rad(rng.uniform(-15, 15))
                m = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
            offset = centre - m @ centre
            out = ndimage.affine_transform(img, m, offset=offset, order=1, mode="constant", cval=self.low)
        return np.clip(out.reshape(-1), self.low, self.high)

    def mutate(self, seed: Seed, rng: np.random.Generator) -> Seed | None:
        """A valid mutant of `seed`, or None after `tries` invalid attempts."""
        for _ in range(self.tries):
            kinds = PIXEL if seed.affined else PIXEL + AFFINE
            kind = str(rng.choice(kinds))
            if kind in AFFINE:
                out = self._affine(seed.x, kind, rng)
                return Seed(out, out, seed.origin, seed.label, True, seed.depth + 1)
            out = self._pixel(seed.x, kind, rng)
            if self.valid(seed.reference, out):
                return Seed(out, seed.reference, seed.origin, seed.label, seed.affined, seed.depth + 1)
        return None


@dataclass(frozen=True)
class TabularMutator:
    span: np.ndarray  # per-feature range in the seed data
    epsilon: float = 0.1
    tries: int = 20

    def valid(self, reference: np.ndarray, candidate: np.ndarray) -> bool:
        return bool(np.all(np.abs(candidate - reference) <= self.epsilon * self.span + 1e-12))

    def mutate(self, seed: Seed, rng: np.random.Generator) -> Seed | None:
        step = rng.normal(0.0, self.epsilon * self.span / 3)
        bound = self.epsilon * self.span
        out = np.clip(seed.x + step, seed.reference - bound, seed.reference + bound)
        return Seed(out, seed.reference, seed.origin, seed.label, seed.affined, seed.depth + 1)


def for_data(x: np.ndarray, image_shape: tuple[int, int] | None, epsilon: float = 0.1):
    if image_shape is not None:
        if int(np.prod(image_shape)) != x.shape[1]:
            raise InputError(f"image shape {image_shape} does not match {x.shape[1]} features")
        return ImageMutator(image_shape, float(min(0.0, x.min())), float(max(1.0, x.max())))
    return TabularMutator(np.ptp(x, axis=0) + 1e-12, epsilon)
