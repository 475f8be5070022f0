"""Facts from an OpenAI-compatible chat-completions endpoint: :func:`chat_complete` (one
completion, temperature 0) and :class:`ChatExtractor` (an extractor that asks the model for
triples as JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..results import Triple
from .canon import normalise_type

__all__ = ["ChatExtractor", "chat_complete"]


def chat_complete(url: str, model: str, system: str, user: str, *, api_key: str | None = None,
                  timeout: float = 60.0) -> str:
    """One OpenAI-compatible chat completion (temperature 0) at ``url`` (``.../chat/completions``):
    the answer's text, stripped."""
    body = json.dumps({"model": model, "temperature": 0, "messages": [
        {"role": "system", "content": system}, {"role": "user", "content": user}]}).encode()
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    import urllib.request  # only the chat extractor talks to a server

    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        payload = json.loads(resp.read())
    return str(payload["choices"][0]["message"]["content"]).strip()


class ChatExtractor:
    """Extract triples with an OpenAI-compatible ``/chat/completions`` endpoint.

    Parameters
    ----------
    base_url : str
        e.g. ``http://localhost:8000/v1``; ``/chat/completions`` is appended.
    model : str
        Model name sent in the request.
    api_key : str or None
        Sent as a bearer token when given.
    timeout : float
        Seconds per request.
    """

    prompt = (
        "Extract the facts stated in the user's text as JSON: a list of objects with keys "
        "subject, relation, object, subject_type, object_type (types: person, organisation, "
        "place, thing, event, time, quantity, group, concept). Use the base form of the verb "
        "for relation. Answer with the JSON list only."
    )

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 30.0) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    def extract_many(self, texts: Sequence[str]) -> list[list[Triple]]:
        return [self.extract(t) for t in texts]

    def extract(self, text: str) -> list[Triple]:
        content = chat_complete(self.url, self.model, self.prompt, text, api_key=self.api_key, timeout=self.timeout)
        if content.startswith("```"):
            content = content.strip("`").split("\n", 1)[-1]
        items = json.loads(content)
        out = []
        for it in items:
            if isinstance(it, dict):
                s, r, o = it.get("subject"), it.get("relation"), it.get("object")
                st, ot = it.get("subject_type"), it.get("object_type")
            else:
                s, r, o = it[:3]
                st = it[3] if len(it) > 3 else None
                ot = it[4] if len(it) > 4 else None
            if s and r and o:
                out.append(Triple(str(s), str(r), str(o), normalise_type(st), normalise_type(ot)))
        return out
