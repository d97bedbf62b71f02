"""What decides a mutation run: the operator suites, strategies, defaults and the options record
(the mutant record is `mutation.operators.mutant`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from qmltest.errors import InputError
from qmltest.mutation.judge import killing as criteria
from qmltest.mutation.operators.scope import Scope
from qmltest.mutation.strategies import sampling

FORMAT = "qmltest.mutation/3"
"""The report's format."""
OPERATOR_SUITES = ("quanforge", "qml", "classic")
NULL_COPIES = 200
DEFAULTS = {  # per operator suite: strategy, criterion, scoring (the papers' own settings)
    "quanforge": ("search", "statistical", "class"),
    "qml": ("directed", "majority", "plain"),
    "classic": ("directed", "majority", "plain"),
}


@dataclass(frozen=True)
class Settings:
    """QuanForge Algorithm 1's search settings (Sec. 3.3): the percentage bounds, stability
    rounds k_max of i mutants, the kill test's alpha and effect, the RSE and non-triviality
    thresholds."""

    lb: float = 0.0
    ub: float = 0.5
    k_max: int = 10
    i: int = 10
    alpha: float = 0.05
    effect: float = 0.5
    tau_rse: float = 0.05
    tau_trivial: float = 0.75
    max_steps: int = 12


@dataclass(frozen=True)
class Cell:
    """A scope the search strategy runs in (QuanForge RQ2's depth / gate-type / qubit cells)."""

    name: str
    scope: Scope


@dataclass(frozen=True)
class Options:
    """Everything that decides a mutation run (the CLI and run configs fill it)."""

    suite: str = "quanforge"
    operators: tuple[str, ...] = ()
    strategy: str = ""
    criterion: str = ""
    correction: str = ""
    scoring: str = ""
    shots: int | None = 1000
    repeats: int = 20
    seed: int = 0
    settings: Settings = field(default_factory=Settings)
    distribution: str = "gaussian"
    scale: float = 1.0
    null_copies: int = NULL_COPIES
    sequential: bool = False
    shots_budget: int | None = None  # sequential: most shots per (mutant, input); default 5 x repeats x shots
    power: float = 0.8  # sequential: 1 - beta, the chance a mutant at the effect / margin is not survived
    margin: float = 0.3  # sequential majority: the vote-probability drop survival must rule out
    sample: int | None = None  # site strategies: score a stratified random sample of this many sites
    precision: float | None = None  # site strategies: sample until the score's interval is narrower

    @property
    def max_repeats(self) -> int:
        """Repeats at the sequential design's last look (the fixed design's repeats otherwise)."""
        if not self.sequential:
            return self.repeats
        if self.shots_budget is None:
            return 5 * self.repeats
        return max(2, self.shots_budget // (self.shots or 1))

    def resolved(self) -> Options:
        """Defaults by operator suite filled in, every choice validated (one clear error); the
        strategy's own checks are `strategies.base.checked`'s."""
        if self.suite not in OPERATOR_SUITES:
            raise InputError(f"unknown operator suite '{self.suite}' (choose from {', '.join(OPERATOR_SUITES)})")
        strategy, criterion, scoring = DEFAULTS[self.suite]
        out = replace(
            self,
            strategy=self.strategy or strategy,
            criterion=self.criterion or criterion,
            scoring=self.scoring or scoring,
        )
        if out.criterion in criteria.REGISTRY:
            out = replace(out, correction=out.correction or criteria.REGISTRY[out.criterion].default_correction)
        prefix = f"{out.suite}/"  # registry names (quanforge/PF) and bare ones (PF) both name an operator
        out = replace(out, operators=tuple(o[len(prefix) :] if o.startswith(prefix) else o for o in out.operators))
        for value, allowed, name in (
            (out.criterion, tuple(criteria.REGISTRY), "--criterion"),
            (out.correction, criteria.CORRECTIONS, "--correction"),
            (out.scoring, criteria.SCORINGS, "--scoring"),
        ):
            if value not in allowed:
                raise InputError(f"{name} must be one of {', '.join(allowed)}, got '{value}'")
        s = out.settings
        checks = (
            (0 < s.alpha < 1, f"--alpha must lie in (0, 1), got {s.alpha}"),
            (math.isfinite(s.effect) and s.effect >= 0, f"--effect must be a finite number >= 0, got {s.effect}"),
            (math.isfinite(s.tau_rse) and s.tau_rse > 0, f"--tau-rse must be positive, got {s.tau_rse}"),
            (0 <= s.lb < s.ub <= 1, f"--lb and --ub must satisfy 0 <= lb < ub <= 1, got {s.lb} and {s.ub}"),
            (math.isfinite(out.scale) and out.scale > 0, f"--scale must be a positive number, got {out.scale}"),
            (all(o.strip() for o in out.operators), "--operators names an empty operator"),
        )
        for ok, message in checks:
            if not ok:
                raise InputError(message)
        if out.shots is not None and out.shots < 1:
            raise InputError(f"--shots must be positive, got {out.shots}")
        if out.repeats < 2:
            raise InputError(f"--repeats must be at least 2 (a distribution), got {out.repeats}")
        if not 1 <= out.null_copies <= 100_000:
            raise InputError(f"--null-copies must be between 1 and 100000, got {out.null_copies}")
        if out.sequential:
            if out.shots is None:
                raise InputError("--sequential draws shots: it does not apply with --exact")
            if out.shots_budget is not None and out.shots_budget < 2 * out.shots:
                raise InputError(
                    f"--shots-budget must allow at least 2 predictions of {out.shots} shots, got {out.shots_budget}"
                )
            if out.criterion == "statistical" and out.correction != "none":
                raise InputError("--sequential decides each mutant on its own: --correction must be none")
            if out.criterion == "majority-literal":
                raise InputError("--sequential applies to the statistical and majority criteria")
            if not 0 < out.power < 1:
                raise InputError(f"--power must be in (0, 1), got {out.power}")
            if not 0 < out.margin < 1:
                raise InputError(f"--margin must be in (0, 1), got {out.margin}")
        elif out.shots_budget is not None:
            raise InputError("--shots-budget applies to --sequential runs")
        sampling.check(out.sample, out.precision)
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["operators"] = list(self.operators)
        for key in ("sample", "precision"):  # unsampled runs keep the report they always had
            if d[key] is None:
                del d[key]
        return d


def for_regressor(opts: Options) -> Options:
    """A regressor's run: the statistical criterion over its squared-error differentials
    (`evidence.values`) and the plain score (it has no classes); QuanForge's search keeps mutants
    by their accuracy, so a regressor's default strategy is the exhaustive one. An explicit choice
    that needs classes is one line."""
    strategy, _, _ = DEFAULTS.get(opts.suite, ("directed", "", ""))
    refused = (
        (opts.criterion not in ("", "statistical"), f"--criterion {opts.criterion} reads class votes"),
        (opts.scoring not in ("", "plain"), f"--scoring {opts.scoring} counts killed classes"),
        (opts.strategy == "search", "--strategy search keeps mutants by their accuracy"),
        (opts.sequential, "--sequential decides by class accuracies and votes"),
    )
    for bad, why in refused:
        if bad:
            raise InputError(f"{why}: a regressor is killed by the statistical test on its errors (statistical)")
    return replace(
        opts,
        criterion="statistical",
        scoring="plain",
        strategy=opts.strategy or ("exhaustive" if strategy == "search" else strategy),
    )
