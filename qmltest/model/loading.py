"""What every API call and command does first: load the model (a path or a loaded `Model`), name
its default data, read the noise config or target, and check argument ranges in one line each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qmltest.errors import InputError
from qmltest.model import artifact
from qmltest.model.artifact import Model

Source = str | Path | Model


def check_range(name: str, value: int | float | None, low: float, high: float) -> None:
    """One clear error for an argument outside its sensible range (before any work starts)."""
    if value is not None and not low <= value <= high:
        raise InputError(f"{name} must be between {low:g} and {high:g}, got {value}")


def load(path: str | Path, manifest: str | Path | None = None) -> Model:
    """A model folder or .qasm file (with `manifest` for a bare .qasm); a shipped model's name (or
    its checkout path, data/models/NAME) where no such file is here (`zoo.catalog.shipped`)."""
    from qmltest.zoo.catalog import shipped

    where = Path(path)
    return artifact.load(shipped(where) or where, None if manifest is None else Path(manifest))


def model_and_name(model: Source, manifest: str | Path | None = None) -> tuple[Model, str]:
    """The model and the name reports give it (the path it was loaded from)."""
    if isinstance(model, Model):
        return model, str(model.source)
    return load(model, manifest), str(model)


def model_data(model: Model, spec: str | None, split: str, option: str) -> str:
    """A data spec, defaulting to the model's own data set (its manifest's training set) with `split`;
    a model that names none needs the option given (one line, exit 2)."""
    if spec:
        return spec
    name = (model.manifest.get("training") or {}).get("dataset")
    if not name:
        raise InputError(f"{model.source}: the model names no training data set: give {option} NAME[:SPLIT] or a file")
    return f"{name}:{split}"


def noise_of(noise: str | Path | None, target: str | None, hardware: bool = False) -> object | None:
    """The noise config of a noise file or a target (not both); an ibm: target only where the
    command can spend device shots (`hardware`)."""
    from qmltest import targets
    from qmltest.noise.config import load as load_noise

    if noise is not None and target is not None:
        raise InputError("give --noise FILE or --target, not both (--target noise:FILE is the same as --noise FILE)")
    if target is not None:
        parsed = targets.parse(target)
        if isinstance(parsed, targets.Hardware) and not hardware:
            raise InputError(
                f"--target {target}: real devices run `qmltest evaluate` only (this command needs many "
                "circuits per input); test on the device's model with --target fake:NAME"
            )
        return parsed
    return load_noise(Path(noise)) if noise is not None else None


def classifier_only(model: Model, what: str, circuits: bool = False) -> None:
    """One line for a command whose oracle is a class (fuzz, diff, attacks) given a regressor;
    `circuits`: the command reads one circuit's readout (its coverage-guided or gradient search),
    which a kernel model (`model.kernel`) does not have."""
    if model.is_regressor:
        raise InputError(f"{model.source} is a regressor: {what} judges predicted classes and takes classifiers only")
    if circuits and model.is_kernel:
        raise InputError(
            f"{model.source} is a kernel model: {what} reads one circuit's readout, and a kernel model decides over "
            "its support vectors' circuits (evaluate, predict, mutate, profile and cover take it)"
        )


def input_sets(
    m: Model, specs: list[str], suites: list, split: str, per_class: int | None, seed: int, drop: bool
) -> list[tuple[str, Any]]:
    """The named input sets `cover` measures: each data spec (the model's own data when none is
    given) and each saved suite file."""
    from qmltest.data import datasets

    parts: list[tuple[str, Any]] = []
    if not specs and not suites:
        specs = [model_data(m, None, split, "--data or --suite")]
    for spec in specs:
        source, part_split = datasets.parse_spec(spec, split)
        label = f"{source}:{part_split}" if source in datasets.BUILTIN else source
        parts.append((label, datasets.for_model(spec, split, m, per_class, seed, drop)[0]))
    for path in suites:
        parts.append((Path(path).name, datasets.load(str(path)).x))
    return parts
