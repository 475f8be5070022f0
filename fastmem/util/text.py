"""Text helpers: validation and the FTS5 query sanitiser (user text never reaches MATCH raw)."""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime, timezone

from ..errors import InvalidInput

__all__ = ["fts_terms", "MAX_TEXT_CHARS", "check_text", "check_str", "check_query", "content_words", "singular",
           "STOPWORDS", "to_epoch", "from_epoch", "is_chatter", "CHATTER_WORDS", "prefix_speaker",
           "strip_label"]

#: Longest memory accepted, in characters. Longer input raises InvalidInput (never truncated):
#: split long documents into passages before storing them.
MAX_TEXT_CHARS = 32_000
_MAX_QUERY_TERMS = 48
_WORD = re.compile(r"\w+", re.UNICODE)

STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have he her
    hers him his how i if in into is it its me my no not of on or our she so than that the
    their them then there these they this to us was we were what when where which who whom why
    will with would you your yours about after before just also very""".split()
)


def check_text(text, what: str = "text") -> str:
    """Validate one memory text: a non-blank str of at most MAX_TEXT_CHARS characters."""
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be str, not {type(text).__name__}")
    if not text.strip():
        raise InvalidInput(f"{what} is empty or whitespace only")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(
            f"{what} has {len(text):,} characters, over the maximum of {MAX_TEXT_CHARS:,}; "
            "split it into passages and store them with remember_many"
        )
    return check_str(text, what)


def check_query(text, what: str = "query") -> str:
    """Validate a query (a turn): a non-blank str of at most MAX_TEXT_CHARS characters
    without unpaired surrogates. Control characters are allowed: a query is never stored and
    never reaches FTS unquoted."""
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be str, not {type(text).__name__}")
    if not text.replace("\x00", " ").strip():
        raise InvalidInput(f"{what} is empty or whitespace only")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(f"{what} has {len(text):,} characters, over the maximum of {MAX_TEXT_CHARS:,}")
    if _SURROGATE.search(text):
        raise InvalidInput(f"{what} contains an unpaired surrogate (not valid Unicode text)")
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_str(s, what: str) -> str:
    """A str that SQLite and the models can take: no NUL character, no unpaired surrogate
    (what some decoders leave for undecodable bytes); raises :class:`InvalidInput`."""
    if not isinstance(s, str):
        raise InvalidInput(f"{what} must be str, not {type(s).__name__}")
    if "\x00" in s:
        raise InvalidInput(f"{what} contains a NUL character")
    if _SURROGATE.search(s):
        raise InvalidInput(f"{what} contains an unpaired surrogate (not valid Unicode text); decode it properly first")
    return s


def words(text: str) -> list[str]:
    """Lower-cased word tokens (Unicode aware, NFKC)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def content_words(text: str) -> list[str]:
    """Words that are not stopwords, in order, de-duplicated."""
    seen: dict[str, None] = {}
    for w in words(text):
        if w not in STOPWORDS and w not in seen:
            seen[w] = None
    return list(seen)


def singular(words) -> list[str]:
    """Each word and, for a plural-looking one ("hints", "queries"), its singular too: a
    crude fold that lets a turn's words meet a statement's lemmas."""
    out = []
    for w in words:
        out.append(w)
        if len(w) > 3 and w.endswith("ies"):
            out.append(w[:-3] + "y")
        elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            out.append(w[:-1])
    return out


def fts_terms(text: str) -> list[str]:
    """The words of a query as FTS5 string literals (``"word"``, ``"`` doubled): content words,
    or every word when there are none; at most 48. Quoted this way, no user character can act
    as FTS syntax (``NEAR(``, ``OR``, ``*``, ``:``, ``-``, parentheses...)."""
    toks = content_words(text) or list(dict.fromkeys(words(text)))
    return ['"' + t.replace('"', '""') + '"' for t in toks[:_MAX_QUERY_TERMS]]


