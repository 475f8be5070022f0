"""``mem.analogy``: the analogy slot, explored and tuned (see :mod:`fastmem.analogy`). Every
recall fills ``Recall.analogy`` by itself; this part is for looking closer."""

from __future__ import annotations

from ..analogy.slot import AnalogySettings
from ..errors import InvalidInput
from ..results import Analogy
from .base import Part

__all__ = ["Slot"]


class Slot(Part):
    """The analogy slot: its settings, what it reads in a memory or a text, and exploration."""

    __slots__ = ()

    @property
    def settings(self) -> AnalogySettings:
        """The slot's settings (:class:`fastmem.AnalogySettings`), changeable live:
        ``mem.analogy.settings.surface_rule = "recall"`` (checked on assignment), or a whole new
        :class:`~fastmem.AnalogySettings` assigned."""
        return self._e.slot.settings

    @settings.setter
    def settings(self, value: AnalogySettings) -> None:
        if not isinstance(value, AnalogySettings):
            raise InvalidInput(f"settings must be an AnalogySettings, not {type(value).__name__}")
        self._e.slot.settings = value.checked()

    @property
    def dim(self) -> int:
        """The dimension of the structural codes (fixed per store)."""
        return self._e.hrr_dim

    def explore(self, text: str, k: int = 5, *, scope: str | None = None, z_min: float = 0.0) -> list[Analogy]:
        """Exploration: the ``k`` memories structurally closest to ``text`` (z >= ``z_min``),
        with their surface similarity and alignment, without the surface condition or session
        rules.

        The z is the slot's: the exact alignment with ``text`` put on the store's score scale,
        in standard deviations over the whole store (``why["code_z"]`` is the z of the code
        score that pre-selects the ``4 k + 16`` rows aligned). Ordered by that z, highest
        first; ``Analogy.score`` is the z."""
        return self._read.analogies(text, k, scope=scope, z_min=z_min)

    def events(self, memory_id: int) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """The stored narrative events of a memory (what its structural code encodes):
        ``(verb, subject fillers, object fillers)`` in text order."""
        return self._read.events(memory_id)

    def events_in(self, text: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """The narrative events the extractor reads in ``text`` (what a write would store as its
        structure, or what the analogy slot reads in a turn), without storing anything:
        ``(verb, subject fillers, object fillers)`` in story order; empty without an extractor."""
        return self._read.events_in(text)

    def idf(self, word: str) -> float:
        """Inverse document frequency of a verb or filler among the memories with events:
        ``ln(1 + N / (df + 0.5))`` (always positive; rare words weigh more)."""
        return self._read.idf(word)

    def rebuild(self, *, reparse: bool = False, progress: bool | None = None) -> int:
        """Recompute every memory's structural code and the word counts from its events.

        Parameters
        ----------
        reparse : bool
            Re-extract events from every memory's text with the current extractor (also for
            memories whose facts were given as ``triples=``: their text is parsed too), after
            deriving again the memories whose derivation failed. Default: use stored events,
            or derive them from stored facts when a memory has none.

        Returns the number of memories that have a structural code afterwards.
        """
        return self._e.rebuild_structure(reparse, progress)
