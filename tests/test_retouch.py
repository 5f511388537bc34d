"""Re-touches (Stock-Level re-reading the stock New-Order just read): the closed forms against an exact
LRU simulation of clustered references, and their limits."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

from sim.analytic import level2_hit_after, retouch_miss, retouch_rate
from sim.db.buffer_cache import BufferCache, Retouch, Segment


def _exact_lru(rates, per_touch, window, capacity, horizon, rng):
    """Miss ratios (own touches of re-touched items, re-touches, touches of the other items) of an exact
    LRU: touches of item i a Poisson stream of rates[i], each followed by Poisson(per_touch[i]) re-touches
    (per_touch: one value or one per item) at uniform times in the next `window`."""
    per_touch = np.broadcast_to(np.asarray(per_touch, dtype=float), rates.shape)
    base = rng.poisson(rates.sum() * horizon)
    times = rng.uniform(0.0, horizon, base)
    items = rng.choice(len(rates), base, p=rates / rates.sum())
    again = rng.poisson(per_touch[items])
    times = np.concatenate([times, np.repeat(times, again) + rng.uniform(0.0, window, again.sum())])
    kinds = np.concatenate([np.where(per_touch[items] > 0.0, 0, 2), np.ones(again.sum(), int)])
    items = np.concatenate([items, np.repeat(items, again)])
    order = np.argsort(times, kind="stable")
    cache: OrderedDict[int, None] = OrderedDict()
    refs, hits = np.zeros(3), np.zeros(3)
    for t, x, kind in zip(times[order].tolist(), items[order].tolist(), kinds[order].tolist()):
        if t >= horizon:
            break
        hit = x in cache
        if hit:
            cache.move_to_end(x)
        else:
            cache[x] = None
            if len(cache) > capacity:
                cache.popitem(last=False)
        if t > 0.2 * horizon:     # warmed up
            refs[kind] += 1
            hits[kind] += hit
    with np.errstate(invalid="ignore"):
        return 1.0 - hits / refs


@pytest.mark.parametrize("per_touch, window, capacity", [(1.78, 500.0, 200), (1.78, 3000.0, 600), (3.0, 1000.0, 400)])
def test_retouch_odds_match_an_exact_lru(per_touch, window, capacity):
    """Zipf(0.8) over 2,000 blocks: the model's misses of own touches and of re-touches are within 1.5
    points of an exact LRU's (measured: within 0.5), where taking re-touches as independent touches would
    give them their own touches' miss ratio (0.60 / 0.36 / 0.46 against exact 0.29 / 0.23 / 0.19)."""
    rates = 1.0 / np.arange(1, 2001) ** 0.8
    rates /= rates.sum()
    exact = _exact_lru(rates, per_touch, window, capacity, 60_000.0, np.random.default_rng(7))
    cache = BufferCache([Segment("s", rates, np.ones(2000), retouch=Retouch("again", per_touch, window))], capacity)
    assert cache.odds["s"].miss == pytest.approx(exact[0], abs=0.015)
    assert cache.odds["again"].miss == pytest.approx(exact[1], abs=0.015)
    assert cache.odds["again"].miss < 0.7 * cache.odds["s"].miss


def test_another_segment_sees_the_clustered_occupancy_as_an_exact_lru_does():
    """Half the touches of a Zipf(0.8) popularity re-touched (1.78 each within 2,000), the other half
    plain, 800 buffers (T about 0.45 of the window): the plain segment's miss ratio is the exact LRU's
    within 1.5 points (measured: 0.5239 against 0.5239), where re-touches taken as independent touches
    give 0.558 and none at all 0.461: the test tells the three apart."""
    z = 1.0 / np.arange(1, 2001) ** 0.8
    z /= z.sum()
    both = np.concatenate([z, z]) / 2.0
    exact = _exact_lru(both, np.where(np.arange(4000) < 2000, 1.78, 0.0), 2000.0, 800, 40_000.0,
                       np.random.default_rng(5))[2]
    other = Segment("other", z / 2.0, np.ones(2000))
    model = BufferCache([Segment("s", z / 2.0, np.ones(2000), retouch=Retouch("again", 1.78, 2000.0)), other], 800)
    independent = BufferCache([Segment("s", z / 2.0 * 2.78, np.ones(2000)), other], 800)
    assert model.odds["other"].miss == pytest.approx(exact, abs=0.015)
    assert independent.odds["other"].miss > exact + 0.025


