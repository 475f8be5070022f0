"""The spaCy parser under a server's worker threads: each call in a fresh context."""

import contextvars

import thinc.backends as TB

from fastmem.reader.extract import SpacyExtractor


def test_parses_in_fresh_contexts_look_for_thincs_backend_once_per_thread(monkeypatch):
    """anyio runs each call of the MCP server in a fresh copy of the event loop's context,
    where thinc has no backend yet; without fastmem setting it, every layer of every parse
    tried to import thinc's optional backends again. The parses are the same either way."""
    ex = SpacyExtractor()
    text = "Caroline said she researched adoption agencies last week."
    want = ex.parse_many([text])
    looked = []
    real = TB._import_extra_cpu_backends
    monkeypatch.setattr(TB, "_import_extra_cpu_backends", lambda: (looked.append(1), real())[1])
    got = [contextvars.Context().run(ex.parse_many, [text]) for _ in range(5)]
    assert got == [want] * 5
    assert len(looked) <= 1
