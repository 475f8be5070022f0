"""Rank fusion of the recall channels.

Each channel gives ``{memory_id: (rank, score)}`` (rank 1 is best; scores larger-is-better).

* ``rrf``: reciprocal-rank fusion, ``sum_c w_c / (K + rank_c)`` with K = 60, where memories
  with equal channel scores share the best rank of their tie (so a term that every memory
  contains cannot order them arbitrarily).
* ``score`` (relative score fusion): each channel's scores normalised between its best and
  its 50th best (min-max over its own candidates when it has at most 50; see
  :func:`normalised`), then ``sum_c w_c * norm_c``. A channel whose candidates all score alike
  adds the same to each of them and so orders nothing. The fixed depth keeps the head of a
  recall the same whatever ``k`` asks for.
* ``learned``: a linear scorer over each candidate's evidence (every channel's weighted,
  normalised score and rank, the vector channel's distance from its best) and over what the
  memory is (a memory that only asks; the assistant's side of a chat when the turn asks for work),
  fitted listwise (the softmax over a question's candidates, evidence as the target) on the
  development chats, cross-validated across conversations (:func:`learned`;
  ``bench/fit_fusion.py`` refits it).
* ``auto`` (the default): ``learned`` in a store (or scope) of chats with long answers, the
  kind it was fitted on (:data:`AUTO_LONG_SHARE`), ``score`` elsewhere: on conversations
  between people the fit does not carry (``docs/defaults.md``).

``learned`` (and ``auto`` where it applies it) fuses by ``score`` a turn that asks for a list,
an order or a summary, and one channel alone.
The weights are each channel's own
(:attr:`fastmem.recall.channels.spec.ChannelSpec.weight`); a channel without one weighs 1. Why,
with the figures: ``docs/defaults.md``.

**Long memories** (:func:`length_prior`): a text of many words shares a turn's everyday words
by its length alone (a long markdown answer that repeats the request it answered), and the
channels that count shared words (the keyword channel and the context channel that builds on
it: :attr:`~fastmem.recall.channels.spec.ChannelSpec.long_prior`) find it for that. Their
evidence for a memory of ``n`` > :data:`LONG_WORDS` words counts ``(LONG_WORDS / n) **
LONG_POWER``, more when the vector channel (which scores a long memory by its best window,
and is itself unchanged) finds it too.
"""

from __future__ import annotations

import numpy as np

from . import fusion_weights as _fitted

RRF_K = 60.0
#: A memory of more words than this is long (see :func:`length_prior`; about the 99.9th
#: percentile of LoCoMo's conversation turns).
LONG_WORDS = 80
#: How fast a long memory's shared-word evidence falls with its length.
LONG_POWER = 2.0
#: How near the vector channel's best a long memory must be to keep its shared-word evidence
#: (see :func:`length_prior`).
AGREE_POWER = 4.0
#: Relative score fusion normalises a channel's scores between its best and its
#: ``REF_DEPTH``-th best (the smallest candidate pool), so a recall that asks for more hits
#: (a larger pool) scores the head exactly as a small one does.
REF_DEPTH = 50
#: The vector channel's best memory is its clear winner when its cosine stands this far above
#: the second's (on the development chats, such a winner is the evidence 36 times in 37) ...
CLEAR_GAP = 0.15
#: ... and is then fused no lower than this place (see :func:`clear_winner`).
CLEAR_PLACE = 3


def drop_boundary_ties(ch: dict[int, tuple[int, float]], pool: int) -> dict[int, tuple[int, float]]:
    """A channel cut at ``pool`` candidates cannot say which of the memories tied with its last
    score made the cut, so those carry no evidence: drop them (all of them when every
    candidate ties, e.g. a word that every memory contains)."""
    if len(ch) < pool or not ch:
        return ch
    last = max(ch.values(), key=lambda v: v[0])[1]
    return {m: v for m, v in ch.items() if abs(v[1] - last) > 1e-9 * max(1.0, abs(last))}


def _tie_ranks(ch: dict[int, tuple[int, float]]) -> dict[int, int]:
    out: dict[int, int] = {}
    prev_score, prev_rank = None, 0
    for mid, (rank, score) in sorted(ch.items(), key=lambda x: x[1][0]):
        if prev_score is None or abs(score - prev_score) > 1e-9 * max(1.0, abs(score)):
            prev_rank = rank
            prev_score = score
        out[mid] = prev_rank
    return out


def length_prior(words: dict[int, int], meaning: dict[int, float] | None = None) -> dict[int, float]:
    """What a shared-word channel's evidence counts for each long memory (``words``: memory
    id -> its word count; a memory of at most :data:`LONG_WORDS` words counts fully and is
    left out). ``meaning``: the vector channel's normalised scores (:func:`normalised`); a long
    memory that it also finds near its best keeps its shared-word evidence, ``p + (1 - p) *
    v ** AGREE_POWER`` for prior ``p`` and normalised vector score ``v`` (the words it shares
    are then not shared by length alone)."""
    meaning = meaning or {}
    out = {}
    for m, n in words.items():
        if n > LONG_WORDS:
            p = (LONG_WORDS / n) ** LONG_POWER
            out[m] = p + (1.0 - p) * meaning.get(m, 0.0) ** AGREE_POWER
    return out


