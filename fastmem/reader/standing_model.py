"""Standing statements said in ways no rule foresaw: a small learned classifier beside the rules.

The rules of :mod:`fastmem.reader.standing` find an instruction or a preference when it is said
the usual way ("always add type hints", "I prefer tea"); users also say them hedged ("it would
be nice if answers were shorter"), as a complaint ("that was way too long"), in passing inside a
question, or as a situation ("I'm on a tight budget", "my team only knows Python"). For a text
of a person (never the assistant's) in which the rules found none, a multinomial logistic model
reads the text's own embedding (the one every write computes: no model runs for it), what the
rules made of it and a few surface cues, and names it an instruction or a preference when its
probability reaches the class's threshold. The surface cues: a question, first and second
person, a lasting word, the length, a pointer at what is at hand (a one-off: "this", "for
now"), a word of answers in general ("any", "every", "again", "stop"), a sentence that opens
with an order ("No emojis.", "Skip the intro."), more than one sentence. The weights
(``standing_weights.npz``) are fitted by ``bench/fit_standing_model.py`` on the repository's
labelled sentences (development parts only), with thresholds chosen for a cross-validated
precision of 0.85 (measured on the held-out parts: 0.88 or more).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import numpy as np

from .standing import Statement

__all__ = ["features", "classify", "refine", "KINDS"]

#: The classes, in the model's order.
KINDS = ("instruction", "none", "preference")
_PATH = os.path.join(os.path.dirname(__file__), "standing_weights.npz")
_MODEL: dict | None = None
_FIRST = re.compile(r"\b(i|i'm|im|i've|i'd|my|me|we|our|us)\b")
_SECOND = re.compile(r"\b(you|your|yours)\b")
_LASTING = re.compile(r"\b(always|never|from now on|going forward|whenever|every time|each time|in future|"
                      r"in the future|anymore|any more|usually|generally)\b")
_NEGATIVE = re.compile(r"\b(never|don'?t|do not|stop|avoid|no more|hate|dislike|can'?t stand|cannot stand|"
                       r"not a fan|too long|too much|too many|less)\b", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z+#.-]{2,}")
_STOP = frozenset("""the and for you your with that this from have has had are was were will would could should
can cant don dont not but just also really very please when what which then than they them their there here into
about over some more most much many like want need make sure always never every each time thing things get got
its it's i'm i've i'd me my mine our we us be been being do does did so if or of to in on at by as an""".split())


#: A one-off points at what is at hand ("shorten this paragraph", "for now", "the email below").
_DEICTIC = re.compile(r"\b(this|these|that one|above|below|here|attached|this time|for now|just this|only this)\b")
#: A lasting request speaks of answers in general, or of a habit of the assistant's to end.
_GENERAL = re.compile(r"\b(any|every|all|each|whenever|anything|always|never|ever|default|in general|generally|"
                      r"usually|again|keep|stop|anymore)\b")
#: A sentence that opens with an order (after "please", "also", "btw"...): "No emojis.", "Skip the intro."
_ORDER = re.compile(r"^\W*(?:(?:pls|please|ok|okay|also|and|so|just|oh|btw|side note:?)\s+)*(don'?t|do not|no|never|always|"
                    r"stop|skip|use|keep|avoid|give|write|assume|include|cut|make|put|add|end|start|show|call|talk|"
                    r"answer|reply|respond|explain|limit|list)\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _surface(text: str) -> list[float]:
    low = text.lower()
    sentences = [s for s in _SENTENCE.split(low.strip()) if s]
    return [float(low.rstrip().endswith("?")), float(bool(_FIRST.search(low))), float(bool(_SECOND.search(low))),
            float(bool(_LASTING.search(low))), min(len(text.split()), 60) / 30.0,
            float(bool(_DEICTIC.search(low))), float(bool(_GENERAL.search(low))),
            float(any(_ORDER.search(s) for s in sentences)), float(len(sentences) > 1)]


_CUES = 9  # the surface cues per text


def features(texts: Sequence[str], vecs: np.ndarray, found: Sequence[Statement | None]) -> np.ndarray:
    """The model's input for each text: its embedding, the rules' verdict (instruction,
    preference) and the surface cues."""
    rules = np.array([[float(f is not None and f.kind == "instruction"), float(f is not None and f.kind == "preference")]
                      for f in found], np.float32).reshape(len(texts), 2)
    surface = np.array([_surface(t) for t in texts], np.float32).reshape(len(texts), _CUES)
    return np.hstack([np.asarray(vecs, np.float32).reshape(len(texts), -1), rules, surface])


def _model() -> dict | None:
    global _MODEL
    if _MODEL is None:
        if not os.path.exists(_PATH):
            _MODEL = {}
        else:
            with np.load(_PATH) as f:
                _MODEL = {k: f[k] for k in f.files}
    return _MODEL or None


def classify(x: np.ndarray) -> list[tuple[str | None, float]]:
    """``(kind or None, probability)`` of each row of :func:`features` (None: neither, or below
    the kind's threshold; no model shipped: None for all)."""
    m = _model()
    if m is None or x.shape[1] != m["coef"].shape[1]:
        return [(None, 0.0)] * len(x)
    z = x @ m["coef"].T + m["intercept"]
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    out = []
    for row in p:
        k = int(np.argmax(row))
        kind = KINDS[k]
        ok = kind != "none" and row[k] >= float(m["threshold"][k])
        out.append((kind if ok else None, float(row[k])))
    return out


def _topic(text: str) -> tuple[str, ...]:
    words = [w.lower().strip(".-") for w in _WORD.findall(text)]
    return tuple(dict.fromkeys(w for w in words if w not in _STOP and w.isalpha()))


def refine(texts: Sequence[str], vecs: np.ndarray, found: list[Statement | None], skip=None) -> list[Statement | None]:
    """``found`` with a statement for each text the rules left without one and the model names
    (never for positions in ``skip``: the assistant's texts, a host's ``kind=``)."""
    todo = [i for i, f in enumerate(found) if f is None and (skip is None or i not in skip) and texts[i].strip()]
    if not todo or _model() is None:
        return found
    got = classify(features([texts[i] for i in todo], np.asarray(vecs)[todo], [None] * len(todo)))
    out = list(found)
    for i, (kind, _) in zip(todo, got):
        if kind is None:
            continue
        text = texts[i].strip()
        label = re.match(r"^[A-Z][\w .'-]{0,40}:\s+", text)  # a transcript's "Name: "
        sentence = text[label.end():] if label else text
        topic = _topic(sentence)
        out[i] = Statement(kind, -1 if _NEGATIVE.search(sentence) else 1, sentence, topic)
    return out

