"""Story sets in the design of the classic analogy studies (``fastmem eval stories PATH``).

Each set (``tests/data/stories.json``) holds a *base* story and four others: a *literal*
retelling (the same kinds of objects in other words), a true *analogy* (another domain, the
same system of relations with its causal links), a *false* analogy (the analogy's objects and
first-order events, different causal links) and a *mere-appearance* story (the base's
objects, another plot).

Two measures, for the sets marked ``dev`` (tuned on) and ``heldout`` (only measured):

* **the slot's pick**: every set's four other stories are remembered in one store, each base
  is recalled as the turn, and the analogy the slot offers is counted by kind: the set's
  analogy, literal, false analogy, mere appearance, a story of another set, or none;
* **the pairwise order** of :func:`fastmem.structural_similarity`: the share of sets whose
  analogy scores above its false analogy, above its mere-appearance story and above its
  literal retelling (an analogy is a relational match with *different* objects); beside it the
  same order by the *probe* (MiniLM over the text told without its clothes, names and nouns by
  their role, minus the plain MiniLM cosine: a floor any structure view must beat).

A file of multiple-choice items (``items``: a ``source`` and its ``choices``, ``analogy``
among them, the rest a story chosen for noun overlap and unrelated ones;
``tests/data/analogy_mc.json``) gets :func:`multiple_choice`: the share of items whose analogy
scores highest, by :func:`fastmem.structural_similarity`, the probe and plain MiniLM.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

from . import json_file

__all__ = ["KINDS", "load", "evaluate", "table", "multiple_choice", "probe"]

#: The stories of a set other than its base, as the file names them.
KINDS = ("analogy", "literal", "false", "appearance")
_PICKS = KINDS + ("other", "none")


def load(path: str | os.PathLike) -> dict | None:
    """The story sets at ``path`` (a JSON file, or a folder holding ``stories.json``); None
    when there is none."""
    return json_file(path, "stories.json")


def _picks(sets: Sequence[dict], memory_kw: dict | None) -> dict[str, str]:
    """The slot's pick for each set's base: one store of every set's other stories."""
    import fastmem

    out = {}
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "stories.db"), **(memory_kw or {})) as m:
        texts = [(s["id"], k, s[k]) for s in sets for k in KINDS]
        ids = m.remember_many([t for _, _, t in texts], progress=False)
        which = {mid: (sid, kind) for mid, (sid, kind, _) in zip(ids, texts)}
        recalls = m.recall_many([s["base"] for s in sets], k=5, record=False)
        for s, r in zip(sets, recalls):
            if r.analogy is None:
                out[s["id"]] = "none"
            else:
                sid, kind = which[r.analogy.id]
                out[s["id"]] = kind if sid == s["id"] else "other"
    return out


def _pairwise(sets: Sequence[dict]) -> dict[str, dict[str, float]]:
    import fastmem

    scores = {s["id"]: {k: fastmem.structural_similarity(s["base"], s[k]) for k in KINDS} for s in sets}
    return scores


def probe(pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float]]:
    """``(probe cosine, plain cosine)`` of each pair: MiniLM over each text told without its
    clothes (:mod:`fastmem.reader.plot`'s rendering, every sentence), and over the text itself."""
    import numpy as np

    from ..models.embedder import default_embedder
    from ..reader.extract import SpacyExtractor

    ex, emb = SpacyExtractor(), default_embedder()
    texts = list(dict.fromkeys(t for p in pairs for t in p))
    told = [t or "something" for t in ex.told_many(texts)]
    pv, rv = emb.encode(told), emb.encode(texts)
    at = {t: i for i, t in enumerate(texts)}
    return [(float(np.dot(pv[at[a]], pv[at[b]])), float(np.dot(rv[at[a]], rv[at[b]]))) for a, b in pairs]