def rrf(channels: dict[str, dict[int, tuple[int, float]]], weights: dict[str, float],
        prior: dict[str, dict[int, float]] | None = None) -> dict[int, float]:
    """Reciprocal-rank fusion; ``prior``: per channel, a factor for some memories' share
    (:func:`length_prior`), 1 for the rest."""
    fused: dict[int, float] = {}
    for name, ch in channels.items():
        w = weights.get(name, 1.0)
        pr = (prior or {}).get(name) or {}
        for mid, rank in _tie_ranks(ch).items():
            fused[mid] = fused.get(mid, 0.0) + w * pr.get(mid, 1.0) / (RRF_K + rank)
    return fused


def normalised(ch: dict[int, tuple[int, float]], depth: int = REF_DEPTH) -> dict[int, float]:
    """A channel's scores mapped to [0, 1]: 1 for its best, 0 for its ``depth``-th best (its
    worst when it has fewer) and anything below. Min-max over the channel's own candidates
    when it has at most ``depth`` of them."""
    if not ch:
        return {}
    scores = sorted((s for _, s in ch.values()), reverse=True)
    hi, lo = scores[0], scores[min(depth, len(scores)) - 1]
    span = hi - lo
    if span <= 1e-12:
        return {m: 1.0 if s >= lo else 0.0 for m, (_, s) in ch.items()}
    return {m: max(0.0, (s - lo) / span) for m, (_, s) in ch.items()}


def relative_score(channels: dict[str, dict[int, tuple[int, float]]], weights: dict[str, float],
                   prior: dict[str, dict[int, float]] | None = None) -> dict[int, float]:
    """Relative score fusion; ``prior`` as for :func:`rrf`."""
    fused: dict[int, float] = {}
    for name, ch in channels.items():
        if not ch:
            continue
        w = weights.get(name, 1.0)
        pr = (prior or {}).get(name) or {}
        for mid, norm in normalised(ch).items():
            fused[mid] = fused.get(mid, 0.0) + w * norm * pr.get(mid, 1.0)
    return fused


def clear_winner(fused: dict[int, float], vector: dict[int, tuple[int, float]], gap: float | None = None,
                 place: int | None = None) -> dict[int, float]:
    """``fused`` with the sentence model's clear winner kept in the head: when the vector
    channel's best memory stands ``gap`` (:data:`CLEAR_GAP`) or more in cosine above its second,
    it is fused no lower than the ``place``-th (:data:`CLEAR_PLACE`) best score, so words shared
    by chance elsewhere (a request's "give me") cannot push it out of the hits. Changes ``fused`` in place and returns it."""
    gap = CLEAR_GAP if gap is None else gap
    place = CLEAR_PLACE if place is None else place
    if len(vector) < 2 or not fused:
        return fused
    (best, (_, s1)), (_, (_, s2)) = sorted(vector.items(), key=lambda x: x[1][0])[:2]
    if s1 - s2 < gap or best not in fused:
        return fused
    head = sorted(fused.values(), reverse=True)
    floor = head[min(place, len(head)) - 1]
    if fused[best] < floor:
        fused[best] = floor * (1.0 + 1e-9) + 1e-12
    return fused


#: The channels the learned fusion was fitted with, in the order of its features; another
#: channel counts its weighted normalised score at the mean of theirs.
LEARNED_CHANNELS = ("graph", "keyword", "vector", "context", "speaker")
#: The learned fusion's features, in order (see :func:`learned_features`).
LEARNED_FEATURES = (tuple(f"{c}_score" for c in LEARNED_CHANNELS) + tuple(f"{c}_rank" for c in LEARNED_CHANNELS)
                    + ("vector_gap", "long", "channels", "reply_work", "only_asks"))
#: What a candidate the vector channel did not return counts as its cosine below the best.
ABSENT_GAP = 0.6
#: The rank features are ``RANK_K / (RANK_K + rank)``.
RANK_K = 5.0


