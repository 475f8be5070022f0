"""The channel registry: what every recall channel declares about itself, in one place.

A channel is one module under :mod:`fastmem.recall.channels` that registers one
:class:`ChannelSpec` with :func:`channel`: how it runs, whether it is derived (reads the other
channels' results), its fusion weight, what it adds to ``Hit.why``, and the few facts the
pipeline needs to treat it right. Every list of channel names (what ``recall(channels=...)``
accepts, the fusion weights, the derived channels, the channels that need no model) is read
from :data:`CHANNELS`, never written out by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Channel", "ChannelSpec", "TurnQuery", "CHANNELS", "channel", "names", "weights"]

#: What a channel returns: ``{memory id: (rank, score)}``, rank 1 best, scores larger-is-better.
Channel = dict[int, tuple[int, float]]


class TurnQuery:
    """What a recall channel sees of the turn: the text, its embedding (or None), how many
    candidates to fetch (``fetch``: the fusion pool plus room for excluded ids) and to keep
    (``pool``), the scope and its members (None: no filter), the ids the recall leaves out
    (``exclude``: a channel that ranks by the store's statistics ranks as if they were not
    stored; the pipeline removes them from every channel's results), the channels found so far
    (``found``, for the derived ones), and what the base channels leave for others: the
    vector channel's neighbour ``labels`` (the keyword channel scores them too; the slot reads
    them) and the graph channel's matched ``entities`` (shown in ``why``)."""

    __slots__ = ("query", "vec", "fetch", "pool", "scope", "members", "found", "labels", "entities", "filtered",
                 "exclude")

    def __init__(self, query: str, vec, fetch: int, pool: int, scope: str | None, members,
                 exclude: frozenset[int] = frozenset()) -> None:
        self.query, self.vec, self.fetch, self.pool, self.scope, self.members = query, vec, fetch, pool, scope, members
        self.exclude = exclude
        self.found: dict[str, Channel] = {}
        self.labels = np.zeros(0, np.int64)
        self.entities: list[str] = []
        self.filtered = False


@dataclass(frozen=True)
class ChannelSpec:
    """A registered recall channel.

    Attributes
    ----------
    name : str
        What ``recall(channels=...)`` accepts and the channel's key in ``Hit.why``.
    run : callable
        ``run(pipeline, turn) -> Channel`` (``turn`` a :class:`TurnQuery`; the channel's own
        state, made by ``state``, is ``pipeline.state[name]``).
    derived : bool
        It reads the other channels' results (``turn.found``, excluded ids removed) and runs
        after every base channel.
    also : tuple of str
        When a base channel runs although not asked for: its results feed a derived channel
        (``"derived"``) or the analogy slot (``"slot"``).
    weight : float
        Its weight in fusion (:mod:`fastmem.recall.fusion`).
    explain : callable, optional
        ``explain(turn) -> dict``: what it adds to the ``why`` entry of each hit it found (the
        graph channel: the entities the turn named).
    state : callable, optional
        ``state(db) -> object``: the channel's caches for one store, kept by the pipeline;
        ``reset()``, when the object has one, is called when another process committed or the
        graph changed.
    cut_ties : bool
        Its results are cut at the pool with ties: the memories tied with the last score
        carry no evidence and are dropped before fusion.
    needs_vector : bool
        It runs only when the turn was embedded.
    needs_model : bool
        It needs the embedding model, itself or through the channels it reads.
    long_prior : bool
        It finds memories by the words they share with the turn, which a long text shares by
        its length alone: its evidence for a long memory is scaled by
        :func:`fastmem.recall.fusion.length_prior`.
    surfaces : bool
        It can bring a memory to a recall by itself (False for a channel that only rescores
        the others' finds): the usage ledger names it as what surfaced a hit.
    """

    name: str
    run: Callable[[Any, TurnQuery], Channel]
    derived: bool = False
    also: tuple[str, ...] = ()
    weight: float = 1.0
    explain: Callable[[TurnQuery], dict] | None = None
    state: Callable[[Any], Any] | None = None
    cut_ties: bool = True
    needs_vector: bool = False
    needs_model: bool = False
    surfaces: bool = True
    long_prior: bool = False

    def wanted(self, use: frozenset[str], turn: TurnQuery, needs: dict[str, bool]) -> bool:
        """Whether it runs for this turn: asked for, or feeding what was (see ``also``)."""
        if self.needs_vector and turn.vec is None:
            return False
        return self.name in use or any(needs[a] for a in self.also)


#: The recall channels by name, in the order they run: the base channels in the order they were
#: registered, then the derived ones.
CHANNELS: dict[str, ChannelSpec] = {}


def channel(name: str, **declared):
    """Register a recall channel: decorates ``run(pipeline, turn) -> Channel``; ``declared``
    are :class:`ChannelSpec`'s other fields (keywords)."""
    def register(fn):
        CHANNELS[name] = ChannelSpec(name, fn, **declared)
        ordered = sorted(CHANNELS.values(), key=lambda s: s.derived)  # stable: base first
        CHANNELS.clear()
        CHANNELS.update((s.name, s) for s in ordered)
        return fn
    return register


def names(*, model_free: bool = False) -> tuple[str, ...]:
    """The registered channels in the order they run; ``model_free``: only those that need no
    embedding model (what a host can run while the model loads)."""
    return tuple(n for n, s in CHANNELS.items() if not (model_free and s.needs_model))


def weights() -> dict[str, float]:
    """Every registered channel's fusion weight."""
    return {n: s.weight for n, s in CHANNELS.items()}
