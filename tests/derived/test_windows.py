"""Long memories found by their best window (fastmem.derived.windows), with the real model."""

from __future__ import annotations

import numpy as np

import fastmem
from fastmem.models.embedder import default_embedder

FILLER = ("The quarterly planning meeting covered hiring, the office move and the budget for next year. "
          "Everyone agreed that the roadmap needs another review before it is shared outside the team. ")


def _long_answer(secret: str) -> str:
    """A long markdown answer (about 600 words) with one sentence about something else in
    its middle."""
    return "\n\n".join([FILLER * 8, secret, FILLER * 8])


def test_window_vectors_are_the_windows_of_the_mean():
    e = default_embedder()
    text = _long_answer("For the backups I'd use restic with a B2 bucket as the target.")
    vecs, wins = e.encode_with_windows([text, "short text"])
    assert wins[1] is None and wins[0].shape[0] >= 3
    mean = wins[0].sum(0)
    assert np.allclose(vecs[0], mean / np.linalg.norm(mean), atol=1e-5)
    assert np.allclose(vecs[0], e.encode([text])[0], atol=1e-5)


def test_a_paragraph_in_the_middle_of_a_long_answer_is_found(tmp_path):
    with fastmem.Memory(str(tmp_path / "w.db")) as m:
        long_id = m.remember(_long_answer("For the backups I'd use restic with a B2 bucket as the target, "
                                          "pruning with keep-daily 7."))
        m.remember_many([f"Note {i}: we talked about storage options for the photo archive and cloud costs."
                         for i in range(30)])
        q = "Which tool did you recommend for my backups?"
        r = m.recall(q, k=5, channels=["vector"], analogy=False)
        assert long_id in [h.id for h in r.hits][:3]
        # the mean alone (its window rows gone) ranks it far lower
        m.admin.engine.db.execute("DELETE FROM windows")
        r = m.recall(q, k=5, channels=["vector"], analogy=False)
        assert long_id not in [h.id for h in r.hits][:3]


def test_windows_follow_update_forget_and_scope(tmp_path):
    with fastmem.Memory(str(tmp_path / "w.db")) as m:
        a = m.remember(_long_answer("Aim for roughly 500 ml of water per hour on long runs."), scope="a")
        assert m.admin.engine.db.execute("SELECT n FROM windows WHERE memory_id=?", (a,)).fetchone()[0] >= 3
        q = "How much water per hour should I drink on long runs?"
        assert a not in [h.id for h in m.recall(q, scope="b", channels=["vector"], analogy=False).hits]
        m.update(a, text="A short note now.")
        assert m.admin.engine.db.execute("SELECT count(*) FROM windows").fetchone()[0] == 0
        m.update(a, text=_long_answer("Aim for roughly 500 ml of water per hour on long runs."))
        assert m.admin.engine.db.execute("SELECT count(*) FROM windows").fetchone()[0] == 1
        m.forget(a)
        assert m.admin.engine.db.execute("SELECT count(*) FROM windows").fetchone()[0] == 0
        assert m.recall(q, channels=["vector"], analogy=False).hits == ()


def test_an_import_has_the_windows_again(tmp_path):
    with fastmem.Memory(str(tmp_path / "a.db")) as m:
        m.remember(_long_answer("For the backups I'd use restic with a B2 bucket as the target."))
        m.admin.export_jsonl(str(tmp_path / "a.jsonl"), vectors=True)
        want = m.admin.engine.db.execute("SELECT n, vecs FROM windows").fetchall()
    with fastmem.Memory(str(tmp_path / "b.db")) as b:
        b.admin.import_jsonl(str(tmp_path / "a.jsonl"))
        got = b.admin.engine.db.execute("SELECT n, vecs FROM windows").fetchall()
    assert len(got) == 1 and got[0][0] == want[0][0]
    assert np.allclose(np.frombuffer(got[0][1], np.float32), np.frombuffer(want[0][1], np.float32), atol=1e-5)
