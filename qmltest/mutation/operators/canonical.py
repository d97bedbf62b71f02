"""Canonical forms of models: two mutants with equal forms compute the same function, so directed
generation keeps one (efficient-QML paper Sec. IV-B, redundant mutants), and the mutant id hashes it.
"""

from __future__ import annotations

import hashlib

from qmltest.model import readout
from qmltest.model.artifact import Model
from qmltest.model.ir import Gate, ModelIR


class Form(tuple):
    """A canonical form (a plain tuple for equality and hashing) that carries its own repr, built
    from each gate's cached repr: the mutant id hashes it, and repr-ing 150 gates anew cost more
    than making the mutant."""

    text: str


def _joined(parts: list[str]) -> str:
    """repr of a tuple from its items' reprs."""
    return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def canonical(model: Model, keys: dict | None = None) -> Form:
    """A form equal for circuits that differ only in the order of gates on disjoint qubits.

    Gates are keyed by ASAP time step, then qubits; with the preprocessing (DFC mutants differ there)
    and the readout (remove-measure mutants differ there). `keys` caches each layer's keyed gates by
    layer object and incoming qubit frontier (mutants share the original's unchanged layers), so a
    generation run keys each unchanged layer once, and the last IR's gate part (DFC and readout
    mutants share the original's IR).
    """
    keys = {} if keys is None else keys
    part = keys.get("ir")  # the last IR keyed: one slot, so mutants' IRs are not kept alive
    if part is None or part[0] is not model.ir:
        part = keys["ir"] = (model.ir, *_gate_part(model.ir, keys))
    steps_text, quoted = _steps_repr(model.manifest["preprocessing"], keys)
    # the readout matrix by digest: over 16 measured qubits it is 1 MB, and its repr (4 MB) in every
    # form held 10 GB for 2,000 mutants. Made from the manifest's readout, once per readout object
    # (DFC mutants share the original's), and not cached on the mutant: 3,463 mutants of a 16-qubit
    # parity readout each holding its 1 MB matrix took 3.5 GB
    ro = model.manifest["readout"]
    last = keys.get("readout")
    if last is None or last[0] is not ro:
        digest = hashlib.sha256(readout.matrix(ro, model.num_classes).tobytes()).hexdigest()
        last = keys["readout"] = (ro, digest)
    matrix = last[1]
    form = Form((part[1], steps_text, model.ir.measured, matrix))
    form.text = _joined([part[2], quoted, repr(model.ir.measured), repr(matrix)])
    return form


def _steps_repr(steps: object, keys: dict) -> tuple[str, str]:
    """repr(steps) and repr(repr(steps)), from each step's cached repr: a PCA step's text is 125 kB
    (1 ms to repr twice), and DFC mutants repeat the original's steps with one more."""
    if type(steps) is not list:
        text = repr(steps)
        return text, repr(text)
    parts, single, double, clean = [], False, False, True
    for step in steps:
        hit = keys.get(("step", id(step)))
        if hit is None or hit[0] is not step:
            text = repr(step)
            hit = (step, text, "'" in text, '"' in text, "\\" not in text and text.isprintable())
            keys[("step", id(step))] = hit
        parts.append(hit[1])
        single, double, clean = single or hit[2], double or hit[3], clean and hit[4]
    text = "[" + ", ".join(parts) + "]"
    if clean and not (single and double):  # what repr does for a printable text without backslashes
        return text, ('"' if single else "'") + text + ('"' if single else "'")
    return text, repr(text)


def _gate_part(ir: ModelIR, keys: dict) -> tuple[tuple, str]:
    """The sorted gate entries (t, qubits, name, params) and their repr.

    Gates sharing a time step act on disjoint qubits, so (t, first qubit) orders them exactly as the
    entries themselves would sort; it is kept as one integer, t * n + q. The first IR keyed (the
    original) is kept sorted: a mutant that holds the same time slots (a changed angle or gate name)
    patches its changed entries into that order with no sort, found from its `origin` or from its
    changed layers.
    """
    base = keys.get("base")
    if base is not None:
        hint = ir.origin
        if hint is not None and hint[0] is base[0]:
            return _patched(base, [(i, _entry(g, base[4][i], ir.num_qubits, keys)) for i, g in hint[1].items()])
    n = ir.num_qubits
    free = (0,) * n  # each qubit's next free time step
    hits = []
    for layer in ir.layers:
        slot = (id(layer), free)
        hit = keys.get(slot)
        if hit is None or hit[0] is not layer:
            out = list(free)
            entries = []
            for g in layer.gates:
                qs = g.qubits
                if len(qs) == 1:
                    t = out[qs[0]]
                    out[qs[0]] = t + 1
                else:
                    t = max([out[q] for q in qs])
                    for q in qs:
                        out[q] = t + 1
                mine = keys.get(id(g))  # `_entry`'s cache, looked up inline: this loop is hot
                row = mine[3].get(t) if mine is not None and mine[0] is g else None
                entries.append(row if row is not None else _entry(g, t, n, keys))
            hit = keys[slot] = (layer, entries, tuple(out), tuple([row[0] for row in entries]))
        hits.append(hit)
        free = hit[2]
    if base is not None and len(hits) == len(base[1]):
        pairs = list(zip(hits, base[1]))
        if all(h[3] == b[3] for h, b in pairs if h is not b):
            return _patched(base, [(None, row) for h, b in pairs if h is not b for row in h[1]])
    ranked = sorted(row for hit in hits for row in hit[1])
    entries_ = [e for _, e, _ in ranked]
    texts = [t for _, _, t in ranked]
    if base is None:
        pos = {k: i for i, (k, _, _) in enumerate(ranked)}
        flat = [k for hit in hits for k in hit[3]]  # flat gate index -> its (t, q) key
        keys["base"] = (ir, hits, pos, (entries_, texts), [k // n for k in flat], [pos[k] for k in flat])
    return tuple(entries_), _joined(texts) if texts else "()"


def _entry(g: Gate, t: int, n: int, keys: dict) -> tuple[int, tuple, str]:
    """(t * n + first qubit, (t, qubits, name, params), its repr) for gate g at time step t, made
    once per gate object and time."""
    mine = keys.get(id(g))
    if mine is None or mine[0] is not g:
        key = (g.qubits, g.name, tuple(str(p.value) for p in g.params))
        mine = keys[id(g)] = (g, key, repr(key)[1:], {})
    row = mine[3].get(t)
    if row is None:
        row = mine[3][t] = (t * n + g.qubits[0], (t, *mine[1]), f"({t}, {mine[2]}")
    return row


def _patched(base: tuple, changes: list[tuple[int | None, tuple]]) -> tuple[tuple, str]:
    """The original's sorted entries with some replaced: by flat index when given, else by key."""
    _, _, pos, (entries_, texts), _, flat_pos = base
    entries_, texts = list(entries_), list(texts)
    for i, (k, e, t) in changes:
        p = flat_pos[i] if i is not None else pos[k]
        entries_[p] = e
        texts[p] = t
    return tuple(entries_), _joined(texts) if texts else "()"
