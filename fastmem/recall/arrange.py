"""How a recall's hits are arranged once ranked: spread over near-duplicates for a question
that asks for a list or an order, and in time order on request.

A question such as "in what order did I bring up X, Y and Z?" or "what activities has
Melanie done?" needs every relevant memory, not the five best phrasings of one: for those
(:func:`listy`) the fused list is re-ranked by maximal marginal relevance (:func:`spread`),
each next hit the one whose fused score, less :data:`MMR_REDUNDANCY` times its highest
embedding cosine to a hit already chosen, is best. ``recall(order="time")`` then returns
the chosen hits oldest first (memories without a time last, by rank).

**Questions are not answers** (:func:`answers_first`): a memory that only asks (every
sentence a question, an exclamation beside it aside: "What is the name of Anna's cat?", "Wow,
what an experience! How did it make you feel?") is no evidence for a turn that asks
the same; the turn that answered it is. Such a memory gives its place to the next memory of its
source when that one states something, and falls to :data:`QUESTION_WEIGHT` of its score.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..util.text import prefix_speaker, strip_label, without_labels

__all__ = ["ORDERS", "MMR_REDUNDANCY", "SPREAD_POOL", "QUESTION_WEIGHT", "REPLY_WEIGHT", "REPLY_SPEAKERS", "listy",
           "spread", "by_time", "only_asks", "answers_first", "own_words", "asker_first", "asks_order",
           "lists_topics"]

#: What ``recall(order=...)`` accepts: "rank" (best first, the default), "time" (oldest first)
#: or "auto" (oldest first when the turn asks in what order things were said: :func:`asks_order`).
ORDERS = ("rank", "time", "auto")
#: The weight of a candidate's similarity to the hits already chosen (against its fused score,
#: both on the scale of the best candidate).
MMR_REDUNDANCY = 0.5
#: Candidates re-ranked, as a multiple of ``k``.
SPREAD_POOL = 3

#: What a memory that only asks keeps of its fused score (the answer that followed it takes
#: its place).
QUESTION_WEIGHT = 0.5
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
#: How a question opens: a question word or an auxiliary before its subject ("What is ...",
#: "Did you ...", "Can I ..."); "I keep reading about GraphQL, is it worth it?" says something.
_ASKS = re.compile(r"^(?:(?:so|and|but|hey|ok|okay|oh|well|also|btw)[,\s]+)*(?:what|who|whom|whose|where|when|why|"
                   r"how|which|do|does|did|is|are|was|were|can|could|would|will|should|shall|may|might|have|has|"
                   r"had|am)\b", re.I)


#: A request for new work rather than a question about what was said: an imperative ("Make me a
#: training plan", "Could you write tests for ..."), advice asked of the assistant ("What should I
#: use for ...", "Which database should the app use?", "How would you build ..."), a judgement ("Is
#: it safe to ...", "... quick enough?") or a choice ("Redis or Memcached for the cache?").
_REQUEST = re.compile(
    r"^(?:(?:so|and|but|hey|hi|ok|okay|oh|well|also|btw|now|next|quick question)[,:\s]+)*(?:please[,\s]+)?"
    r"(?:(?:can|could|would|will) you (?:please )?|i (?:need|want|'d like) you to |help me )?"
    r"(?:give|make|write|rewrite|suggest|recommend|plan|draft|set up|create|build|find|show|explain|plot|draw|"
    r"generate|compose|prepare|design|outline|translate|fix|refactor|convert|book|pick|choose|propose|sketch|"
    r"put together|come up with|schedule|add|update|rename|implement|optimi[sz]e|speed up|clean up|tidy|migrate|"
    r"deploy|document|organi[sz]e|format|restructure|review|check)\b"
    r"|\b(?:should|would|could|can) (?:i|we|you)\b|\bshould (?:the|my|our|this|it|these|those)\b|\bdo i need\b"
    r"|\bwould help\b|^how long (?:should|will|would)\b|^what(?:'s| is) the (?:command|way|best way) to\b"
    r"|^(?:is|are) (?:it|the|this|that|my|our|these|those)\b.*\b(?:ok|okay|safe|fine|enough|a good idea)\b"
    r"|^[\w .+#-]{1,40} or [\w .+#-]{1,40} for\b|^i need (?:a|an|some)\b", re.I)


def asks_for_work(query: str) -> bool:
    """Whether a turn asks for something new to be done ("Make me a weekly training plan for a
    10k", "How should I get from Paris to Amsterdam?") rather than about what was said: the
    context channel's credit to the replies of earlier questions is then left out (the user's
    own statements and the sentence model's neighbours are what such a turn needs)."""
    first = _SENTENCE.findall(strip_label(query).strip(" \t\"'(*-"))
    return any(_REQUEST.search(p.strip()) for p in first[-2:])  # the ask ends a turn: "Here's my decorator, can you ..."


#: An exclamation that names nothing new: an interjection, then at most "what a ...", "how ...",
#: "so ..." or "such a ..." and a few words ("Wow, what an experience!", "Oh no!", "Aww, how sweet!").
_EXCLAIMS = re.compile(r"^(?:(?:wow|woah|whoa|oh|ooh|ah|aw+|oops|omg|yay|gosh|geez|yikes|ouch|hey|hi|hello|haha|lol|"
                       r"no|yes|yeah|man|dang)\b[\s,]*)+(?:(?:what an?|how|so|such an?)\s+[\w' -]{1,30})?!+$", re.I)


def only_asks(text: str, exclaims: bool = False) -> bool:
    """Whether a memory's text (its role and speaker labels aside) is questions only: every sentence ends
    with a question mark and opens as a question does. ``exclaims``: an exclamation beside the
    questions (:data:`_EXCLAIMS`: "Wow, what an experience! How did it make you feel?") says
    nothing either."""
    parts = [p.strip(" \t\"'()*-") for p in _SENTENCE.findall(without_labels(text))]  # "Assistant: Mel: ..."
    parts = [p for p in parts if p]
    if exclaims:
        parts = [p for p in parts if not _EXCLAIMS.match(p)] if any(p.endswith("?") for p in parts) else []
    return bool(parts) and all(p.endswith("?") and _ASKS.match(p) for p in parts)


def says_something(text: str) -> bool:
    """Whether a memory's text states anything: a sentence that is not a question
    ("Sorry, remind me?" and "I don't know, where?" do not answer)."""
    parts = (p.strip(" \t\"'()*-") for p in _SENTENCE.findall(strip_label(text)))
    return any(p and not p.endswith("?") for p in parts)


def answers_first(db, ranked: list[tuple[int, float]], depth: int, *, scope: str | None = None,
                  exclude: frozenset[int] = frozenset()) -> list[tuple[int, float]]:
    """``ranked`` (``(id, fused score)``, best first) with every memory among the first
    ``depth`` that only asks (:func:`only_asks`) at :data:`QUESTION_WEIGHT` of its score, and
    the memory that answered it (the next of its source, in ``scope`` when given, when it
    :func:`says_something` and is not in ``exclude``) at least at the question's score."""
    top = ranked[:depth]
    if not top:
        return ranked
    rows = {mid: (text, src) for mid, text, src in db.execute(
        "SELECT id, text, source FROM memories WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps([m for m, _ in top]),))}
    asks = [m for m, _ in top if m in rows and only_asks(rows[m][0], exclaims=True)]
    if not asks:
        return ranked
    score = dict(ranked)
    for q in asks:
        src = rows[q][1]
        nxt = None if src is None else db.execute(
            "SELECT id, text, scope FROM memories WHERE source=? AND id>? ORDER BY id LIMIT 1", (src, q)).fetchone()
        if nxt is not None and nxt[0] not in exclude and (scope is None or nxt[2] == scope) and says_something(nxt[1]):
            score[nxt[0]] = max(score.get(nxt[0], 0.0), score[q])
        score[q] = score[q] * QUESTION_WEIGHT
    return sorted(score.items(), key=lambda x: (-x[1], -x[0]))


_LISTY = re.compile(
    r"\b(in what order|what order|which order|order did|in order|list|all (?:the|of)|every|each time|"
    r"how many (?:times|different)|what (?:are|were) (?:all|the)|over time|timeline|sequence|"
    r"across (?:our|the|all|my)|which \w+s\b|what \w+s (?:has|have|did|does|do)|summar(?:y|ise|ize)|recap|sum up|"
    r"everything|overview)\b", re.I)


#: What a reply of the assistant keeps of its fused score for a question about the asker's own
#: words (:func:`own_words`, :func:`asker_first`).
REPLY_WEIGHT = 0.5
#: The speakers that are the assistant's side of a chat (the roles agent hosts write), never
#: the asker.
REPLY_SPEAKERS = frozenset({"assistant", "ai", "bot", "model", "system", "tool"})
_OWN = re.compile(
    r"\b(?:(?:did|have|had|do) (?:i|we) (?:ever )?(?:bring|brought|mention|ask|say|said|talk|discuss|tell|told|raise|"
    r"share|cover|go over)|i(?:'ve| have| had)? (?:brought up|mentioned|asked|said|talked|discussed|told you|raised|"
    r"shared|covered|gone over|went over)|(?:we(?:'ve| have)?|you and i(?: have)?) (?:discussed|talked about|covered|"
    r"gone over|went over))\b", re.I)


#: A question about the conversation itself ("in our chats", "did these come up") ...
_CONVERSATION = re.compile(r"\b(?:(?:come|came|coming) up|our (?:\w+ )?(?:chats?|conversations?|sessions?|talks?|"
                           r"discussions?|exchanges?))\b", re.I)
#: ... asked in the first person ...
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|i've|i'd|i'm)\b", re.I)
#: ... that is not about what the assistant said.
_YOUR_WORDS = re.compile(r"\byou (?:said|told|recommended|suggested|gave|mentioned|explained|answered|wrote)\b", re.I)


def own_words(query: str) -> bool:
    """Whether a question asks what the asker said ("in what order did I bring up...",
    "summarise everything I've discussed with you about..."; also an order or list question
    about the conversation in the first person, "in what order did these come up: my plan
    for..."): the asker's own turns are the evidence, questions included, and the replies to
    them are not (:func:`asker_first`)."""
    if _OWN.search(query) is not None:
        return True
    return ((asks_order(query) or listy(query)) and _CONVERSATION.search(query) is not None
            and _FIRST_PERSON.search(query) is not None and _YOUR_WORDS.search(query) is None)


def asker_first(db, fused: dict[int, float]) -> dict[int, float]:
    """``fused`` for a question about the asker's own words: the assistant's replies (their
    speaker, or the "Assistant: " label of a host's transcript turn, in :data:`REPLY_SPEAKERS`)
    keep :data:`REPLY_WEIGHT` of their score. In place; returned."""
    if not fused:
        return fused
    for mid, who, head in db.execute("SELECT id, speaker, substr(text, 1, 80) FROM memories "
                                     "WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(fused)),)):
        who = who if who is not None else prefix_speaker(head)
        if who is not None and who.strip().casefold() in REPLY_SPEAKERS:
            fused[mid] *= REPLY_WEIGHT
    return fused


_ORDER = re.compile(r"\b(?:in (?:what|which) order|what order|order (?:did|do|does|were|was|have|had)|chronolog\w*|"
                    r"the order (?:in which )?(?:i|we|you|they|these|those|it)|"
                    r"(?:in )?(?:what|which) sequence (?:did|do|does|were|was|have|had|they|these|those)|"
                    r"timeline|which came first|what came first)\b", re.I)


def asks_order(query: str) -> bool:
    """Whether a question asks in what order things happened or were said (``recall(order="auto")``
    then returns its hits oldest first); "in order to" does not."""
    return _ORDER.search(query) is not None


_TOPIC_LIST = re.compile(r"\b[\w'-]+(?: [\w'-]+){0,3}, (?:[\w'-]+ ){0,3}[\w'-]+,? (?:and|or) [\w'-]+", re.I)


def lists_topics(query: str) -> bool:
    """Whether a question names several topics in a list ("did I bring up solar panels, Rust
    and GraphQL"): each is its own search, so no one memory's neighbourhood may stand for all
    (the relevance feedback of a question about one topic is left out)."""
    return _TOPIC_LIST.search(query) is not None


def listy(query: str) -> bool:
    """Whether a question asks for a list, an order or a summary (several memories, each needed)."""
    return _LISTY.search(query) is not None or asks_order(query)


def spread(hits: list, vecs: np.ndarray, k: int) -> list:
    """The ``k`` hits maximal marginal relevance picks from ``hits`` (best first, with their
    unit vectors ``vecs``, rows in the same order)."""
    if len(hits) <= 1:
        return hits[:k]
    top = max(h.score for h in hits) or 1.0
    rel = np.array([h.score / top for h in hits])
    sims = vecs @ vecs.T
    chosen = [0]
    worst = sims[0].copy()
    while len(chosen) < min(k, len(hits)):
        gain = rel - MMR_REDUNDANCY * worst
        gain[chosen] = -np.inf
        nxt = int(np.argmax(gain))
        chosen.append(nxt)
        worst = np.maximum(worst, sims[nxt])
    return [hits[i] for i in chosen]


def by_time(hits: list) -> list:
    """Oldest first; hits without a time after them, in rank order."""
    timed = sorted((h for h in hits if h.at is not None), key=lambda h: h.at)
    return timed + [h for h in hits if h.at is None]
