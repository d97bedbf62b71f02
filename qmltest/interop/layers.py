"""Layer inference for imported circuits: which gates form feature maps and which form ansätze.

Pure functions over a list of gate roles, so the rule is testable without a circuit:

- ``D``: the gate carries a data (input) parameter; ``W``: a weight (trainable) parameter, or, in
  a circuit whose weights are already numbers, an angle that is not a multiple of pi/4;
  ``C``: a constant gate (H, CX, S, RX(pi/2) ...).
- A feature map is a maximal stretch of D and C gates from its first to its last data gate; an
  ansatz is a maximal stretch carrying weights. Alternating stretches (data re-uploading) give
  alternating layers.
- Constant gates between a feature map and the following ansatz stay in the feature map when they
  *close* a conjugation opened inside it (the second CX of ZZFeatureMap's ``cx p(x) cx``, the
  second H of PauliFeatureMap's ``h p(x) h``): the same gate on the same qubits occurs earlier in
  the feature map with a data gate on those qubits in between. The rest go to the ansatz.
- Constant gates before a feature map (its H layer) belong to it, except entangling ones right
  after an ansatz's weights (the CNOT ladder closing a re-uploading block); leading constants
  before an ansatz belong to that ansatz.
- Library blocks composed as single instructions (``qc.append(zz_feature_map(4).to_gate(), ...)``)
  give one layer each (`groups`), named after the block.
"""

from __future__ import annotations

import math
import re

from qmltest.errors import InputError
from qmltest.model.ir import LAYER_KINDS

ROLES = ("D", "W", "C")


def angle_role(value: float) -> str:
    """A bound numeric angle: 'C' when a multiple of pi/4 (basis changes), else 'W' (a trained weight)."""
    k = value / (math.pi / 4)
    return "C" if abs(k - round(k)) < 1e-12 else "W"


def feature_first(roles: list[str], qubits: list[tuple[int, ...]]) -> list[int]:
    """A gate order, equivalent to the given one, in which every data gate that depends on no weight
    (with the constants leading to it) comes before the rest.

    `circuit.decompose()` and transpilation emit gates in a topological order that interleaves a
    feature map with the ansatz on other qubits (QCNN tutorial: the first convolution right after
    the feature map of qubits 0-1); inferred on that order the layers alternate. Moving the set A =
    {no weight ancestor, and data or an ancestor of such a data gate} first is a valid reorder: no
    gate outside A is an ancestor of a gate in A.
    """
    n = len(roles)
    last: dict[int, int] = {}
    preds: list[list[int]] = []
    for i, qs in enumerate(qubits):
        preds.append(sorted({last[q] for q in qs if q in last}))
        for q in qs:
            last[q] = i
    weighted = [False] * n
    for i in range(n):
        weighted[i] = roles[i] == "W" or any(weighted[p] for p in preds[i])
    leads = [False] * n
    for i in reversed(range(n)):
        if not weighted[i] and roles[i] == "D":
            leads[i] = True
        if leads[i]:
            for p in preds[i]:
                if not weighted[p]:
                    leads[p] = True
    return [i for i in range(n) if leads[i]] + [i for i in range(n) if not leads[i]]


def infer(roles: list[str], qubits: list[tuple[int, ...]], names: list[str]) -> list[dict]:
    """Layer table [{name, kind, start, stop}] from per-gate roles, qubits and gate names."""
    if len(roles) != len(qubits) or len(roles) != len(names):
        raise ValueError("roles, qubits and names must have one entry per gate")
    if not roles:
        return []
    kinds = _region_kinds(roles)
    _close_conjugations(kinds, roles, qubits, names)
    _keep_trailing_entanglers(kinds, roles, qubits)
    return _table(kinds)


def _region_kinds(roles: list[str]) -> list[str]:
    """Assign every gate 'feature_map' or 'ansatz' before the closing-gate refinement."""
    n = len(roles)
    kinds = [""] * n
    anchors = [i for i, r in enumerate(roles) if r != "C"]
    if not anchors:
        return ["ansatz"] * n
    kind_of = {"D": "feature_map", "W": "ansatz"}
    for i in anchors:
        kinds[i] = kind_of[roles[i]]
    # constants between two anchors of one kind stay inside; between kinds they go forward
    # (to the next region: a feature map's H layer), trailing constants join the last region
    nxt = None
    for i in range(n - 1, -1, -1):
        if roles[i] != "C":
            nxt = kinds[i]
        elif nxt is not None:
            kinds[i] = nxt
    last = kinds[anchors[-1]]
    for i in range(anchors[-1] + 1, n):
        kinds[i] = last
    return kinds


def _close_conjugations(kinds: list[str], roles: list[str], qubits: list[tuple[int, ...]], names: list[str]) -> None:
    """Move constants that close a conjugation back into the feature map that opened it."""
    n = len(kinds)
    i = 0
    while i < n:
        if kinds[i] != "feature_map":
            i += 1
            continue
        start = i
        while i < n and kinds[i] == "feature_map":
            i += 1
        stop = i  # feature map [start, stop); constants that follow were sent to the ansatz
        j = stop
        while j < n and roles[j] == "C" and kinds[j] == "ansatz" and _closes(j, start, roles, qubits, names):
            kinds[j] = "feature_map"
            j += 1
        i = j


