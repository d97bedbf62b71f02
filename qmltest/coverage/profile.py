"""Profiling (QCov Sec. 3.1, Eq. 1): per basis state statistics of the training probability vectors.

A profile keeps the training probabilities themselves so that every bound variant (min/max, +-sigma,
MAD-refined at any confidence, Sec. 4.6) and shot-resampled profiles (Sec. 4.5) can be derived
later; it records the model hash so a profile is never applied to another model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qmltest.errors import InputError
from qmltest.util import dist

FORMAT = "qmltest.profile/1"
BOUNDS = ("minmax", "sigma", "mad")


@dataclass(frozen=True)
class Profile:
    probabilities: np.ndarray  # (n, |S|) training probability vectors
    model_sha256: str
    meta: dict
    entanglement: np.ndarray | None = None  # (n,) Meyer-Wallach Q of the training states (KEC), when profiled

    @property
    def num_states(self) -> int:
        return int(self.probabilities.shape[1])

    def summary(self) -> dict[str, list[float]]:
        p = self.probabilities
        med = np.median(p, axis=0)
        return {
            "min": p.min(axis=0).tolist(),
            "max": p.max(axis=0).tolist(),
            "mean": p.mean(axis=0).tolist(),
            "std": p.std(axis=0).tolist(),
            "median": med.tolist(),
            "mad": np.median(np.abs(p - med), axis=0).tolist(),
        }

    def to_dict(self) -> dict:
        return {
            "meta": {"format": FORMAT, **self.meta},
            "model_sha256": self.model_sha256,
            "num_samples": int(self.probabilities.shape[0]),
            "num_states": self.num_states,
            "states": self.summary(),
            "probabilities": self.probabilities.tolist(),
            **({} if self.entanglement is None else {"entanglement": self.entanglement.tolist()}),
        }

    @classmethod
    def from_dict(cls, data: dict, source: str = "profile") -> Profile:
        if not isinstance(data, dict) or not isinstance(data.get("meta"), dict) or data["meta"].get("format") != FORMAT:
            raise InputError(f"{source}: not a qmltest profile (expected meta.format '{FORMAT}')")
        from qmltest import schemas

        schemas.validate("profile", data, source)
        widths = {len(row) for row in data["probabilities"]}
        if len(widths) != 1:
            raise InputError(f"{source}: field 'probabilities': rows of different lengths {sorted(widths)[:4]}")
        try:
            probs = np.asarray(data["probabilities"], dtype=float)
            sha = str(data["model_sha256"])
        except (KeyError, ValueError, TypeError) as exc:
            raise InputError(f"{source}: profile field missing or malformed ({exc})") from None
        if probs.ndim != 2 or probs.shape[0] == 0:
            raise InputError(f"{source}: profile 'probabilities' must be a non-empty (samples x states) table")
        meta = {k: v for k, v in data["meta"].items() if k != "format"}
        ent = data.get("entanglement")
        if ent is not None and len(ent) != len(probs):
            raise InputError(f"{source}: 'entanglement' has {len(ent)} values for {len(probs)} training inputs")
        return cls(probs, sha, meta, None if ent is None else np.asarray(ent, dtype=float))


def build(
    probabilities: np.ndarray, model_sha256: str, entanglement: np.ndarray | None = None, **meta: object
) -> Profile:
    p = np.asarray(probabilities, dtype=float)
    if p.ndim != 2 or len(p) == 0:
        raise InputError("profiling needs at least one training input")
    return Profile(p, model_sha256, dict(meta), None if entanglement is None else np.asarray(entanglement, float))


def mad_keep(p: np.ndarray, confidence: float) -> np.ndarray:
    """Mask of values within the MAD threshold (Leys et al. 2013; QCov Sec. 4.6.1), per column.

    A value is an outlier when |p - median| > z * 1.4826 * MAD, z the two-sided normal quantile of
    `confidence` (2.576 for 0.99). With MAD = 0 only values equal to the median are kept.
    """
    if not 0 < confidence < 1:
        raise InputError(f"--mad-confidence must be in (0, 1), got {confidence}")
    z = dist.norm_ppf(0.5 + confidence / 2)
    med = np.median(p, axis=0)
    dev = np.abs(p - med)
    scale = 1.4826 * np.median(dev, axis=0)
    return dev <= z * scale + 1e-15


def bounds(profile: Profile, method: str = "minmax", mad_confidence: float = 0.99) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper boundaries (l, u) per basis state.

    minmax: Eq. 1; sigma: (l - std, u + std), Sec. 4.6.2; mad: min/max after MAD outlier removal.
    Bounds are clipped to [0, 1], the range of a probability.
    """
    p = profile.probabilities
    if method == "minmax":
        lo, hi = p.min(axis=0), p.max(axis=0)
    elif method == "sigma":
        sd = p.std(axis=0)
        lo, hi = p.min(axis=0) - sd, p.max(axis=0) + sd
    elif method == "mad":
        keep = mad_keep(p, mad_confidence)
        lo = np.where(keep, p, np.inf).min(axis=0)
        hi = np.where(keep, p, -np.inf).max(axis=0)
    else:
        raise InputError(f"unknown bounds '{method}' (choose from {', '.join(BOUNDS)})")
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def loaded(source: object, model: object) -> Profile:
    """A profile (a file, its dict, or `api.profile`'s result) checked to belong to `model`."""
    from pathlib import Path

    from qmltest.util.writers import read_json

    if isinstance(source, dict):
        doc, where = source, "<profile>"
    elif hasattr(source, "data") and isinstance(source.data, dict):  # a ProfileResult
        doc, where = source.data, "<profile>"
    else:
        doc, where = read_json(Path(source)), str(source)  # type: ignore[arg-type]
    prof = Profile.from_dict(doc, where)
    if prof.model_sha256 != model.sha256:  # type: ignore[attr-defined]
        raise InputError(f"{where}: profile was made for another model (hash {prof.model_sha256[:12]}...)")
    return prof