def evaluate(data: dict, *, memory_kw: dict | None = None, pairwise: bool = True) -> dict:
    """Both measures per split (``dev``, ``heldout``, ``all``): the share of sets per pick
    kind, and the share of sets with the analogy above each other kind in
    :func:`fastmem.structural_similarity`; ``sets``: each set's pick and scores."""
    sets = data["sets"]
    picks = _picks(sets, memory_kw)
    scores = _pairwise(sets) if pairwise else {}
    probed = {}
    if pairwise:
        got = iter(probe([(s["base"], s[k]) for s in sets for k in KINDS]))
        probed = {s["id"]: {k: (lambda pr: pr[0] - pr[1])(next(got)) for k in KINDS} for s in sets}
    report: dict = {"sets": {s["id"]: {"split": s.get("split", "dev"), "pick": picks[s["id"]],
                                        "similarity": scores.get(s["id"])} for s in sets}}
    for split in ("dev", "heldout", "all"):
        chosen = [s for s in sets if split == "all" or s.get("split", "dev") == split]
        if not chosen:
            continue
        n = len(chosen)
        row = {"sets": n, "pick": {k: sum(picks[s["id"]] == k for s in chosen) / n for k in _PICKS}}
        if scores:
            row["analogy above"] = {k: sum(scores[s["id"]]["analogy"] > scores[s["id"]][k] for s in chosen) / n
                                    for k in KINDS[1:]}
            row["probe: analogy above"] = {k: sum(probed[s["id"]]["analogy"] > probed[s["id"]][k] for s in chosen) / n
                                           for k in KINDS[1:]}
        report[split] = row
    return report


def multiple_choice(data: dict) -> dict:
    """The share of items whose ``analogy`` choice scores highest, per split (``dev``,
    ``heldout``, ``all``) and per scorer: ``structural_similarity``, ``probe`` (its cosine minus
    the plain cosine), ``probe alone`` and ``minilm`` (plain cosine); and the share whose
    ``overlap`` choice scores highest by ``structural_similarity``."""
    import fastmem

    items = data["items"]
    names = [list(it["choices"]) for it in items]
    sims = [{c: fastmem.structural_similarity(it["source"], it["choices"][c]) for c in cs} for it, cs in zip(items, names)]
    got = iter(probe([(it["source"], it["choices"][c]) for it, cs in zip(items, names) for c in cs]))
    probes = [{c: next(got) for c in cs} for cs in names]
    scorers = {"structural_similarity": lambda i, c: sims[i][c], "probe": lambda i, c: probes[i][c][0] - probes[i][c][1],
               "probe alone": lambda i, c: probes[i][c][0], "minilm": lambda i, c: probes[i][c][1]}
    report: dict = {}
    for split in ("dev", "heldout", "all"):
        chosen = [i for i, it in enumerate(items) if split == "all" or it.get("split", "dev") == split]
        if not chosen:
            continue
        row = {"items": len(chosen)}
        for name, f in scorers.items():
            row[name] = sum(max(names[i], key=lambda c: f(i, c)) == "analogy" for i in chosen) / len(chosen)
        row["overlap picked"] = sum(max(names[i], key=lambda c: sims[i][c]) == "overlap" for i in chosen) / len(chosen)
        report[split] = row
    return report


def table(report: dict) -> str:
    lines = ["split      sets  slot: analogy literal  false appearance  other   none | analogy above: false appearance literal"]
    for split in ("dev", "heldout", "all"):
        r = report.get(split)
        if r is None:
            continue
        p, a = r["pick"], r.get("analogy above", {})
        lines.append(f"{split:<9} {r['sets']:>5}  {p['analogy']:>13.3f} {p['literal']:>7.3f} {p['false']:>6.3f} "
                     f"{p['appearance']:>10.3f} {p['other']:>6.3f} {p['none']:>6.3f} |"
                     + (f" {a['false']:>19.3f} {a['appearance']:>10.3f} {a['literal']:>7.3f}" if a else ""))
    if any("probe: analogy above" in report.get(sp, {}) for sp in ("dev", "heldout", "all")):
        lines.append("probe (MiniLM without clothes minus MiniLM):    analogy above: false appearance literal")
        for split in ("dev", "heldout", "all"):
            a = report.get(split, {}).get("probe: analogy above")
            if a:
                lines.append(f"{split:<9} {report[split]['sets']:>5}  {'':>50}| {a['false']:>19.3f} "
                             f"{a['appearance']:>10.3f} {a['literal']:>7.3f}")
    return "\n".join(lines)