def _keep_trailing_entanglers(kinds: list[str], roles: list[str], qubits: list[tuple[int, ...]]) -> None:
    """Entangling constants right after an ansatz's weights and before the next data stretch close
    that ansatz block (a CNOT ladder ending each re-uploading block), not open the feature map:
    the feature map keeps only the single-qubit constants in front of its data (its H layer)."""
    for i in range(1, len(kinds)):
        if roles[i - 1] == "W" and kinds[i] == "feature_map":
            j = i
            while j < len(kinds) and roles[j] == "C" and len(qubits[j]) > 1:
                kinds[j] = "ansatz"
                j += 1


def _closes(j: int, start: int, roles: list[str], qubits: list[tuple[int, ...]], names: list[str]) -> bool:
    """Gate j repeats an earlier gate of the region [start, j) on the same qubits with data in between."""
    touched = set(qubits[j])
    for k in range(j - 1, start - 1, -1):
        if names[k] == names[j] and qubits[k] == qubits[j] and roles[k] == "C":
            return any(roles[m] == "D" and touched & set(qubits[m]) for m in range(k + 1, j))
    return False


def _table(kinds: list[str]) -> list[dict]:
    rows: list[dict] = []
    for i, kind in enumerate(kinds):
        if rows and rows[-1]["kind"] == kind:
            rows[-1]["stop"] = i + 1
        else:
            rows.append({"name": "", "kind": kind, "start": i, "stop": i + 1})
    return name_rows(rows)


def name_rows(rows: list[dict]) -> list[dict]:
    """Name layers 'feature_map' / 'ansatz', numbered per kind when a kind repeats."""
    counts = {k: sum(1 for r in rows if r["kind"] == k) for k in LAYER_KINDS}
    seen = dict.fromkeys(LAYER_KINDS, 0)
    for r in rows:
        if not r["name"]:
            r["name"] = r["kind"] if counts[r["kind"]] == 1 else f"{r['kind']}_{seen[r['kind']]}"
        seen[r["kind"]] += 1
    return rows


def from_groups(groups: list[int], labels: dict[int, str], roles: list[str]) -> list[dict] | None:
    """One layer per top-level library block (and per stretch of loose gates between blocks).

    Returns None when the circuit has no composite block (then `infer` decides).
    """
    if all(g < 0 for g in groups):
        return None
    rows: list[dict] = []
    for i, g in enumerate(groups):
        if rows and rows[-1]["group"] == g:
            rows[-1]["stop"] = i + 1
        else:
            rows.append({"group": g, "start": i, "stop": i + 1})
    out = []
    for r in rows:
        part = roles[r["start"] : r["stop"]]
        kind = "feature_map" if "D" in part and "W" not in part else "ansatz"
        if "D" in part and "W" in part:
            kind = "feature_map" if part.count("D") >= part.count("W") else "ansatz"
        name = _slug(labels.get(r["group"], "")) if r["group"] >= 0 else ""
        out.append({"name": name, "kind": kind, "start": r["start"], "stop": r["stop"]})
    used: dict[str, int] = {}
    for r in out:  # block names must be unique; loose stretches get kind names
        if r["name"]:
            used[r["name"]] = used.get(r["name"], 0) + 1
    seen: dict[str, int] = {}
    for r in out:
        if r["name"] and used[r["name"]] > 1:
            seen[r["name"]] = seen.get(r["name"], 0) + 1
            r["name"] = f"{r['name']}_{seen[r['name']] - 1}"
    return name_rows(out)


def _slug(label: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]+", "_", label).strip("_").lower()


def parse_spec(spec: str, num_gates: int) -> list[dict]:
    """`0-24:feature_map,24-44:ansatz` -> a layer table covering [0, num_gates)."""
    rows = []
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)-(\d+):(\w+)\s*", part)
        if not m:
            raise InputError(f"--layers: '{part}' is not START-STOP:KIND (e.g. 0-24:feature_map,24-44:ansatz)")
        start, stop, kind = int(m.group(1)), int(m.group(2)), m.group(3)
        if kind not in LAYER_KINDS:
            raise InputError(f"--layers: kind '{kind}' must be one of {', '.join(LAYER_KINDS)}")
        rows.append({"name": "", "kind": kind, "start": start, "stop": stop})
    expect = 0
    for r in rows:
        if r["start"] != expect or r["stop"] <= r["start"]:
            raise InputError(f"--layers: ranges must be contiguous and non-empty from 0; '{r['start']}-{r['stop']}'")
        expect = r["stop"]
    if expect != num_gates:
        raise InputError(f"--layers covers gates 0-{expect} but the circuit has {num_gates} gates")
    return name_rows(rows)


def from_barriers(barriers: list[int], roles: list[str]) -> list[dict]:
    """Layers cut at barrier positions (gate indices); each named by the roles it holds."""
    n = len(roles)
    cuts = sorted({0, n, *[b for b in barriers if 0 < b < n]})
    rows = []
    for a, b in zip(cuts, cuts[1:]):
        part = roles[a:b]
        kind = "feature_map" if "D" in part and part.count("D") >= part.count("W") else "ansatz"
        rows.append({"name": "", "kind": kind, "start": a, "stop": b})
    return name_rows(rows)