def to_epoch(at, what: str = "at") -> float | None:
    """When something happened, as unix seconds (UTC): from a :class:`datetime` (naive ones
    are taken as UTC) or an ISO 8601 string ("2023-05-08", "2023-05-08T13:56:00+02:00");
    None stays None."""
    if at is None:
        return None
    if isinstance(at, str):
        try:
            at = datetime.fromisoformat(at.strip().replace("Z", "+00:00") if at.strip().endswith("Z") else at.strip())
        except ValueError as exc:
            raise InvalidInput(f"{what} is not an ISO 8601 date or time: {at!r}") from exc
    if not isinstance(at, datetime):
        raise InvalidInput(f"{what} must be a datetime or an ISO 8601 str, not {type(at).__name__}")
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    t = at.timestamp()
    if not math.isfinite(t):
        raise InvalidInput(f"{what} is not a finite time")
    return t


def from_epoch(t: float | None) -> datetime | None:
    """Unix seconds to an aware UTC :class:`datetime` (None stays None)."""
    return None if t is None else datetime.fromtimestamp(t, tz=timezone.utc)


#: Words of acknowledgement and small talk: a turn made only of these (and stop words) says
#: nothing worth recalling ("ok", "Got it, thanks!", "Sounds good.").
CHATTER_WORDS = frozenset(
    """ok okay k kk sure yes yeah yep yup ya no nope nah thanks thank thx ty got great cool nice
    good fine alright right done noted understood sounds perfect awesome lol haha hmm hm hi
    hello hey bye goodbye please welcome np see wow oh ah oops sorry indeed absolutely course
    totally exactly agreed agree true well much lot too go ahead let s ll ve re d m t""".split()
)
_SPEAKER_PREFIX = re.compile(r"^\s*[\w .'-]{1,40}:\s+")


def without_labels(text: str) -> str:
    """``text`` less up to two leading ``Name:`` labels (a role and a speaker, as in a host's
    "User: Caroline: ..."): words of who spoke, not of what was said."""
    for _ in range(2):
        text = _SPEAKER_PREFIX.sub("", text, count=1)
    return text


def is_chatter(text: str) -> bool:
    """Whether ``text`` (after an optional ``Name:`` prefix) holds no word beyond stop words and
    acknowledgements: stored like any turn, but never worth a line of recalled context."""
    body = _SPEAKER_PREFIX.sub("", text, count=1)
    ws = [w.lower() for w in _WORD.findall(body)]
    return all(w in STOPWORDS or w in CHATTER_WORDS for w in ws)


#: "Name: text" at the start of a memory: one to three capitalised words (letters, apostrophes,
#: hyphens, dots), a colon, a space. Times ("10:30"), URLs ("https:") and lower-case labels
#: never match.
_PREFIX = re.compile(r"\s*([A-Z][^\W\d_]*(?:['’.-][^\W\d_]+)*(?: [A-Z][^\W\d_]*(?:['’.-][^\W\d_]+)*){0,2}):\s+\S")
#: Capitalised words that head a line as a label, not as a speaker ("Note: ...").
_LABELS = frozenset("""note notes warning caution todo update updates re subject summary question answer q a tip tips
error errors fyi ps edit important reminder step steps example examples ingredients agenda action actions status
result results problem solution fix bug issue task tasks goal goals plan idea ideas comment comments title date time
location address phone email url link source sources quote definition meaning translation input output
response request reply feedback nb total price cost day week""".split())


def prefix_speaker(text: str) -> str | None:
    """The speaker a transcript-style memory names in front ("Caroline: I went to ..."), or
    None (no such prefix, or a label such as "Note:")."""
    m = _PREFIX.match(text)
    if not m:
        return None
    name = m.group(1)
    first = name.split()[0].casefold()
    if first in _LABELS or first in STOPWORDS:
        return None
    return name


def strip_label(text: str) -> str:
    """A transcript turn's words without its "Name: " label (:func:`prefix_speaker`); any other
    text as it is."""
    m = _PREFIX.match(text)
    if not m or prefix_speaker(text) is None:
        return text
    return text[text.index(":", m.start(1)) + 1 :].lstrip()
