"""write_os_hit: the chance that the OS page cache holds a dirty block's page when DBWR writes it at
its eviction from the buffer cache (sim.analytic.level2_hit_at_eviction), against its limits and an
exact LRU-over-FIFO cascade of 4-block pages."""

from __future__ import annotations

import collections
import math

import numpy as np
import pytest

from sim.analytic import level2_hit_at_checkpoint, level2_hit_at_eviction
from sim.db.buffer_cache import BufferCache, Segment


def _zipf(blocks: int, alpha: float, touches: float, update_share: float, copies: float = 1.0) -> Segment:
    p = 1.0 / np.arange(1, blocks + 1) ** alpha
    return Segment("t", p / p.sum() * touches / copies, np.full(blocks, copies), update_share)


def _write_hit(segment, buffers, os_pages, policy="fifo", page_blocks=4):
    return BufferCache([segment], buffers, os_pages * page_blocks, page_blocks, policy).odds["t"].write_os_hit


def test_the_eviction_write_finds_the_page_under_a_small_buffer_cache_and_misses_it_over_a_small_page_cache():
    seg = _zipf(4000, 0.8, 10.0, 0.3, copies=50.0)          # 200,000 blocks, 50,000 pages
    for policy in ("fifo", "lru"):
        # 500 buffers under 45,000 pages: a block stays far shorter than a page does
        assert _write_hit(seg, 500.0, 45_000.0, policy) > 0.97
        # 150,000 buffers over 1,000 pages: gone long before the block is evicted (the read's hit is still ~0.6:
        # h2 is the presence at the next read, while the block is out of the buffer cache)
        cache = BufferCache([seg], 150_000.0, 4_000.0, 4, policy)
        assert cache.odds["t"].write_os_hit < 0.05
    # one block a page: nothing else brings the page back once it has left
    assert _write_hit(seg, 150_000.0, 4_000.0, "fifo", page_blocks=1) < 0.01


@pytest.mark.parametrize("policy", ["fifo", "lru"])
def test_more_page_cache_never_loses_the_page(policy):
    seg = _zipf(4000, 0.8, 10.0, 0.3, copies=50.0)
    hits = [_write_hit(seg, 40_000.0, pages, policy) for pages in (2_000.0, 5_000.0, 10_000.0, 20_000.0, 40_000.0)]
    assert all(b >= a - 1e-12 for a, b in zip(hits, hits[1:])) and hits[-1] > hits[0] + 0.2


def test_the_closed_form_is_the_expectation_it_states():
    """Monte Carlo of the docstring's own assumptions: E = t1 + a geometric number K of exponential gaps of
    mean g, weighted by 1 - (1 - u)^{K+1}; FIFO: a remaining stay T2 (miss) or uniform (hit), then the other
    items' Poisson misses; LRU: there before T2, after it if another item missed within T2."""
    rng = np.random.default_rng(3)
    for r, t1, t2, h2, rho, u in ((1.0, 0.7, 2.0, 0.3, 0.2, 0.4), (2.0, 1.0, 0.8, 0.5, 0.5, 0.9),
                                  (0.1, 2.0, 10.0, 0.2, 0.05, 0.3), (3.0, 1.5, 1.0, 0.4, 0.3, 0.05)):
        p = np.exp(-r * t1)
        g = t1 * (1.0 / (r * t1) - 1.0 / np.expm1(r * t1))
        k = rng.geometric(p, 400_000) - 1
        k = k[rng.random(k.size) < 1.0 - (1.0 - u) ** (k + 1)]
        e = t1 + np.where(k > 0, rng.gamma(np.maximum(k, 1), g), 0.0)
        other = lambda s: -np.expm1(-rho * np.minimum(s, t2))  # noqa: E731
        stay = np.where(rng.random(e.size) < h2, rng.random(e.size) * t2, t2)
        fifo = np.where(e < stay, 1.0, other(e - stay)).mean()
        lru = np.where(e < t2, 1.0, other(t2)).mean()
        for policy, want in (("fifo", fifo), ("lru", lru)):
            got = level2_hit_at_eviction(np.array([r]), t1, t2, np.array([h2]), np.array([rho]), u, policy)[0]
            assert got == pytest.approx(want, abs=0.004), (policy, r, t1, t2)


