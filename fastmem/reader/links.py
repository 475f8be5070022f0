"""Links between a text's events: the higher-order relations (cause, condition, purpose,
contrast, time) a connective or a sentence opener states, read from a spaCy parse as
``(kind, antecedent verb, consequent verb)`` token positions; and restatements (an event that
repeats an earlier one), for the opt-in ``"restated"`` repair of
:class:`fastmem.reader.extract.SpacyExtractor`."""

from __future__ import annotations

__all__ = ["links", "unrestated", "story_position"]


#: Higher-order relations between events, by the word that introduces a clause: the clause is
#: the antecedent (``"cause"``: *because X*, Y) or the consequent (``"~cause"``: Y, *so X*) of the
#: clause it depends on.
_MARKS = {"because": "cause", "since": "cause", "as": "cause", "cause": "cause",
          "so": "~cause", "therefore": "~cause", "thus": "~cause", "consequently": "~cause", "hence": "~cause",
          "if": "condition", "unless": "condition", "provided": "condition", "whenever": "condition",
          "although": "contrast", "though": "contrast", "whereas": "contrast", "but": "~contrast",
          "however": "~contrast", "yet": "~contrast",
          "after": "time", "once": "time", "when": "time", "before": "~time", "until": "~time", "then": "~time"}
#: Openers that tie a sentence to the one before it (the first word of a multi-word one).
_OPENERS = {"so": "~cause", "therefore": "~cause", "thus": "~cause", "consequently": "~cause", "hence": "~cause",
            "result": "~cause", "but": "~contrast", "however": "~contrast", "yet": "~contrast", "instead": "~contrast",
            "then": "~time", "afterwards": "~time", "later": "~time", "finally": "~time"}


def _marker(verb) -> str | None:
    """The connective that opens a verb's clause (a mark, an adverb or a conjunction before it)."""
    for c in verb.children:
        if c.i < verb.i and c.dep_ in ("mark", "advmod", "cc", "prep") and c.lower_ in _MARKS:
            return c.lower_
    return None


def links(doc, events: dict[int, int]) -> list[tuple[str, int, int]]:
    """``(kind, antecedent verb, consequent verb)`` token positions of the higher-order
    relations between a text's events: cause, condition, purpose, contrast and time, from
    subordinate clauses ("because", "if", "so that", "to"), coordinated ones ("..., so ...")
    and sentence openers ("As a result, ...")."""
    out = []
    for i in events:
        verb = doc[i]
        head = verb.head
        if head.i != verb.i and head.i in events:
            mark = _marker(verb)
            if verb.dep_ in ("advcl", "conj", "ccomp", "parataxis") and mark:
                kind = _MARKS[mark]
                if mark == "so" and any(c.lower_ == "that" for c in verb.children):
                    out.append(("purpose", head.i, verb.i))  # "so that": what it is done for
                elif kind.startswith("~"):
                    out.append((kind[1:], head.i, verb.i))
                else:
                    out.append((kind, verb.i, head.i))
                continue
            if verb.dep_ in ("advcl", "xcomp") and any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children) \
                    and head.pos_ == "VERB" and verb.dep_ == "advcl":
                out.append(("purpose", head.i, verb.i))  # "split the army to surround the fort"
                continue
            if verb.dep_ in ("ccomp", "parataxis", "advcl") and verb.i < head.i:
                # "X, so Y" parsed with X under Y: the connective stands between them on Y
                between = _marker(head)
                if between and _MARKS[between].startswith("~") and verb.i < next(
                        c.i for c in head.children if c.lower_ == between) < head.i:
                    out.append((_MARKS[between][1:], verb.i, head.i))
                    continue
        if verb.dep_ == "ROOT" and verb.sent.start > 0:
            opener = next((t for t in verb.sent if not t.is_punct), None)
            if opener is not None and opener.i < verb.i and opener.lower_ in ("as", "so", "but", "then", "however",
                                                                               "therefore", "thus", "consequently",
                                                                               "later", "afterwards", "finally", "yet",
                                                                               "instead", "hence"):
                word = opener.lower_
                if word == "as":  # "As a result, ..."
                    word = "result" if any(t.lower_ == "result" for t in verb.sent[:4]) else ""
                kind = _OPENERS.get(word)
                prev = doc[verb.sent.start - 1].sent.root
                if kind and prev.i in events:
                    out.append((kind[1:], prev.i, verb.i))
    return out


def unrestated(keyed: list) -> list:
    """The events without those that restate an earlier one: the same relation with no filler
    the earlier ones lack, in whatever role ("Water evaporates. The evaporation of water ..."
    is one event)."""
    out, seen = [], {}
    for item in keyed:
        rel, subs, objs = item[1][:3]
        fillers = set(subs) | set(objs)
        if rel in seen and fillers <= seen[rel]:
            continue
        seen[rel] = seen.get(rel, set()) | fillers
        out.append(item)
    return out


#: A subordinate event introduced by one of these happened before its main clause's ...
_BEFORE_MARKERS = {"after", "once", "since", "following", "when", "whenever"}
#: ... and by one of these, after it.
_AFTER_MARKERS = {"before", "until", "till", "prior"}


def story_position(verb) -> float:
    """Where an event belongs in the story: its position in the text, unless a temporal
    marker says otherwise ("After X, Y" / "Y once X": X comes before Y; "Y before X" /
    "Y until X": X comes after Y)."""
    marker, anchor = None, None
    if verb.dep_ == "advcl":
        marks = [c.lower_ for c in verb.children if c.dep_ in ("mark", "advmod") and c.i < verb.i]
        marker, anchor = (marks[0] if marks else None), verb.head
    elif verb.dep_ == "pcomp" and verb.head.dep_ == "prep":
        marker, anchor = verb.head.lower_, verb.head.head
    if anchor is not None and anchor is not verb and anchor.pos_ in ("VERB", "AUX"):
        if marker in _BEFORE_MARKERS:
            return anchor.i - 0.5
        if marker in _AFTER_MARKERS:
            return anchor.i + 0.5
    return float(verb.i)
