"""Every HRR kernel against its NumPy reference, over odd sizes and edge rows."""

import subprocess
import sys

import numpy as np
import pytest
from fastmem.kernels import reference as R
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import fastmem
from fastmem import kernels as K
from tests.shared import NARRATIVES

DIMS = [3, 97, 1024]
NS = [0, 1, 77]


def phases(n, d, kind, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.uniform(0, 2 * np.pi, (n, d))
    if kind == "zeros":
        return np.zeros((n, d))
    return np.full((n, d), 1.2345)  # constant phases


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    fastmem.warmup()


def test_atoms_are_deterministic_across_processes():
    here = K.atom("relation:own", 16)
    code = "import fastmem.kernels as K; print(repr(K.atom('relation:own', 16).tolist()))"
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert_allclose(here, np.array(eval(there)), rtol=0, atol=0)
    assert here.min() >= 0 and here.max() < 2 * np.pi
    assert not np.allclose(K.atom("a", 64), K.atom("b", 64))
    assert abs(K.sim(K.atom("a", 4096), K.atom("b", 4096))) < 0.05  # near orthogonal


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("kind", ["random", "zeros", "constant"])
def test_algebra_matches_reference(d, n, kind):
    v = phases(n, d, kind)
    w = phases(n, d, "random", seed=1)
    assert_allclose(K.bind(v, w), R.bind(v, w), atol=1e-12)
    assert_allclose(K.unbind(v, w), R.unbind(v, w), atol=1e-12)
    if n:
        assert_allclose(np.cos(K.unbind(K.bind(v, w), w) - v), 1.0, atol=1e-12)  # exact inverse
        wts = np.linspace(0.5, 1.5, n)
        b, rb = K.bundle_weighted(v, wts), R.bundle_weighted(v, wts)
        assert_allclose(np.cos(b - rb), 1.0, atol=1e-9)  # equal as angles
    assert_allclose(K.to_unit(v), R.to_unit(v), atol=1e-12)
    assert_allclose(K.quantize(v), R.quantize(v), atol=1)
    q8 = R.quantize(v)
    assert_allclose(K.dequantize(q8), R.dequantize(q8), atol=1e-12)


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("kind", ["random", "zeros", "constant"])
def test_similarity_scans_match_reference(d, n, kind):
    v = phases(n, d, kind)
    q = phases(1, d, "random", seed=5)[0]
    assert_allclose(K.sim_many(q, v), R.sim_many(q, v), atol=1e-12)
    if n:
        assert K.sim(q, v[0]) == pytest.approx(R.sim(q, v[0]), abs=1e-12)
    codes = K.quantize(v)
    qu = R.to_unit(q[None, :])[0]
    # the slot's code scores (StructureIndex.code_scores): int8 codes against a unit query
    got = K.sims_q8_many(codes, np.stack([qu, -qu]))
    assert got.shape == (2, n)
    assert_allclose(got[0], R.dequantize(codes) @ qu, atol=1e-5)
    assert_allclose(got[1], -got[0], atol=1e-6)
    # quantisation error against exact float phases stays small
    assert_allclose(got[0], R.sim_many(q, v), atol=0.01)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 12)), min_size=1, max_size=30), st.sampled_from([3, 97]))
def test_code_stats_equal_brute_force_through_adds_and_removes(ops, d):
    """CodeStats (the slot's exact store statistics, kept by every write) against the mean
    and std of every live row's scaled score, recomputed from scratch."""
    from fastmem.analogy.codes import CodeStats

    rng = np.random.default_rng(len(ops) * 31 + d)
    cs = CodeStats(d)
    live: dict[int, tuple[np.ndarray, float]] = {}
    next_id = 1
    for insert, count in ops:
        if insert or not live:
            v = rng.uniform(0, 2 * np.pi, (count, d))
            v[0] = 0.0  # an edge row in every batch
            q8, scale = K.quantize(v), rng.uniform(1, 3, count)
            ids = np.arange(next_id, next_id + count)
            next_id += count
            cs.add(ids, q8, scale)
            live.update(zip(ids.tolist(), zip(q8, scale)))
        else:
            gone = rng.choice(sorted(live), size=min(count, len(live)), replace=False)
            cs.remove(gone, np.stack([live[int(g)][0] for g in gone]), np.asarray([live[int(g)][1] for g in gone]))
            for g in gone:
                live.pop(int(g))
        q = R.to_unit(rng.uniform(0, 2 * np.pi, (1, d)))[0]
        units = (R.dequantize(np.stack([x[0] for x in live.values()])) * np.asarray([x[1] for x in live.values()])[:, None]
                 if live else np.zeros((0, 2 * d)))
        mean, std = cs.z_stats(q)
        want_mean, want_std = R.z_stats(q, units)
        assert mean == pytest.approx(want_mean, abs=1e-6)
        assert std == pytest.approx(want_std, abs=1e-6)
        assert cs.n == len(live) and cs.id_sum == sum(live)


