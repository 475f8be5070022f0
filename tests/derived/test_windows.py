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


#: Paragraphs of generic engineering advice: a long answer made of six of them matches many
#: turns a little with one window or another.
ADVICE = [
    "## Pipelines\n\nA build pipeline should fail fast: run the linters first, then the unit tests, and only then the "
    "slower integration suite. Cache the dependency folder between jobs so a build does not download the same "
    "packages every time, and pin the image the jobs run in.",
    "## Caching\n\nPut a cache in front of the slow endpoint and give every entry a time to live. Invalidate on write "
    "rather than on a timer when the data changes rarely, and measure the hit rate before and after so you know the "
    "cache earns its memory.",
    "## Migrations\n\nWrite every schema change as a migration that can run twice without harm. Add the new column "
    "first, backfill it in small batches, switch the reads, and drop the old column only in a later release once "
    "nothing reads it.",
    "## Logging\n\nLog one structured line per request with its id, the route, the status and the time it took. Keep "
    "debug output behind a flag, and never write secrets or personal data into the logs, since they are copied to "
    "more places than the database.",
    "## Testing\n\nTest the behaviour a caller sees rather than the private helpers. A small number of end-to-end "
    "tests catches wiring mistakes, and many fast unit tests pin down the edge cases: empty input, very large input "
    "and input in the wrong encoding.",
    "## Deployment\n\nShip behind a feature flag and roll out to a small share of users first. Keep the previous "
    "version ready so a rollback is one command, and watch the error rate and latency dashboards for the first hour "
    "after each release.",
    "## Security\n\nValidate input at the boundary, escape output for the context it lands in, and keep tokens "
    "short-lived. Store passwords with a slow hash, rotate keys on a schedule, and review who can reach the admin "
    "pages at least once a quarter.",
    "## Performance\n\nProfile before you optimise: the slow part is rarely where you expect. Batch the database calls "
    "made in a loop, stream large responses instead of building them in memory, and add an index for the query that "
    "the profile shows on top.",
]


def test_a_long_answer_gains_nothing_by_having_many_windows(tmp_path):
    """A user's one-line preference, asked about in other words, is not pushed out of the
    vector channel's head by long answers whose best window matches the request a little, as
    any long answer's best window does (a plain truncating embedding puts it higher)."""
    import random

    rng = random.Random(3)
    answers = ["Here is how I would approach it, step by step.\n\n" + "\n\n".join(rng.sample(ADVICE, 6))
               + "\n\nLet me know which part you want in more detail." for _ in range(12)]
    with fastmem.Memory(str(tmp_path / "w.db")) as m:
        m.remember_many(answers, progress=False)
        orm = m.remember_many([
            "Since I'm on a tight budget, free tiers and self-hosting suit me better than paid services.",
            "I review everything on my phone, so I like small pull requests that do one thing.",
            "I'm not a fan of ORMs for reporting queries, raw SQL is easier for me to reason about.",
            "Our builds run on a self-hosted runner in the office cupboard, nothing in the cloud."], progress=False)[2]
        r = m.recall("How should the dashboard pull its revenue figures?", k=5, channels=["vector"], analogy=False)
        assert orm in [h.id for h in r.hits]
