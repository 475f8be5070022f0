"""Summarisers for chunks: many related memories -> one text that stands for them.

A summariser is anything with ``name: str`` and
``summarize(texts, *, names, budget) -> str``: ``texts`` are the member memories in the order
they were written, ``names`` the entities they share (a good summary keeps them), ``budget``
the most characters wanted. :class:`Extractive` (the default) works offline;
:class:`ChatSummarizer` asks any OpenAI-compatible chat endpoint.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..reader.chat import chat_complete
from ..util.text import content_words

__all__ = ["Summarizer", "Extractive", "ChatSummarizer"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


@runtime_checkable
class Summarizer(Protocol):
    """What the consolidation pass needs from a summariser."""

    name: str

    def summarize(self, texts: Sequence[str], *, names: Sequence[str], budget: int) -> str: ...


class Extractive:
    """The most central sentences of the members, in their original order, under the budget,
    with every shared name kept when the budget allows.

    Centrality of a sentence is the summed overlap (Jaccard of content words) with every other
    sentence of the cluster: the sentence that says most of what the others say ranks first.
    A name missing from the chosen sentences pulls in the most central sentence that has it;
    names still missing are listed at the end ("Also: ..."). A single sentence longer than the
    budget is cut at a word boundary and marked with an ellipsis (the members keep the whole).
    """

    name = "extractive"

    def summarize(self, texts: Sequence[str], *, names: Sequence[str] = (), budget: int = 600) -> str:
        sents = [s.strip() for t in texts for s in _SENTENCE.split(t.strip()) if s.strip()]
        if not sents:
            return ""
        bags = [set(content_words(s)) for s in sents]
        cent = []
        for i, a in enumerate(bags):
            cent.append(sum(len(a & b) / max(len(a | b), 1) for j, b in enumerate(bags) if j != i))
        order = sorted(range(len(sents)), key=lambda i: (-cent[i], i))
        chosen: list[int] = []
        used = 0

        def take(i: int) -> bool:
            nonlocal used
            cost = len(sents[i]) + (1 if chosen else 0)
            if i in chosen or used + cost > budget:
                return False
            chosen.append(i)
            used += cost
            return True

        for i in order:
            take(i)
        for n in names:  # keep the names: a sentence that mentions a missing one
            if any(n.lower() in sents[i].lower() for i in chosen):
                continue
            for i in order:
                if n.lower() in sents[i].lower() and take(i):
                    break
        if not chosen:
            s = sents[order[0]]
            cut = s.rfind(" ", 0, budget - 1)
            return s[: cut if cut > budget // 2 else budget - 1] + "…"
        out = " ".join(sents[i] for i in sorted(chosen))
        missing = [n for n in names if n.lower() not in out.lower()]
        if missing:
            tail = " Also: " + ", ".join(missing) + "."
            if len(out) + len(tail) <= max(budget, len(out) + 80):
                out += tail
        return out


class ChatSummarizer:
    """Summaries from an OpenAI-compatible ``/chat/completions`` endpoint.

    Parameters
    ----------
    base_url : str
        e.g. ``http://localhost:8000/v1``.
    model : str
    api_key : str, optional
    timeout : float
        Seconds per request.
    """

    prompt = ("Summarise the user's related notes in one short paragraph of at most {budget} characters. "
              "Keep every name ({names}). Answer with the summary only.")

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.name = f"chat:{model}"

    def summarize(self, texts: Sequence[str], *, names: Sequence[str] = (), budget: int = 600) -> str:
        return chat_complete(self.url, self.model, self.prompt.format(budget=budget, names=", ".join(names) or "none"),
                             "\n".join(f"- {t}" for t in texts), api_key=self.api_key, timeout=self.timeout)