@pytest.mark.parametrize("rows", [17, 300, 20_000])  # one block of the product, and three (BLOCK = 8192)
def test_sums_begun_on_a_thread_are_the_sums_an_add_makes_to_the_last_bit(rows):
    """A bulk load's statistics begun on a thread (CodeStats.ahead) are taken only when nothing
    changed the sums meanwhile, and are then bit for bit what add() computes."""
    from fastmem.analogy.codes import CodeStats

    rng = np.random.default_rng(rows)
    d = 97
    first = K.quantize(rng.uniform(0, 2 * np.pi, (40, d)))
    q8, scale = K.quantize(rng.uniform(0, 2 * np.pi, (rows, d))), rng.uniform(1, 3, rows)
    ids = np.arange(100, 100 + rows)
    plain, early = CodeStats(d), CodeStats(d)
    for cs in (plain, early):
        cs.add(np.arange(1, 41), first, 2.0)
    ahead = early.ahead(q8, scale)
    plain.add(ids, q8, scale)
    assert ahead.usable(early, rows)
    early.add(ids, None, None, ahead=ahead)
    assert np.array_equal(plain.s, early.s) and np.array_equal(plain.m, early.m)
    assert (plain.n, plain.id_sum) == (early.n, early.id_sum)
    # begun, then the sums changed (another write): not taken, add() computes them itself
    late = CodeStats(d)
    stale = late.ahead(q8, scale)
    late.add(np.arange(1, 41), first, 2.0)
    assert not stale.usable(late, rows) and not stale.usable(CodeStats(d), rows)
    late.add(ids, q8, scale, ahead=stale)
    assert np.array_equal(plain.s, late.s) and np.array_equal(plain.m, late.m)


def test_word_counts_of_a_batch_equal_those_counted_one_memory_at_a_time():
    """count_events (a bulk write's word counts, counted in one pass) against event_counts
    added one memory at a time: the same counts, new words in the same order."""
    from fastmem.analogy.codes import count_events, event_counts

    verbs = ["have", "be", "emit", "not_absorb", "heat", "go", "make", "carry"]
    rng = np.random.default_rng(5)
    batch = [[(str(rng.choice(verbs)), [f"s{rng.integers(6)}"], [f"o{rng.integers(9)}"] * int(rng.integers(0, 3)))
              for _ in range(int(rng.integers(0, 5)))] for _ in range(200)]
    want = {"earlier": 3}
    for events in batch:
        for w, c in event_counts(events).items():
            want[w] = want.get(w, 0) + c
    got = {"earlier": 3}
    count_events(got, batch)
    assert list(got.items()) == list(want.items())


def test_z_stats_empty_store():
    assert K.z_stats(np.ones(6), np.zeros(6), np.zeros((6, 6)), 0) == (0.0, 0.0)


@pytest.mark.parametrize("n_rows,n_terms", [(0, 3), (1, 1), (77, 97), (500, 40)])
def test_term_scores_match_reference(n_rows, n_terms):
    rnd = np.random.default_rng(n_rows + n_terms)
    term_of = rnd.integers(0, n_terms, size=4 * n_rows).astype(np.int64)
    row_of = rnd.integers(0, max(n_rows, 1), size=4 * n_rows).astype(np.int64)
    pairs = sorted(set(zip(term_of.tolist(), row_of.tolist())))  # a row has a term once
    t_arr = np.asarray([p[0] for p in pairs], np.int64)
    r_arr = np.asarray([p[1] for p in pairs], np.int64)
    keys, indptr, rows = K.postings_of(t_arr, r_arr)
    assert keys.tolist() == sorted({t for t, _ in pairs})
    full = np.zeros(n_terms + 1, np.int64)  # term numbers as hashes: an empty term gets an empty segment
    full[keys + 1] = np.diff(indptr)
    indptr = np.cumsum(full)
    for t in range(n_terms):
        assert sorted(rows[indptr[t]:indptr[t + 1]].tolist()) == sorted(r for tt, r in pairs if tt == t)
    q = rnd.choice(n_terms, size=min(5, n_terms), replace=False)
    w = rnd.uniform(0.1, 2.0, size=len(q))
    half = len(q) // 2  # some segments as "recent additions" over a second array
    erows = np.concatenate([rows[indptr[t]:indptr[t + 1]] for t in q[half:]]) if half < len(q) else np.zeros(0, np.int64)
    lens = np.asarray([indptr[t + 1] - indptr[t] for t in q[half:]], np.int64)
    estarts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64) if len(lens) else np.zeros(0, np.int64)
    alive = rnd.random(max(n_rows, 1)) > 0.2
    acc = np.zeros(max(n_rows, 1))
    args = (indptr[q[:half]], indptr[q[:half] + 1], rows, w[:half], estarts, estarts + lens, erows, w[half:], alive)
    got_r, got_s = K.term_scores(*args, acc, 0.5)
    want = R.term_scores([(rows[indptr[t]:indptr[t + 1]], wt) for t, wt in zip(q, w)], alive, 0.5)
    assert dict(zip(got_r.tolist(), got_s.tolist())) == pytest.approx(want)
    assert not acc.any()  # scratch left zeroed
    by_r, by_s = K.term_scores_bincount(*args, 0.5)  # the NumPy one: the same sums, bit for bit
    assert dict(zip(by_r.tolist(), by_s.tolist())) == dict(zip(got_r.tolist(), got_s.tolist()))


