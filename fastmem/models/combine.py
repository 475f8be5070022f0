"""Queries that arrive together are embedded (and parsed) together.

Eight threads that each recall a turn at once would make eight forward passes of one text;
one pass of eight costs about half as much a text (LoCoMo questions on 2 cores: 9.2 ms alone,
4.9 ms as one of eight). :class:`Combiner` gives each caller its own vector while the model
runs each batch once: the first caller runs at once (a lone query waits for nothing); callers
that come while the model is busy queue, and when the pass ends the first of them runs the
whole queue (at most ``max_batch``) as the next pass and hands its neighbours their vectors.
No thread waits on a timer, and each caller's own pass is the first it can join.

A vector embedded in a batch differs from the same text embedded alone in its last bits
(about 4e-8: the products run in other blocks), never in a way a ranking was seen to notice
(``tests/models/test_combine.py``); spaCy parses a turn alike alone and in a batch (704 of
704 LoCoMo questions and turns: the same events and names). The same combiner parses the
turns that recalls from several threads hand the analogy slot (:mod:`fastmem.core.reading`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

__all__ = ["Combiner", "MAX_BATCH"]

#: The most queries one pass embeds.
MAX_BATCH = 16


class _Ask:
    __slots__ = ("text", "vec", "error", "ready", "lead")

    def __init__(self, text: str) -> None:
        self.text = text
        self.vec = None  # the result for ``text``
        self.error: BaseException | None = None
        self.ready = threading.Event()
        self.lead = False


class Combiner:
    """Runs one text per call through a batch function, combining the calls that overlap.

    Parameters
    ----------
    encode : callable
        ``encode(texts) -> results`` in the order of ``texts`` (the embedder's batch path: an
        array of shape ``(len(texts), dim)``; the parser's: a list).
    max_batch : int
        The most texts a pass takes.
    """

    def __init__(self, encode: Callable[[Sequence[str]], Sequence], max_batch: int = MAX_BATCH) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, not {max_batch!r}")
        self._encode = encode
        self.max_batch = max_batch
        self._lock = threading.Lock()
        self._queue: list[_Ask] = []
        self._busy = False
        #: passes run and texts embedded (how much combining happened)
        self.passes = 0
        self.texts = 0

    def __call__(self, text: str):
        """The result for ``text`` (the embedder's: its vector, shape ``(dim,)``)."""
        me = _Ask(text)
        with self._lock:
            self._queue.append(me)
            lead = not self._busy
            self._busy = True
        if not lead:
            me.ready.wait()
            if not me.lead:  # another caller's pass embedded it
                if me.error is not None:
                    raise me.error
                return me.vec
        self._run()
        if me.error is not None:
            raise me.error
        return me.vec

    def _run(self) -> None:
        """One pass over the head of the queue (the caller is in it), then the lead passes on."""
        with self._lock:
            batch = self._queue[: self.max_batch]
            del self._queue[: self.max_batch]
        try:
            vecs = self._encode([a.text for a in batch])
            for a, v in zip(batch, vecs):
                a.vec = v
        except BaseException as e:  # each caller raises what its pass raised
            for a in batch:
                a.error = e
        self.passes += 1
        self.texts += len(batch)
        with self._lock:
            nxt = self._queue[0] if self._queue else None
            if nxt is None:
                self._busy = False
            else:
                nxt.lead = True
        for a in batch:
            a.ready.set()
        if nxt is not None:
            nxt.ready.set()