def test_a_block_past_its_window_is_written_once_a_stay_its_retouches_never_end():
    """Che's time past the window: re-touches always hit, so a block changed at every own touch is written
    once per own miss, sum m r P0, whatever the re-touches add to its occupancy."""
    rates = np.full(1000, 1e-3)
    cache = BufferCache([Segment("s", rates, np.ones(1000), 1.0, retouch=Retouch("again", 2.0, 50.0)),
                         Segment("other", np.full(1000, 1e-3), np.ones(1000))], 1000)
    assert cache.retouch_time > 50.0 and cache.odds["again"].miss == 0.0
    assert cache.odds["s"].writes_per_tx == pytest.approx(1000 * 1e-3 * cache.odds["s"].miss, rel=1e-9)


def test_a_retouch_miss_finds_the_page_its_touch_left():
    """Over a FIFO page cache whose pages stay longer than the re-touch window, a re-touch that misses the
    buffer cache finds its page more often than a read does (the page its touch read in is still there)."""
    rates = np.full(4000, 2.5e-4)
    segs = [Segment("s", rates, np.ones(4000), retouch=Retouch("again", 2.0, 400.0))]
    cache = BufferCache(segs, 400, 1200, page_blocks=1, os_policy="fifo")
    assert cache.retouch_time < 400.0 < cache._t2 and cache.odds["again"].miss > 0.0
    # a read finds its page with P h2 = 0.25; a re-touch 216-400 after its touch, with the page stay T2 = 1,362
    # from an insertion (P 0.75) or uniform on (0, T2) if the touch found it: 0.75 + 0.25 (1 - ~308 / 1,362)
    h2 = cache.odds["s"].os_hit
    assert h2 == pytest.approx(0.254, abs=0.005)
    assert cache.odds["again"].os_hit == pytest.approx((1 - h2) + h2 * (1 - 308 / cache._t2), abs=0.01)


def test_the_solve_survives_very_rare_retouches():
    rates = 1.0 / np.arange(1, 501)
    for k in (1e-15, 1e-12, 1e-9):
        cache = BufferCache([Segment("s", rates, np.ones(500), retouch=Retouch("again", k, 100.0))], 100)
        plain = BufferCache([Segment("s", rates, np.ones(500))], 100)
        assert cache.odds["s"].miss == pytest.approx(plain.odds["s"].miss, rel=1e-6)