def test_term_index_gives_exact_overlap_through_adds_removes_and_merges():
    from fastmem.analogy.postings import TermIndex

    rnd = np.random.default_rng(5)
    mem = {mid: np.unique(rnd.integers(0, 60, size=rnd.integers(1, 12))).astype(np.int64) for mid in range(1, 400)}
    ti = TermIndex()
    ti.MERGE_MIN = 300  # merge often
    first = list(mem)[:200]
    ti.build(np.asarray(first), [mem[m] for m in first])
    for m in list(mem)[200:]:
        ti.add(m, mem[m])
    gone = rnd.choice(list(mem), size=50, replace=False)
    ti.remove(gone)
    live = {m: h for m, h in mem.items() if m not in set(gone.tolist())}
    q = np.arange(0, 60, 3, dtype=np.int64)
    w = rnd.uniform(0.5, 3.0, size=len(q))
    ids, sc = ti.query(q, w, 2.0, 1000)
    want = {m: sum(wt for t, wt in zip(q, w) if t in set(h.tolist())) for m, h in live.items()}
    want = {m: v for m, v in want.items() if v >= 2.0}
    assert dict(zip(ids.tolist(), sc.tolist())) == pytest.approx(want)
    assert list(sc) == sorted(sc, reverse=True) and ti.n == len(live)
    top, _ = ti.query(q, w, 2.0, 7)
    assert len(top) == min(7, len(want)) and set(top.tolist()) <= set(want)


def test_term_index_update_replaces_a_memorys_terms():
    from fastmem.analogy.postings import TermIndex

    ti = TermIndex()
    ti.build(np.asarray([1, 2]), [np.asarray([10, 11]), np.asarray([11])])
    ti.add(1, np.asarray([12]))  # memory 1 changed: only term 12 now
    ids, _ = ti.query(np.asarray([10, 11, 12]), np.ones(3), 0.5, 10)
    got = dict(zip(*[x.tolist() for x in ti.query(np.asarray([10, 11, 12]), np.ones(3), 0.5, 10)]))
    assert got == {1: 1.0, 2: 1.0} and ti.n == 2
    ti.merge()
    assert dict(zip(*[x.tolist() for x in ti.query(np.asarray([10]), np.ones(1), 0.5, 10)])) == {}


def test_a_write_and_a_recall_in_a_fresh_process_import_no_numba(tmp_path):
    """A CLI call or a host's one-shot turn writes (code, statistics) and recalls, analogy
    slot included, without Numba's import and first dispatch (~1 s and ~150 MB); the write's
    code and statistics are the ones a process with Numba loaded would keep."""
    db = str(tmp_path / "s.db")
    with fastmem.Memory(db, progress=False) as m:
        m.remember_many(NARRATIVES)
    code = ("import sys, fastmem\n"
            f"with fastmem.Memory({db!r}) as m:\n"
            "    m.remember('The baker Ines moved from Faro to Lyon in April and rented a shop by the station.')\n"
            "    r = m.recall('My cousin Ana moved from Porto to Madrid in June and rented a room by the park.', k=3)\n"
            "assert r.hits and r.timings_ms.get('analogy') is not None, r.timings_ms\n"
            "print(r.analogy is not None, 'numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "False"]
    with fastmem.Memory(db, progress=False) as m:  # Numba is loaded here (the module's warmup)
        assert m.admin.check().ok, m.admin.check()


@pytest.mark.parametrize("n_pairs,n_terms", [(0, 3), (1, 1), (2000, 40), (20000, 3000)])
def test_postings_hold_each_terms_rows_in_the_order_given(n_pairs, n_terms):
    rnd = np.random.default_rng(n_pairs)
    hashes = rnd.integers(-2**62, 2**62, size=n_terms)[rnd.integers(0, n_terms, size=n_pairs)]
    rows = rnd.integers(0, 10**6, size=n_pairs)
    keys, indptr, got = K.postings_of(hashes, rows)
    want: dict[int, list[int]] = {}
    for h, r in zip(hashes.tolist(), rows.tolist()):
        want.setdefault(h, []).append(r)
    assert keys.tolist() == sorted(want) and indptr[0] == 0 and indptr[-1] == n_pairs
    assert {k: got[indptr[i]:indptr[i + 1]].tolist() for i, k in enumerate(keys.tolist())} == want


@pytest.mark.parametrize("shape", [(0, 7), (1, 1), (33, 1536)])
def test_fused_gelu_matches_the_exact_gelu(shape):
    from fastmem.kernels.nn import bias_gelu_

    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    x[:, :1] = np.float32(-30.0) if shape[0] else x[:, :1]  # far tails: 0 on the left, x on the right
    b = rng.standard_normal(shape[1]).astype(np.float32)
    want = R.bias_gelu(x, b)
    got = bias_gelu_(x.copy(), b)
    assert got.dtype == np.float32
    assert_allclose(got, want, rtol=0, atol=2e-6 * max(1.0, float(np.abs(want).max(initial=0.0))))
