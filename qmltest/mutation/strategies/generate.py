"""Effective-mutant generation (QuanForge Algorithm 1): binary search over the gate percentage.

For a percentage mid in [lb, ub], mutants are generated i at a time until the batch's RSE (Eq. 1)
falls below tau_RSE or k_max rounds pass (stability checker). An unstable batch lowers ub and grows
i by 1.5x. A stable batch whose mean accuracies differ from the original's (isSetKilled) lowers ub
and contributes its killable, non-trivial mutants (mutant analyzer); otherwise lb rises. The search
stops when [lb, ub] no longer changes the number of mutated gates (search bound checker).

`Generator.search` is the algorithm as a coroutine: it yields each stability round's i draws
(percentage, tag) and takes back the made and evaluated mutants, so a runner can evaluate a round's
mutants in parallel (`pipeline.generate_search` on Dask); `Generator.run` makes them one by one.
Every draw is seeded by its tag and every evaluation by its mutant's id, so both give the same search.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Generator as Coroutine
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from qmltest.data.labelled import Data
from qmltest.model.artifact import Model
from qmltest.mutation.evidence import stats
from qmltest.mutation.evidence.evaluator import Evaluator
from qmltest.mutation.operators.mutant import Mutant, content, mutant_id
from qmltest.mutation.operators.quanforge import Operator
from qmltest.mutation.operators.scope import Scope
from qmltest.mutation.options import Settings  # noqa: F401  (its old home)
from qmltest.util.seeds import seed_of


@dataclass
class Step:
    lb: float
    ub: float
    mid: float
    generated: int
    rse: float
    stable: bool
    set_killed: bool | None
    effective: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


Search = Coroutine[list[tuple[float, str]], list["Mutant | None"], tuple[list["Mutant"], list["Mutant"], list["Step"]]]
"""`Generator.search`: yields draws (percentage, tag), is sent their mutants, returns the result."""


class Generator:
    """Runs Algorithm 1 for one operator and scope; `cache` maps mutant ids to evaluated mutants."""

    def __init__(
        self,
        original: Model,
        reference: Data,
        evaluator: Evaluator,
        settings: Settings,
        seed: int,
        records: dict[str, dict] | None = None,
        on_mutant: Callable[[Mutant], None] | None = None,
    ) -> None:
        self.original = original
        self.reference = reference
        self.evaluator = evaluator
        self.settings = settings
        self.seed = seed
        self.records = records if records is not None else {}  # finished mutants of an earlier run
        self.cache: dict[str, Mutant] = {}
        self.keys: dict = {}  # canonical forms' per-layer keys (`canonical`), owned by this generator
        self.on_mutant = on_mutant

    @cached_property
    def orig_acc(self) -> np.ndarray:
        """The original's accuracy distribution on the reference data (the set-level verdict)."""
        return self.evaluator.original_accuracies(self.reference)

    def make(self, operator: Operator, scope: Scope, percentage: float, tag: str, cell: str = "all") -> Mutant | None:
        """One draw at `percentage`, seeded by its tag; its evaluation comes from the cache, an
        earlier run's records (a function of the id) or a fresh simulation."""
        rng = np.random.default_rng(seed_of(self.seed, operator.name, tag))
        result = operator.mutate(self.original.ir, scope, percentage, rng)
        if result is None:
            return None
        new_ir, notes = result
        site = "; ".join(notes)
        try:
            model = self.original.with_ir(new_ir)
        except Exception as exc:  # the mutant cannot be written as QASM3: incompetent
            mid = mutant_id(self.original.sha256, operator.name, "", content(None, fallback=repr(notes)))
            return Mutant(mid, operator.name, cell, site, self.original, f"incompetent: {exc}", percentage)
        mid = mutant_id(self.original.sha256, operator.name, "", content(model, self.keys))
        if mid in self.cache:
            return self.cache[mid]
        if mid in self.records:  # its evaluation (a function of its id); percentage and site are this draw's
            mutant = Mutant.from_record(self.records[mid], model, cell)
            mutant.percentage, mutant.site = percentage, site
        else:
            mutant = Mutant(mid, operator.name, cell, site, model, "ok", percentage)
            self.evaluate(mutant)
            if self.on_mutant:
                self.on_mutant(mutant)
        self.cache[mid] = mutant
        return mutant

    def evaluate(self, mutant: Mutant) -> None:
        """Algorithm 1's verdict on one mutant: killable (Eq. 2-3 against a fresh draw of the
        original's distribution) and non-trivial (tau_trivial), kept in `mutant.search`."""
        probs, status = self.evaluator.mutant_probs(mutant.model, self.reference)
        mutant.status = status
        if status != "ok" or probs is None:
            return
        acc = self.evaluator.accuracies(probs, self.reference, mutant.id)
        # a fresh draw of the original's distribution for every comparison keeps the comparisons
        # independent: one shared draw would make every verdict depend on that draw's luck
        baseline = self.evaluator.original_accuracies(self.reference, None, f"vs/{mutant.id}")
        verdict = stats.is_killed(baseline, acc, self.settings.alpha, self.settings.effect)
        mutant.accuracies = acc
        mutant.search = {
            "p_value": verdict.p_value,
            "effect_size": verdict.effect_size,
            "killable": bool(verdict.killed),
            "nontrivial": bool(stats.is_nontrivial(acc, self.settings.tau_trivial)),
        }

    def run(self, operator: Operator, scope: Scope, cell: str = "all") -> tuple[list[Mutant], list[Mutant], list[Step]]:
        """(effective mutants, every mutant generated, search log), each draw made here in turn."""
        search = self.search(operator, scope, cell)
        try:
            draws = next(search)
            while True:
                draws = search.send([self.make(operator, scope, p, tag, cell) for p, tag in draws])
        except StopIteration as stop:
            return stop.value

    def search(self, operator: Operator, scope: Scope, cell: str = "all") -> Search:
        """Algorithm 1 as a coroutine: yields a stability round's draws (percentage, tag), takes back
        their mutants (`make`'s results, in order) and returns what `run` returns."""
        s = self.settings
        num_sites = len(operator.sites(self.original.ir, scope))
        lb, ub, i = s.lb, s.ub, s.i
        effective: dict[str, Mutant] = {}
        generated: dict[str, Mutant] = {}
        log: list[Step] = []
        if num_sites == 0:
            return [], [], log
        for step in range(s.max_steps):
            mid = (lb + ub) / 2
            batch: list[Mutant] = []
            k = 0
            while k <= s.k_max and stats.rse([m.mean_accuracy for m in batch if m.status == "ok"]) > s.tau_rse:
                k += 1
                made = yield [(mid, f"{cell}/{step}/{k}/{j}") for j in range(i)]
                for m in made:
                    if m is not None:
                        batch.append(m)
                        generated[m.id] = m
            scored = [m for m in batch if m.status == "ok"]
            value = stats.rse([m.mean_accuracy for m in scored])
            entry = Step(lb, ub, mid, len(batch), value, value <= s.tau_rse, None, 0)
            if value > s.tau_rse:
                ub, i = mid, math.ceil(1.5 * i)
            else:
                mut_ac = np.array([m.mean_accuracy for m in scored])
                ori_ac = np.full(len(mut_ac), float(np.mean(self.orig_acc)))
                entry.set_killed = stats.is_killed(ori_ac, mut_ac, s.alpha, s.effect).killed
                if entry.set_killed:
                    ub = mid
                    chosen = [m for m in scored if m.effective]
                    entry.effective = len(chosen)
                    effective.update({m.id: m for m in chosen})
                else:
                    lb = mid
            log.append(entry)
            if not self.refinable(lb, ub, num_sites, operator):
                break
        return list(effective.values()), list(generated.values()), log

    @staticmethod
    def refinable(lb: float, ub: float, num_sites: int, operator: Operator) -> bool:
        """Search bound checker: the bounds still differ in the number of gates they mutate."""
        return operator.count(num_sites, lb) != operator.count(num_sites, ub)