def test_retouch_limits():
    r = np.array([0.5, 2.0])
    # re-touches that come at once add no stay and never miss
    assert retouch_rate(r, 2.0, 1e-9, 10.0) == pytest.approx(r)
    assert retouch_miss(2.0, 1e-9, 10.0) == 0.0
    # ... and ones spread far beyond the cache's time add as independent touches and miss as they do
    assert retouch_rate(r, 2.0, 1e12, 1.0) == pytest.approx(3.0 * r, rel=1e-6)
    assert retouch_miss(2.0, 1e12, 1.0) == pytest.approx(1.0, rel=1e-6)
    # a re-touch within the cache's time of its touch always hits
    assert retouch_miss(2.0, 100.0, 100.0) == 0.0 and retouch_miss(2.0, 100.0, 50.0) == pytest.approx(0.5 * math.exp(-1.0))
    # no re-touches: nothing changes
    assert retouch_rate(r, 0.0, 100.0, 10.0) == pytest.approx(r) and retouch_miss(0.0, 100.0, 10.0) == pytest.approx(0.9)
    # past the window a cluster adds its re-touches' span to the stay: I(t) = W - (1 - e^{-k}) / mu, mu = k / W
    k, w = 2.0, 100.0
    assert retouch_rate(np.ones(1), k, w, 300.0)[0] == pytest.approx(1.0 + (w - (1.0 - math.exp(-k)) * w / k) / 300.0)
    # ... and the two branches meet at t = W
    assert retouch_rate(np.ones(1), k, w, w * (1 - 1e-9))[0] == pytest.approx(retouch_rate(np.ones(1), k, w, w)[0])
    # re-touches that never end add as independent touches
    assert retouch_rate(r, 2.0, math.inf, 10.0) == pytest.approx(3.0 * r)
    # at t = 0 every re-touch counts; a short t, by the closed form (t < window)
    assert retouch_rate(r, 2.0, 100.0, 0.0) == pytest.approx(3.0 * r, rel=1e-12)
    mu, t = 2.0 / 100.0, 0.5
    tail = (100.0 - t) * -math.expm1(-mu * t) + t + math.expm1(-mu * t) / mu
    assert retouch_rate(np.ones(1), 2.0, 100.0, t)[0] == pytest.approx(1.0 + tail / t, rel=1e-12)
    # fewer than one re-touch a touch, or a window shorter than a unit of time, by the same forms
    tail = 100.0 - (1.0 - math.exp(-0.5)) * 100.0 / 0.5       # t >= window: W - (1 - e^{-k}) / mu
    assert retouch_rate(np.ones(1), 0.5, 100.0, 300.0)[0] == pytest.approx(1.0 + tail / 300.0, rel=1e-12)
    assert retouch_rate(np.ones(1), 2.0, 0.5, 10.0)[0] == pytest.approx(1.0 + (0.5 - (1.0 - math.exp(-2.0)) * 0.5 / 2.0) / 10.0, rel=1e-12)
    # no window: nothing to re-touch within it
    assert retouch_rate(r, 2.0, 0.0, 10.0) == pytest.approx(r) and retouch_miss(2.0, 0.0, 5.0) == 0.0
    assert retouch_miss(2.0, 0.5, 0.1) == pytest.approx(0.8 * math.exp(-0.4), rel=1e-12)


def test_level2_hit_after_its_limits():
    """No page cache finds nothing, an unbounded one everything; over a FIFO page cache a page inserted by
    the touch stays T2, so a delay within T2 finds it whatever the other blocks do."""
    rho = np.array([0.0, 1e-3])
    assert np.all(level2_hit_after(0.3, rho, 0.0, 10.0, 20.0, "fifo") == 0.0)
    assert np.all(level2_hit_after(0.3, rho, math.inf, 10.0, 20.0, "fifo") == 1.0)
    assert level2_hit_after(0.0, rho, 100.0, 10.0, 20.0, "fifo") == pytest.approx([1.0, 1.0])
    # a found page's remaining stay is uniform on (0, T2): at delays uniform on (10, 20), 1 - 15/100 with no
    # other block to bring it back
    assert level2_hit_after(1.0, np.zeros(1), 100.0, 10.0, 20.0, "fifo")[0] == pytest.approx(0.85, abs=1e-9)
    # past a FIFO stay, with no other block to bring the page back, nothing is found, inserted or found
    assert level2_hit_after(0.5, np.zeros(1), 100.0, 150.0, 250.0, "fifo")[0] == 0.0
    with pytest.raises(ValueError):
        level2_hit_after(0.3, rho, 100.0, 10.0, 20.0, "random")


@pytest.mark.parametrize("blocks, miss", [(0, 1.0), (10_000, 0.0)])
def test_no_cache_misses_everything_and_a_cache_of_everything_nothing(blocks, miss):
    segs = [Segment("s", np.full(100, 1e-3), np.ones(100), 0.5, retouch=Retouch("again", 2.0, 50.0)),
            Segment("other", np.full(100, 1e-3), np.ones(100))]
    cache = BufferCache(segs, blocks)
    assert [cache.odds[k].miss for k in ("s", "again", "other")] == [miss, miss, miss]