def learned_features(channels: dict[str, dict[int, tuple[int, float]]], weights: dict[str, float],
                     prior: dict[str, dict[int, float]] | None, rows: dict[int, tuple[bool, bool]],
                     work: bool) -> tuple[list[int], np.ndarray]:
    """``(ids, X)``: the candidates of every channel and their features (:data:`LEARNED_FEATURES`),
    one row each: each fitted channel's weighted, normalised score (times its length prior) and
    ``RANK_K / (RANK_K + rank)``, the vector channel's cosine below its best, how far the length
    prior cut the memory's shared-word evidence, how many channels found it, whether it is the
    assistant's side of a chat *and* the turn asks for work, whether it only asks. A channel
    finds a memory when it scores it above its :data:`REF_DEPTH`-th best (:func:`normalised`
    above 0), whatever its pool: the head of a recall does not depend on ``k``. A memory the
    vector channel does not find is :data:`ABSENT_GAP` below its best. ``rows``: memory id ->
    (the assistant's side, only asks); ``work``: the turn asks for work
    (:func:`fastmem.recall.arrange.asks_for_work`)."""
    prior = prior or {}
    ids = sorted(set().union(*channels.values())) if channels else []
    X = np.zeros((len(ids), len(LEARNED_FEATURES)))
    if not ids:
        return ids, X
    at = {m: i for i, m in enumerate(ids)}
    nc = len(LEARNED_CHANNELS)
    found: dict[int, int] = {}
    gap = dict.fromkeys(ids, ABSENT_GAP)
    best = max((s for _, s in (channels.get("vector") or {}).values()), default=0.0)
    for name, ch in channels.items():
        if not ch:
            continue
        w, pr = weights.get(name, 1.0), prior.get(name) or {}
        col = LEARNED_CHANNELS.index(name) if name in LEARNED_CHANNELS else None
        for m, v in normalised(ch).items():
            if v <= 0.0:
                continue
            found[m] = found.get(m, 0) + 1
            if col is None:  # a channel the fit never saw: at the fitted channels' mean coefficient
                X[at[m], 0] += w * v * pr.get(m, 1.0) * _OTHER_SCALE
                continue
            X[at[m], col] = w * v * pr.get(m, 1.0)
            X[at[m], nc + col] = RANK_K / (RANK_K + ch[m][0])
            if name == "vector":
                gap[m] = best - ch[m][1]
    for m, i in at.items():
        X[i, 2 * nc] = gap[m]
        if m in found:
            X[i, 2 * nc + 1] = 1.0 - min((p.get(m, 1.0) for p in prior.values()), default=1.0)
            X[i, 2 * nc + 2] = found[m]
        reply, asks = rows.get(m, (False, False))
        X[i, 2 * nc + 3:] = (reply and work, asks)
    return ids, X


_COEF = np.asarray(_fitted.COEF, float)
_OTHER_SCALE = float(_COEF[: len(LEARNED_CHANNELS)].mean() / _COEF[0]) if _COEF[0] else 1.0
#: The learned score is divided by the mean of the fitted channel-score coefficients, so that it
#: stands on the ``score`` fusion's scale (where each channel's normalised score counts once)
#: and a use weight moves a memory as far as it does there.
_SCALE = max(float(_COEF[: len(LEARNED_CHANNELS)].mean()), 1e-9)


def learned(channels: dict[str, dict[int, tuple[int, float]]], weights: dict[str, float],
            prior: dict[str, dict[int, float]] | None = None, *, rows: dict[int, tuple[bool, bool]] | None = None,
            work: bool = False) -> dict[int, float]:
    """Learned fusion: ``softplus(s / c)`` of each candidate's linear score ``s = X @ COEF``
    (:func:`learned_features`; coefficients in :mod:`fastmem.recall.fusion_weights`; ``c`` the
    mean of the channel-score coefficients): the ranking of ``s``, positive, and for a
    candidate with evidence about ``s / c``, a sum on the ``score`` fusion's scale, so that use
    weights move a memory as far as they do there. ``rows`` as there (the
    pipeline reads them from the store; a memory missing from it counts as the user's).
    With fewer than two channels, the ``score`` fusion: ``recall(channels=[name])`` is that
    channel's own order."""
    if sum(bool(ch) for ch in channels.values()) < 2:  # one channel asked for: its own order
        return relative_score(channels, weights, prior)
    ids, X = learned_features(channels, weights, prior, rows or {}, work)
    if not ids:
        return {}
    s = np.logaddexp(0.0, X @ _COEF / _SCALE)  # softplus, on the score fusion's scale
    return {m: float(v) for m, v in zip(ids, s)}


#: The learned fusion reads what each candidate is (its length, speaker, whether it only asks).
learned.reads_rows = True

#: ``auto`` fuses by ``learned`` in a store (or scope) of chats with long answers: at least
#: :data:`fastmem.derived.windows.MIN_LONG` long memories (longer than the model's window), and
#: at least this share of its memories.
AUTO_LONG_SHARE = 0.05


def auto(channels: dict[str, dict[int, tuple[int, float]]], weights: dict[str, float],
         prior: dict[str, dict[int, float]] | None = None, *, rows: dict[int, tuple[bool, bool]] | None = None,
         work: bool = False, long_answers: bool = False) -> dict[int, float]:
    """The default: :func:`learned` where the store holds chats with long answers
    (``long_answers``, which the pipeline judges by :data:`AUTO_LONG_SHARE`: the kind of store
    it was fitted on), :func:`relative_score` elsewhere (conversations between people, notes:
    there the fit did not carry; ``docs/defaults.md``)."""
    if long_answers:
        return learned(channels, weights, prior, rows=rows, work=work)
    return relative_score(channels, weights, prior)


auto.reads_rows = True
#: ``auto`` is told whether the store holds chats with long answers.
auto.reads_store = True

FUSIONS = {"rrf": rrf, "score": relative_score, "learned": learned, "auto": auto}
#: What ``Memory(fusion=...)`` uses unless told.
DEFAULT_FUSION = "auto"
