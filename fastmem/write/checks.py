"""Argument checks of the write verbs: everything is validated before anything is written
(:class:`~fastmem.errors.InvalidInput` names the first bad argument)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..errors import InvalidInput
from ..reader import standing as S
from ..reader.canon import normalise_type
from ..reader.extract import Extractor, Triple, lemmatiser
from ..util.text import check_str, check_text, to_epoch

__all__ = ["check_batch", "check_speaker", "check_speakers", "check_kinds", "kinds_for", "encode_meta",
           "encode_metas", "MAX_SPEAKER_CHARS"]


def _check_triples(ts, i: int, lemmatise) -> list[Triple] | None:
    if ts is None:
        return None
    if isinstance(ts, (str, bytes, bytearray)) or not isinstance(ts, Sequence):
        raise InvalidInput(f"triples[{i}] must be a list of triples or None")
    out = []
    for t in ts:
        if isinstance(t, Triple):
            out.append(t)
            continue
        if isinstance(t, (str, bytes, bytearray)) or not isinstance(t, Sequence) or len(t) not in (3, 5):
            raise InvalidInput(f"triples[{i}]: each triple is (subject, relation, object[, subject_type, object_type])")
        if not all(isinstance(x, str) and x.strip() for x in t[:3]):
            raise InvalidInput(f"triples[{i}]: subject, relation and object must be non-blank str")
        for x in t[:5]:
            if x is not None:
                check_str(x, f"triples[{i}]")
        if not all(x is None or isinstance(x, str) for x in t[3:5]):
            raise InvalidInput(f"triples[{i}]: types must be str or None")
        out.append(Triple(t[0], t[1], t[2], *(normalise_type(x) for x in t[3:5])))
    return [Triple(t.subject, lemmatise(t.relation.strip()), t.object, t.subject_type, t.object_type) for t in out]


def check_speaker(speaker, what: str = "speaker") -> str | None:
    """A speaker as stored: None, or a non-blank name of at most :data:`MAX_SPEAKER_CHARS`
    characters (surrounding white space removed); raises :class:`InvalidInput`."""
    if speaker is None:
        return None
    check_str(speaker, what)
    name = speaker.strip()
    if not name:
        raise InvalidInput(f"{what} is blank (give a name or None)")
    if len(name) > MAX_SPEAKER_CHARS:
        raise InvalidInput(f"{what} has {len(name)} characters, more than {MAX_SPEAKER_CHARS}")
    return name


#: The longest speaker name ``remember`` takes.
MAX_SPEAKER_CHARS = 200


def check_speakers(speaker, n: int) -> list[str | None]:
    """``remember_many``'s ``speaker``: one value for every text, or a list of one per text."""
    if isinstance(speaker, (list, tuple)):
        if len(speaker) != n:
            raise InvalidInput(f"speaker has {len(speaker)} entries for {n} texts")
        return [check_speaker(s, f"speaker[{i}]") for i, s in enumerate(speaker)]
    return [check_speaker(speaker)] * n


def check_kinds(kind, n: int) -> list[str | None] | None:
    """``remember_many``'s ``kind``: None (detect), one of :data:`fastmem.reader.standing.KINDS` for
    every text, or a list of one (or None) per text. None when nothing is given."""
    def one(k, what):
        if k is not None and k not in S.KINDS:
            raise InvalidInput(f"{what} must be None or one of {', '.join(S.KINDS)}; got {k!r}")
        return k
    if isinstance(kind, (list, tuple)):
        if len(kind) != n:
            raise InvalidInput(f"kind has {len(kind)} entries for {n} texts")
        got = [one(k, f"kind[{i}]") for i, k in enumerate(kind)]
        return got if any(k is not None for k in got) else None
    return None if one(kind, "kind") is None else [kind] * n


def kinds_for(kinds: list[str | None] | None, speakers: list[str | None]) -> list[str | None] | None:
    """A host's kinds, with :data:`fastmem.reader.standing.SKIP` where none was given and the speaker
    is the assistant (:data:`fastmem.reader.standing.ASSISTANT_SPEAKERS`)."""
    skip = [sp is not None and sp.strip().lower() in S.ASSISTANT_SPEAKERS for sp in speakers]
    if not any(skip):
        return kinds
    base = kinds if kinds is not None else [None] * len(speakers)
    return [S.SKIP if k is None and sk else k for k, sk in zip(base, skip)]


def check_batch(texts, *, scope, meta, triples, extractor: Extractor | None, source=None,
                at=None) -> tuple[list, str, list[float | None]]:
    """Validate a ``remember_many`` call; returns the caller's triples per text (None:
    extract), the meta as JSON and when each text happened (unix seconds or None).
    Raises :class:`InvalidInput` before anything is written (``speaker``: see
    :func:`check_speakers`)."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidInput("texts must be a sequence of str (use remember() for one text)")
    for i, t in enumerate(texts):
        check_text(t, f"texts[{i}]")
    check_str(scope, "scope")
    if source is not None:
        check_str(source, "source")
    if isinstance(at, (list, tuple)):
        if len(at) != len(texts):
            raise InvalidInput(f"at has {len(at)} entries for {len(texts)} texts")
        when = [to_epoch(a, f"at[{i}]") for i, a in enumerate(at)]
    else:
        when = [to_epoch(at)] * len(texts)
    if triples is not None:
        if isinstance(triples, str) or not isinstance(triples, Sequence):
            raise InvalidInput("triples must be a list (one entry per text) or None")
        if len(triples) != len(texts):
            raise InvalidInput(f"triples has {len(triples)} entries for {len(texts)} texts")
    lem = lemmatiser(extractor) if triples is not None and any(t is not None for t in triples) else None
    given = [None if triples is None else _check_triples(triples[i], i, lem) for i in range(len(texts))]
    return given, encode_meta(meta), when


def encode_meta(meta) -> str:
    """Metadata as stored: a JSON object; raises :class:`InvalidInput` for anything else."""
    if meta is not None and not isinstance(meta, Mapping):
        raise InvalidInput(f"meta must be a mapping (a dict) or None, not {type(meta).__name__}")
    try:
        return json.dumps(dict(meta or {}))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"meta must be a JSON-serialisable mapping: {exc}") from exc


def encode_metas(meta, n: int) -> str | list[str]:
    """``meta`` for ``n`` memories as stored: one mapping (or None) for all, or one mapping or
    JSON object text per memory."""
    if meta is None or isinstance(meta, dict) or (not isinstance(meta, (list, tuple)) and hasattr(meta, "keys")):
        return encode_meta(meta)
    if not isinstance(meta, (list, tuple)) or len(meta) != n:
        raise InvalidInput(f"meta must be a mapping, or one mapping (or JSON object text) per memory ({n})")
    out = []
    for m in meta:
        if isinstance(m, str):
            try:
                ok = isinstance(json.loads(m), dict)
            except ValueError:
                ok = False
            if not ok:
                raise InvalidInput(f"meta text must be a JSON object, got {m[:80]!r}")
            out.append(m)
        else:
            out.append(encode_meta(m))
    return out
