"""No text can stop the store: every derived part of a memory is computed in a guard.

A write derives each memory's parts (its facts, events and standing statement from one read
of the text; its facts resolved against the store and written to the graph; its structural
code) one memory at a time *in effect*: a batch is read at once, and only when the batch
fails is it read again text by text, so the guard costs nothing while nothing fails. A part
that fails for one memory is left out of that memory alone; the memory is stored with what
could be derived (its text, keyword row and vector at least), the failure is recorded in
``derive_failures`` (:mod:`fastmem.storage.failures`: the part, the exception's name and
message, :data:`READER`) and logged once at warning level, without a traceback; the other
memories of the batch are written as usual.
"""

from __future__ import annotations

import logging
from importlib import metadata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..reader.extract import EVENTS_VERSION, analyse_texts, parse_turns
from ..storage.store import FATAL

__all__ = ["READER", "Failure", "Failures", "caught", "analyse", "turns", "turns_read", "each", "warn", "PART_READING", "PART_FACTS",
           "PART_STRUCTURE", "PART_ALL", "FATAL"]

logger = logging.getLogger("fastmem")

def _version() -> str:
    try:
        return metadata.version("fastmem")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


#: The reader's version a failure is recorded with (a later fastmem may read the text).
READER = f"fastmem {_version()}, events {EVENTS_VERSION}"

#: The parts a failure names: the read of the text (facts, events, standing statement), the
#: facts' resolution and graph write, the structural code; ``"all"``: nothing was derived, not
#: even the vector (a pending memory whose derivation failed alone: its text and keyword row).
PART_READING, PART_FACTS, PART_STRUCTURE, PART_ALL = "reading", "facts", "structure", "all"

#: Characters of an exception's message kept in the record.
MESSAGE_CHARS = 500


@dataclass(frozen=True)
class Failure:
    """One part of one memory that could not be derived."""

    part: str
    error: str
    message: str
    reader: str = READER


def caught(part: str, exc: BaseException) -> Failure:
    """The record of ``exc`` raised while deriving ``part``."""
    return Failure(part, type(exc).__name__, str(exc)[:MESSAGE_CHARS])


class Failures(dict):
    """Failures by key (a text's position in a batch, or a memory id): ``{key: [Failure, ...]}``."""

    def add(self, key, part: str, exc: BaseException) -> None:
        self.setdefault(key, []).append(caught(part, exc))

    def rows(self, ids: Sequence[int] | None = None) -> list[tuple[int, str, str, str, str]]:
        """Rows for :func:`fastmem.storage.failures.record`: keys are positions into ``ids``
        (or memory ids themselves when ``ids`` is None)."""
        return [(int(k if ids is None else ids[k]), f.part, f.error, f.message, f.reader)
                for k, fs in sorted(self.items()) for f in fs]

    def shifted(self, keep: Sequence[int]) -> Failures:
        """The failures of positions ``keep``, renumbered 0, 1, ... in that order."""
        where = {old: new for new, old in enumerate(keep)}
        return Failures({where[k]: v for k, v in self.items() if k in where})


def analyse(extractor, texts: Sequence[str]) -> tuple[list, Failures]:
    """:func:`fastmem.reader.extract.analyse_texts`, guarded: ``(facts, events, standing, plot)``
    per text and the failures by position. The batch is read at once; when that raises, each
    text is read alone, and a text that raises alone gets no facts, events, statement or plot."""
    failures = Failures()
    try:
        return analyse_texts(extractor, texts), failures
    except FATAL:
        raise
    except Exception:  # one text of the batch, or the extractor itself: find out which texts
        pass
    out = []
    for i, text in enumerate(texts):
        try:
            out.append(analyse_texts(extractor, [text])[0])
        except FATAL:
            raise
        except Exception as exc:
            failures.add(i, PART_READING, exc)
            out.append(([], [], None, None))
    return out, failures


def turns(extractor, texts: Sequence[str]) -> list:
    """:func:`fastmem.reader.extract.parse_turns`, guarded: a turn's ``(events, names, plot)``, or the
    exception its own read raised (the recall's slot then stays silent and says why)."""
    try:
        return parse_turns(extractor, texts)
    except FATAL:
        raise
    except Exception:
        pass
    out: list = []
    for text in texts:
        try:
            out.append(parse_turns(extractor, [text])[0])
        except FATAL:
            raise
        except Exception as exc:
            out.append(exc)
    return out


def turns_read(extractor, texts: Sequence[str]) -> list:
    """:func:`turns`, with a turn that cannot be read as ``([], (), None)`` (nothing read)."""
    return [t if isinstance(t, tuple) else ([], (), None) for t in turns(extractor, texts)]


def each(keys: Sequence, run: Callable[[Sequence], None], one: Callable[[object], None], failures: Failures,
         part: str, db) -> None:
    """Run ``run(keys)`` for a batch in a savepoint of ``db`` (an apsw connection inside the
    caller's transaction); when it raises, roll it back and run ``one(key)`` for each key in a
    savepoint of its own, recording under ``part`` the keys whose own run raises."""
    try:
        with db:
            run(keys)
        return
    except FATAL:
        raise
    except Exception:
        pass
    for key in keys:
        try:
            with db:
                one(key)
        except FATAL:
            raise
        except Exception as exc:
            failures.add(key, part, exc)


#: What a memory lacks when a part failed, in words.
LACKS = {PART_READING: "facts, events, plot and standing statement", PART_FACTS: "facts",
         PART_STRUCTURE: "structural code", PART_ALL: "vector, facts and code"}


def warn(failures: Failures, total: int) -> None:
    """One warning line for the failures of a batch of ``total`` memories (no traceback)."""
    if not failures:
        return
    first = next(f for fs in failures.values() for f in fs)
    lacks = ", ".join(dict.fromkeys(LACKS.get(f.part, f.part) for fs in failures.values() for f in fs))
    logger.warning("fastmem: %d of %d memories stored without their %s (%s: %s); check() lists them, "
                   "derive_pending() reads them again", len(failures), total, lacks, first.error,
                   first.message[:200])
