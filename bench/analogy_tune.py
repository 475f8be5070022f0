"""Grid over structural-encoding choices on ProPara-Logy silver, without a store.

Parses and embeds every paragraph once (cached in $TMPDIR), keeps per-family complex sums of
each paragraph's bound terms, and scores term-family weights with the same gate as the
analogy slot (exact z over all stored codes, the turn's near surface neighbours excluded).
Development only; bench/analogy_quality.py measures the real path through Memory.

    python bench/analogy_tune.py
"""

from __future__ import annotations

import itertools
import os
import pickle
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from analogy_quality import build_memories, load_rows, score  # noqa: E402

FAMILIES = ("rel", "subj", "obj", "order", "link", "sconc", "oconc")


def prepare():
    cache = os.path.join(tempfile.gettempdir(), "fastmem-silver-prep.pkl")
    if os.path.exists(cache):
        return pickle.load(open(cache, "rb"))
    from fastmem.embedder import default_embedder
    from fastmem.extract import SpacyExtractor
    from fastmem.structure import query_facts

    rows = load_rows()
    texts, kind, src = build_memories(rows)
    queries = [r["source_paragraph"] for r in rows]
    ex = SpacyExtractor()
    mf = [query_facts(t) for t in ex.extract_many(texts)]
    qf = [query_facts(t) for t in ex.extract_many(queries)]
    e = default_embedder()
    out = dict(rows=rows, texts=texts, kind=kind, src=src, mf=mf, qf=qf, mv=e.encode(texts), qv=e.encode(queries))
    pickle.dump(out, open(cache, "wb"))
    return out


def family_sums(enc, facts_list, rel_weight=None):
    """(n, F, D) complex: per paragraph, per family, sum of exp(i term) / distance, each term
    times ``rel_weight(relation)`` of the facts it involves (default 1)."""
    out = np.zeros((len(facts_list), len(FAMILIES), enc.dim), np.complex128)
    for n, fs in enumerate(facts_list):
        T, fam, _ = enc.family_terms(fs)
        for t, (f, g, i, j) in zip(T, fam):
            w = 1.0 if rel_weight is None else rel_weight(fs[i][1]) * (rel_weight(fs[j][1]) if j != i else 1.0)
            out[n, FAMILIES.index(f)] += w * np.exp(1j * t) / g
    return out


def units(sums, w):
    z = np.tensordot(sums, np.asarray(w), axes=([1], [0]))
    ph = np.angle(z)
    has = np.abs(z).sum(1) > 0
    d = sums.shape[2]
    u = np.concatenate([np.cos(ph), np.sin(ph)], axis=1) / np.sqrt(d)
    u[~has] = 0
    return u, has


def evaluate(P, MS, QS, w, z_min=2.0, n_surface=10, floor=0.4):
    U, has = units(MS, w)
    Q, qhas = units(QS, w)
    sims_all = Q @ U.T
    surf_all = P["qv"] @ P["mv"].T
    picks = []
    for qi in range(len(Q)):
        if not qhas[qi]:
            picks.append(None)
            continue
        sims, surf = sims_all[qi], surf_all[qi]
        s = sims[has]
        thr = s.mean() + z_min * s.std()
        top = np.argsort(-surf)[:n_surface]
        near = set(top[surf[top] >= floor].tolist())
        best = None
        for i in np.argsort(-sims):
            if sims[i] < thr or not has[i]:
                break
            if i not in near:
                best = int(i)
                break
        picks.append(best)
    return score(picks, P["rows"], P["kind"], P["src"])


def main():
    from fastmem.embedder import default_embedder
    from fastmem.structure import StructureEncoder

    P = prepare()
    emb = default_embedder().encode
    for sharpen, window in itertools.product((1, 3), (1, 2)):
        enc = StructureEncoder(1024, embed=emb, sharpen=sharpen, order_window=window)
        MS, QS = family_sums(enc, P["mf"]), family_sums(enc, P["qf"])
        for w in itertools.product((1.0,), (0.0, 0.6), (0.0, 0.6), (0.0, 1.0, 3.0), (0.0, 0.7), (0.0, 0.5, 1.0, 2.0), (0.0, 0.5, 1.0, 2.0)):
            for z in (2.0, 3.0):
                r = evaluate(P, MS, QS, w, z_min=z)
                print(f"sharpen={sharpen} window={window} w={w} z={z} " + " ".join(f"{k}={v:.3f}" for k, v in r.items()), flush=True)


if __name__ == "__main__":
    main()