def test_retouched_blocks_leave_room_for_the_others():
    """Clustered re-touches hold a block for less time than as many independent touches: the cache's
    time is longer and another segment misses less; the changes per transaction are the own touches'."""
    rates = np.full(1000, 1e-3)
    other = Segment("other", np.full(1000, 1e-3), np.ones(1000))
    clustered = BufferCache([Segment("s", rates, np.ones(1000), 0.5, retouch=Retouch("again", 2.0, 400.0)), other], 600)
    independent = BufferCache([Segment("s", 3.0 * rates, np.ones(1000), 0.5 / 3.0), other], 600)
    assert clustered.odds["other"].miss < independent.odds["other"].miss
    assert clustered.streams() == [("s", pytest.approx(1.0)), ("again", pytest.approx(2.0)), ("other", pytest.approx(1.0))]
    stand_in = {s.name: s for s in clustered.segments}["s"]
    assert stand_in.rates * stand_in.update_share == pytest.approx(rates * 0.5)   # only own touches change it
    assert clustered.hit_ratio() == pytest.approx(1.0 - (1e-3 * 1000 * (clustered.odds["s"].miss + 2.0 * clustered.odds[
        "again"].miss) + 1.0 * clustered.odds["other"].miss) / 4.0)


def test_the_page_cache_is_sent_the_misses_not_the_stand_ins():
    """che_two_level_grouped's miss_scale: level 2 is sent scale x the level-1 misses of the rates given, with
    level 1's hold unchanged; fewer insertions let a FIFO page stay longer. Scale 1 changes nothing."""
    from sim.analytic import che_two_level_grouped
    r = 1.0 / np.arange(1, 2001) ** 0.8
    group = np.arange(2000) // 4
    plain = che_two_level_grouped(r, 200, 100, group, policy="fifo", with_times=True)
    ones = che_two_level_grouped(r, 200, 100, group, policy="fifo", with_times=True, miss_scale=np.ones(2000))
    for a, b in zip(plain, ones):
        assert np.all(a == b)
    half = che_two_level_grouped(r, 200, 100, group, policy="fifo", with_times=True, miss_scale=np.full(2000, 0.5))
    assert np.all(half[0] == plain[0]) and half[2] == plain[2]              # level 1 as it was
    assert half[4] == pytest.approx(0.5 * plain[4], rel=1e-12)               # half the misses sent
    assert half[3] > plain[3]                                                 # a longer stay
    with pytest.raises(ValueError):
        che_two_level_grouped(r, 200, 100, group, policy="fifo", miss_scale=np.full(2000, 3.0))


def test_level2_sees_the_scaled_misses_with_level_1s_hold():
    """One block a unit: level 2 is the renewal FIFO of a unit whose misses, R' e^{-R' dead}, are the scaled
    ones and whose dead time is level 1's hold, R' found here by bisection instead of Lambert W."""
    from scipy.optimize import brentq
    from sim.analytic import _renewal_fifo_level2, che_time, che_two_level_grouped
    r = 1.0 / np.arange(1, 401) ** 0.9
    t1 = che_time(r, 60)
    scaled = che_two_level_grouped(r, 60, 80, np.arange(400), policy="fifo", with_times=True,
                                   miss_scale=np.full(400, 0.6))
    misses = 0.6 * r * np.exp(-r * t1)
    low = np.array([brentq(lambda x: x * math.exp(-x * t1) - m, 0.0, 1.0 / t1) for m in misses])
    h2, t2 = _renewal_fifo_level2(low, np.ones(400), np.full(400, t1), 80.0, with_time=True)
    assert scaled[1] == pytest.approx(h2, abs=1e-9) and scaled[3] == pytest.approx(t2, rel=1e-9)


def test_the_paged_path_sends_the_page_cache_the_re_touch_misses():
    """Pages of 4 blocks over a re-touched segment: the page cache's time and hits are those of the misses
    (the occupancy stand-in sends more: a shorter stay, pinned here), and a re-touch miss finds its page more
    often than a read."""
    segs = [Segment("s", np.full(4000, 2.5e-4), np.ones(4000), retouch=Retouch("again", 2.0, 400.0))]
    cache = BufferCache(segs, 400, 1200, page_blocks=4, os_policy="fifo")
    stand_in = BufferCache([Segment("s", np.full(4000, 2.5e-4 * float(
        retouch_rate(np.ones(1), 2.0, 400.0, cache.retouch_time)[0])), np.ones(4000))], 400, 1200, page_blocks=4,
        os_policy="fifo")
    assert cache._t2 > 1.2 * stand_in._t2
    assert cache.odds["s"].os_hit == pytest.approx(0.254, abs=0.005)
    assert cache.odds["again"].os_hit > cache.odds["s"].os_hit + 0.25
