"""Quality evaluations on public data sets that fastmem never ships (``fastmem eval``):

* :mod:`fastmem.evaluate.locomo` - evidence recall on LoCoMo conversations (any@k, all@k per
  channel and fused);
* :mod:`fastmem.evaluate.proparalogy` - the analogy slot on ProPara-Logy paragraphs (fire rate,
  precision, distractor and hit rates next to baselines computed in the same run; the share of
  rows whose target outscores its own distractor; a four-way multiple choice);
* :mod:`fastmem.evaluate.stories` - the slot's picks on story sets, and a multiple-choice form;
* :mod:`fastmem.evaluate.reading` - the reader's facts against a person's;
* :mod:`fastmem.evaluate.chats` - standing statements, order and facts in long chats.
"""

from __future__ import annotations

import json
import os


def json_file(path: str | os.PathLike, name: str):
    """The JSON at ``path`` (a file, or a folder holding ``name``); None when there is none."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)