def _cascade(probs, update_share, buffers, pages, requests, rng):
    """Exact LRU buffer cache over a FIFO page cache of 4-block pages; returns P(page cached) at the
    dirty evictions (after a third of the requests as warm-up)."""
    blocks = rng.choice(probs.size, size=requests, p=probs).tolist()
    change = (rng.random(requests) < update_share).tolist()
    l1: collections.OrderedDict[int, bool] = collections.OrderedDict()
    l2: set[int] = set()
    fifo: collections.deque[int] = collections.deque()
    warm, found, written = requests // 3, 0, 0
    for i, (b, c) in enumerate(zip(blocks, change)):
        if b in l1:
            l1[b] = l1[b] or c
            l1.move_to_end(b)
            continue
        page = b // 4
        if page not in l2:
            l2.add(page)
            fifo.append(page)
            if len(fifo) > pages:
                l2.discard(fifo.popleft())
        l1[b] = c
        if len(l1) > buffers:
            old, dirty = l1.popitem(last=False)
            if dirty and i > warm:
                written += 1
                found += (old // 4) in l2
    return found / written


@pytest.mark.parametrize("buffers, pages", [(300, 1500), (1500, 900), (2500, 500)])
def test_the_fifo_page_cache_at_eviction_tracks_an_exact_cascade(buffers, pages):
    """Zipf 0.8 over 8,000 blocks, a third of the touches change the block; 300/1,500/2,500 buffers over
    1,500/900/500 pages. The time-average h2 (the old write_os_hit) misses the exact figures by 0.13-0.23;
    the eviction-time form is within 0.04."""
    seg = _zipf(8000, 0.8, 1.0, 1.0 / 3.0)
    exact = _cascade(seg.rates / seg.rates.sum(), 1.0 / 3.0, buffers, pages, 600_000, np.random.default_rng(7))
    model = _write_hit(seg, float(buffers), float(pages))
    assert model == pytest.approx(exact, abs=0.04)


def test_a_checkpointed_block_finds_the_page_its_last_access_left_while_the_page_stays():
    # blocks changed often (Delta ~ the delay) find the page the previous write left when the delay is
    # short against T2, and lose it when it is long; a unit of one item has nothing else to bring it back
    r, u = np.array([1e4]), 0.5   # changed at once: Delta = the delay
    for policy in ("fifo", "lru"):
        near = level2_hit_at_checkpoint(r, u, 0.01, math.inf, 1.0, np.array([0.0]), policy)[0]
        far = level2_hit_at_checkpoint(r, u, 5.0, math.inf, 1.0, np.array([0.0]), policy)[0]
        assert near > 0.95 and far < 1e-9
    # FIFO with a fixed Delta = T2 / 2.5 (changes at once): a fresh page serves two more writes, the exact
    # hit 2/3; the fixed point with a found page's stay taken uniform gives T2 / (T2 + Delta) = 0.71
    h = level2_hit_at_checkpoint(np.array([1e6]), 1.0, 0.4, math.inf, 1.0, np.array([0.0]), "fifo")[0]
    assert h == pytest.approx(1.0 / 1.4, abs=1e-3)
    # the first write of a stay follows the read: with the read's hit h2 = 0 and the reading touch the
    # change (u = 1), it comes the delay after a fresh insertion: found iff delay < T2
    assert level2_hit_at_checkpoint(np.array([1.0]), 1.0, 0.5, 3.0, 1.0, np.array([0.0]), "fifo", 0.0, 1.0)[0] == 1.0
    assert level2_hit_at_checkpoint(np.array([1.0]), 1.0, 1.5, 3.0, 1.0, np.array([0.0]), "fifo", 0.0, 1.0)[0] == 0.0


def test_the_write_page_hit_weighs_eviction_and_checkpoint_writes_by_their_shares():
    seg = _zipf(4000, 0.8, 10.0, 0.3, copies=50.0)
    cache = BufferCache([seg], 120_000.0, 30_000.0 * 4, 4, "fifo")
    assert cache.checkpoint_os_hit == {}
    ev, ck = cache.dirty_writes(span=40_000.0)["t"]   # t1 ~ 37,000, T2 ~ 38,000 transactions
    assert ev > 0.0 and ck > 0.0 and 0.0 < cache.checkpoint_os_hit["t"] < 1.0
    # a dirty episode is written once, at the sooner of its eviction and its checkpoint: a checkpoint ends some
    # episodes sooner, so fewer writes at eviction than without it and more in all
    assert ev < cache.odds["t"].writes_per_tx < ev + ck
    cache.dirty_writes()
    assert cache.checkpoint_os_hit == {}
    # The file system's write page hit (workloads/tpcc.py) over all DBWR's writes, on hand-set shares and
    # hits: a segment's evicted writes find their page with its write_os_hit, its checkpointed ones with the
    # cache's checkpoint_os_hit (its eviction hit where it has none), inserts' pages but the first block's of
    # each (a new page of the preallocated file: 8 KB pages hold four 2 KB blocks).
    from sim import scenario
    from sim.system import System
    from workloads import tpcc, tpcc_blocks
    sc = scenario.load(None, {"users": 6, "warehouses": 200, "database.block_size": "2 KB", "database.db_cache": "1 GB",
                              "database.redo_device": "redo", "database.data_device": "data",
                              "os.filesystem": "ufs_buffered"}, profile="ue10000", workload="tpcc")
    system = System(sc)
    io = tpcc.Workload(system, sc.params).io
    odds = io.cache.odds
    assert list(io.writers) == ["stock", "customer", "old_orders", "delivery_walk"]
    appended = tpcc_blocks.appended_blocks_per_tx(tpcc.STANDARD_MIX, 2048)
    rest = ("old_orders", "delivery_walk")             # eviction only throughout
    assert system.datafiles.page_blocks == 4
    found = sum(odds[s].writes_per_tx * odds[s].write_os_hit for s in rest) + appended * 3 / 4
    written = sum(odds[s].writes_per_tx for s in rest) + appended
    # stock: 1 block evicted and 2 checkpointed a transaction, the checkpointed found a quarter of the time;
    # customer: 0.5 checkpointed, no hit of its own given, and none evicted
    io.cache.checkpoint_os_hit = {"stock": 0.25}
    io.set_dirty({"stock": (1.0, 2.0), "customer": (0.0, 0.5)})
    want = (found + 1.0 * odds["stock"].write_os_hit + 2.0 * 0.25 + 0.5 * odds["customer"].write_os_hit) / (
        written + 3.0 + 0.5)
    assert system.datafiles.write_page_hit == pytest.approx(want, rel=1e-12)
    # the same writes all found at their checkpoints: the hit rises by the 1.5 of 3.5 + rest checkpointed
    # writes that the quarter missed
    io.cache.checkpoint_os_hit = {"stock": 1.0}
    io.set_dirty({"stock": (1.0, 2.0), "customer": (0.0, 0.5)})
    assert system.datafiles.write_page_hit == pytest.approx(want + 1.5 / (written + 3.5), rel=1e-12)


@pytest.mark.parametrize("policy", ["fifo", "lru"])
def test_a_fully_cached_database_keeps_its_pages_for_checkpoint_writes(policy):
    """With every block in the buffer cache no read miss pushes a page out of the page cache, so the
    checkpoint writes find their pages (level 2's time is infinite, not zero): the same as with the
    buffer cache one block short of the whole database, not a jump to every write reading its page."""
    seg = _zipf(4_000, 0.8, 20.0, 0.5)
    hits = []
    for buffers in (3_999.0, 4_000.0, 6_000.0):
        cache = BufferCache([seg], buffers, 2 * 4_000, 4, policy)
        assert cache.dirty_writes(span=50_000.0)["t"][1] > 0.0
        hits.append(cache.checkpoint_os_hit["t"])
    assert hits[1] == hits[2] == 1.0 and hits[0] > 0.95


@pytest.mark.parametrize("policy", ["fifo", "lru"])
def test_pages_of_key_first_rows_hold_one_keys_blocks(policy):
    """A segment whose buckets are runs of adjacent blocks (rows ordered key first: `adjacent`, each
    bucket 8 blocks of one key) is paged as if each key were its own segment: a page holds 4 blocks of
    one key, not 4 keys' blocks side by side (which would average hot and cold keys into each page)."""
    rates = np.array([2.0, 0.5, 0.1, 0.02, 0.004, 0.001, 0.0005, 0.0001]) / 8
    keyed = Segment("t", rates, np.full(len(rates), 8.0), 0.3, adjacent=True)
    alone = [Segment(f"k{i}", rates[i:i + 1], np.array([8.0]), 0.3) for i in range(len(rates))]
    a = BufferCache([keyed], 20.0, 4 * 6, 4, policy)
    b = BufferCache(alone, 20.0, 4 * 6, 4, policy)
    per_key = [b.odds[f"k{i}"].os_hit for i in range(len(rates))]
    miss = np.array([b.odds[f"k{i}"].miss for i in range(len(rates))]) * rates * 8
    assert a.odds["t"].os_hit == pytest.approx(np.dot(miss, per_key) / miss.sum())
    mixed = BufferCache([Segment("t", rates, np.full(len(rates), 8.0), 0.3)], 20.0, 4 * 6, 4, policy)
    assert mixed.odds["t"].os_hit != pytest.approx(a.odds["t"].os_hit, rel=1e-3)


def test_checkpoint_writes_are_taken_a_delay_after_the_change_the_sooner_of_span_and_half_a_period(monkeypatch):
    """dirty_writes hands level2_hit_at_checkpoint the delay from the change to the write: the timeout's
    span, else half the log-switch period (a change's mean wait for the next switch), with both the sooner;
    and the share of checkpoint writes that are a stay's first, at most 1 (eviction-bound blocks dirty more
    stays than checkpoints write)."""
    import sim.db.buffer_cache as bc
    seen = []

    def record(rates, u, delay, t1, t2, other, policy, h2, first):
        seen.append((delay, float(np.max(first))))
        return np.ones_like(rates)
    monkeypatch.setattr(bc, "level2_hit_at_checkpoint", record)
    cache = BufferCache([Segment("t", np.array([0.01]), np.array([1000.0]), 0.4)], 250.0, 500.0)
    for period, span, delay in ((None, 40.0, 40.0), (100.0, None, 50.0), (100.0, 30.0, 30.0), (100.0, 80.0, 50.0),
                                (1e5, None, 5e4)):
        seen.clear()
        cache.dirty_writes(period, span)
        assert [d for d, _f in seen] == [delay] and cache.checkpoint_os_hit == {"t": 1.0}
        assert 0.0 < seen[0][1] <= 1.0
