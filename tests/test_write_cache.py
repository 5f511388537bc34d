"""A controller's write-back cache: acknowledges at bus speed while it has room, holds a
synchronous writer to the destage rate once full, destages faster the more it holds
(shorter seeks between sorted destages), and RAID5 pays read-modify-write at destage."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim.hardware.profile import DiskSpec
from sim.hardware.storage import Controller, Disk, Volume

MS = 1e-3
KB = 1024
CHEETAH = DiskSpec(model="10k", rpm=10000 / 60, avg_seek=4.7 * MS, media_rate=50e6, capacity=34e9,
                   write_cache=True, track_seek=0.3 * MS, full_seek=8.55 * MS)


def _volume(env, cache: float | None, layout: str = "raid5", n: int = 5, seed: int = 1):
    disks = [Disk(env, f"d{i}", CHEETAH, np.random.default_rng(seed + i), overhead=0.2 * MS) for i in range(n)]
    vol = Volume(env, "v", disks, np.random.default_rng(seed), layout, 64 * KB, [Controller(env, "c", 100e6)])
    if cache is not None:
        vol.attach_cache(cache)
    return vol


def _sync_writer(env, vol, seconds: float) -> list[float]:
    """One writer, one 8 KB random write at a time (DBWR with synchronous I/O): its latencies."""
    lat = []

    def writer():
        while True:
            t = env.now
            yield vol.submit("write", 8 * KB)
            lat.append(env.now - t)
    env.process(writer())
    env.run(until=seconds)
    return lat


def test_ack_at_bus_speed_while_the_cache_has_room():
    """Until the cache fills, a write costs the controller overhead plus its transfer, every one: the
    destages (RAID5's read-modify-write: two reads and two writes each) stay inside the RAID box, off the
    host's controller, which carries the host's bytes once."""
    env = simpy.Environment()
    vol = _volume(env, 64 * 2**20)
    lat = _sync_writer(env, vol, 0.5)
    assert len(lat) > 1000
    ack = 0.2 * MS + 8 * KB / 100e6
    assert lat == pytest.approx([ack] * len(lat), abs=1e-12)
    assert vol.cache.full_wait.max == 0.0
    c = vol.cache   # (a drive counts an I/O as it starts: the destages in flight have started some)
    assert c.destages > 100 and 4 * c.destages <= sum(d.ios for d in vol.disks) <= 4 * (c.destages + c.in_flight)
    ctrl = vol.controllers[0]
    assert 8 * KB * len(lat) <= ctrl.bytes <= 8 * KB * (len(lat) + 1)   # (+ the write crossing now)
    assert ctrl.utilisation() == pytest.approx(len(lat) * 8 * KB / 100e6 / 0.5, rel=0.01)
    assert vol.ios == vol.writes == len(lat)   # iostat counts the host's writes as acknowledged, not the destages


def test_full_cache_holds_the_writer_to_the_destage_rate():
    """Once full, accepted writes = destaged writes + what the cache holds, and the rate a
    synchronous writer sees is the RAID5 destage rate: each destage is 4 drive I/Os, so at
    most 5 drives / (4 x (overhead + transfer + rotation/2)) writes per second, and at least
    the rate with a full average seek on every drive I/O."""
    env = simpy.Environment()
    size = 8 * 2**20
    vol = _volume(env, size)
    lat = _sync_writer(env, vol, 30.0)
    c = vol.cache
    assert c.writes == c.destages + (size - c.free) / (8 * KB) + len(c.waiting)
    rate = sum(1 for _ in lat[len(lat) // 2:]) / (30.0 - sum(lat[:len(lat) // 2]))
    op = 0.2 * MS + 8 * KB / 50e6 + 3 * MS
    assert 5 / (4 * (op + 4.7 * MS)) < rate < 5 / (4 * op)
    disk_ios = sum(d.ios for d in vol.disks)   # a write across two stripe units costs 6
    assert 4 * c.destages <= disk_ios <= 6 * (c.destages + c.in_flight)


def test_destage_gains_with_occupancy():
    """A larger cache holds more dirty data, so sorted destages seek less: the sustained rate
    of the same writer is higher with 64 MB than with 1 MB, and all of it bounded by rotation."""
    rates = {}
    for size in (1 * 2**20, 64 * 2**20):
        env = simpy.Environment()
        vol = _volume(env, size)
        _sync_writer(env, vol, 60.0)
        rates[size] = vol.cache.destages / 60.0
    assert rates[64 * 2**20] > 1.15 * rates[1 * 2**20]


def test_same_seed_same_numbers():
    out = []
    for _ in range(2):
        env = simpy.Environment()
        vol = _volume(env, 2 * 2**20)
        out.append(_sync_writer(env, vol, 5.0))
    assert out[0] == out[1]


class _StubVolume:
    """A volume whose every destage takes exactly `service` seconds, all in parallel, with no
    controller (a write is acknowledged `overhead` after it arrives): times can be worked out
    by hand. Records each destage (time, bytes, offset, sequential) and the most in flight."""

    def __init__(self, env, n_disks: int = 1, service: float = 10 * MS, overhead: float = 1 * MS):
        from types import SimpleNamespace
        self.env, self.service = env, service
        self.disks = [SimpleNamespace(overhead=overhead) for _ in range(n_disks)]
        self.controllers = []
        self.destages: list = []
        self.in_flight = self.most_in_flight = 0

    def submit(self, kind, nbytes, offset=None, sequential=False, destage=False):
        assert kind == "write" and destage
        self.destages.append((self.env.now, nbytes, offset, sequential))
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        ev = self.env.timeout(self.service)
        ev.callbacks.append(lambda _e: setattr(self, "in_flight", self.in_flight - 1))
        return ev


def _issue(env, cache, at: float, nbytes: float, offset: float = 0.0, sequential: bool = False) -> list:
    """Issue one write at time `at`; the list gets the time it was acknowledged."""
    acked = []

    def go():
        yield env.timeout(at)
        yield cache.write(nbytes, offset, sequential)
        acked.append(env.now)
    env.process(go())
    return acked


def test_two_destages_per_drive_in_flight_and_the_cache_drains_when_the_writer_stops():
    """20 writes at once into a roomy cache on 3 drives: all acknowledged after the overhead,
    then destaged 6 at a time (2 per drive, DESTAGE_PER_DRIVE), in waves of one destage time,
    until nothing is dirty: the last wave (20 = 6+6+6+2) ends at h + 4 D."""
    from sim.hardware.write_cache import WriteBackCache
    env = simpy.Environment()
    h, d = 1 * MS, 10 * MS
    vol = _StubVolume(env, n_disks=3, service=d, overhead=h)
    cache = WriteBackCache(env, vol, 1 * 2**20)
    acks = [_issue(env, cache, 0.0, 8 * KB, offset=i * 8 * KB) for i in range(20)]
    env.run()
    assert all(a == [h] for a in acks)
    assert vol.most_in_flight == 6
    starts = sorted(t for t, *_ in vol.destages)
    assert np.allclose(starts, [h] * 6 + [h + d] * 6 + [h + 2 * d] * 6 + [h + 3 * d] * 2)
    assert env.now == h + 4 * d
    assert cache.destages == cache.writes == 20
    assert cache.free == cache.size and cache.in_flight == 0 and cache.occupancy() == 0.0
    assert cache.full_wait.n == 20 and cache.full_wait.mean == 0.0


def test_a_write_that_fills_the_cache_exactly_is_acknowledged_and_the_next_waits_for_the_destage():
    """Cache of S bytes. Write A (S bytes) at 0: it fits exactly, acknowledged at h, occupancy 1.
    Write B (S bytes) at 0 waits for A's destage (h .. h + D), then lands: acknowledged at
    2h + D, having waited h + D for room. When B's destage ends (2h + 2D) the cache is empty."""
    from sim.hardware.write_cache import WriteBackCache
    env = simpy.Environment()
    h, d, s = 1 * MS, 10 * MS, 16 * KB
    vol = _StubVolume(env, service=d, overhead=h)
    cache = WriteBackCache(env, vol, s)
    a = _issue(env, cache, 0.0, s)
    b = _issue(env, cache, 0.0, s, offset=s)
    seen = []

    def watch():
        for t in (h / 2, h + d / 2, 2 * h + 2 * d + h):
            yield env.timeout(t - env.now)
            seen.append(cache.occupancy())
    env.process(watch())
    env.run()
    assert a == [h] and b == [2 * h + d]
    assert seen == [1.0, 1.0, 0.0]
    assert [t for t, *_ in vol.destages] == [h, 2 * h + d]
    assert cache.full_wait.n == 2 and cache.full_wait.max == h + d
    assert abs(cache.full_wait.mean - (h + d) / 2) < 1e-15


def test_a_half_full_cache_reports_half_occupancy():
    from sim.hardware.write_cache import WriteBackCache
    env = simpy.Environment()
    cache = WriteBackCache(env, _StubVolume(env), 32 * KB)
    cache.write(8 * KB, 0.0, False)
    cache.write(8 * KB, 8 * KB, False)
    assert cache.occupancy() == 0.5


def test_a_big_write_waiting_for_room_is_not_overtaken_nor_let_in_early():
    """Cache of 16 KB. A (8 KB) at 0 and B (8 KB) at D/2 fill it. C (16 KB) and then E (8 KB)
    arrive at D/2 and wait, in that order. A's destage ends at h + D: 8 KB free is not room for
    C, and E, which would fit, may not pass it. B's ends at 1.5D + h: C lands (ack 1.5D + 2h),
    and E waits for C's destage (1.5D + 2h .. 2.5D + 2h): ack 2.5D + 3h."""
    from sim.hardware.write_cache import WriteBackCache
    env = simpy.Environment()
    h, d = 1 * MS, 10 * MS
    vol = _StubVolume(env, service=d, overhead=h)
    cache = WriteBackCache(env, vol, 16 * KB)
    _issue(env, cache, 0.0, 8 * KB)
    _issue(env, cache, d / 2, 8 * KB, offset=8 * KB)
    c = _issue(env, cache, d / 2, 16 * KB, offset=32 * KB)
    e = _issue(env, cache, d / 2, 8 * KB, offset=64 * KB)
    frees = []

    def watch():   # every h/4 for 3 D, well past the last destage
        for _ in range(int(3 * d / (h / 4))):
            frees.append(cache.free)
            yield env.timeout(h / 4)
    env.process(watch())
    env.run()
    assert np.isclose(c[0], 1.5 * d + 2 * h) and np.isclose(e[0], 2.5 * d + 3 * h)
    assert min(frees) >= 0.0
    # waits for room: none for A and B, D + h for C, 2D + 2h for E (both arrived at D/2)
    assert cache.full_wait.n == 4 and np.isclose(cache.full_wait.max, 2 * d + 2 * h)
    assert np.isclose(cache.full_wait.mean, (3 * d + 3 * h) / 4)


def test_random_destages_sweep_up_from_the_last_and_wrap_to_the_lowest():
    """C-LOOK: the next random destage is the lowest dirty offset at or above the last one destaged, and past the
    highest it wraps to the lowest. One drive (2 destages in flight), overhead h, destage D. A (300 KB) and B (350 KB)
    land at h and take both slots (cursor 350). C (100), D (400), E (200) issued at h/2 land at 1.5h. At h + D both
    slots free: first 400 (the one at or above 350), then, nothing above 400, the wrap to 100; then 200 at h + 2D.
    (A cursor left at 0 would take 100, 200, 400; a wrap to the highest, 200 before 100.)"""
    from sim.hardware.write_cache import WriteBackCache
    env = simpy.Environment()
    h, d = 1 * MS, 10 * MS
    vol = _StubVolume(env, service=d, overhead=h)
    cache = WriteBackCache(env, vol, 1 * 2**20)
    for at, off in [(0.0, 300), (0.0, 350), (h / 2, 100), (h / 2, 400), (h / 2, 200)]:
        _issue(env, cache, at, 8 * KB, offset=off * KB)
    env.run()
    assert [(round(t / MS, 9), off / KB) for t, _n, off, _s in vol.destages] == [
        (1.0, 300), (1.0, 350), (11.0, 400), (11.0, 100), (21.0, 200)]


def test_sequential_writes_go_ahead_of_random_ones():
    """One drive (2 destages in flight): random R1, R2, R3 then sequential S1, S2 land together;
    R1 and R2 start at once, then the redo-like sequential writes jump R3 when room opens."""
    from sim.hardware.write_cache import WriteBackCache
    env = simpy.Environment()
    vol = _StubVolume(env)
    cache = WriteBackCache(env, vol, 1 * 2**20)
    for i, seq in enumerate([False, False, False, True, True]):
        _issue(env, cache, 0.0, 8 * KB, offset=(i + 1) * 100 * KB, sequential=seq)
    env.run()
    assert [(off, seq) for _, _, off, seq in vol.destages] == [
        (100 * KB, False), (200 * KB, False), (400 * KB, True), (500 * KB, True), (300 * KB, False)]


def test_sequential_whole_stripes_destage_without_reading_and_the_cache_drains():
    """RAID5 on 5 drives, 64 KB units: a 256 KB stripe-aligned sequential write destages as 4
    data writes plus one parity write (5 drive I/Os, no read-modify-write, which would take 10)."""
    env = simpy.Environment()
    vol = _volume(env, 4 * 2**20)
    stripe = 4 * 64 * KB
    done = [vol.submit("write", stripe, offset=i * stripe, sequential=True) for i in range(8)]
    env.run()
    assert all(ev.processed for ev in done)
    c = vol.cache
    assert c.destages == c.writes == 8 and c.free == c.size
    assert sum(d.ios for d in vol.disks) == 8 * 5


def test_a_write_larger_than_the_cache_goes_straight_to_the_drives():
    """A write larger than a 128 KB cache bypasses it. 256 KB from 0 is one whole RAID5 stripe on 5
    drives of 64 KB units: 4 data + 1 parity writes, no reads (parity from the new data), so one
    drive operation of overhead + 64 KB at the media rate and more; 256 KB from 32 KB covers no
    stripe whole: read-modify-write, 5 data + 2 parity pieces read, then written (14 drive I/Os)."""
    env = simpy.Environment()
    vol = _volume(env, 128 * KB)
    ev = vol.submit("write", 256 * KB, offset=0.0)
    env.run()
    assert ev.processed
    assert env.now > 0.2 * MS + 64 * KB / 50e6
    assert vol.cache.writes == 0 and vol.cache.free == vol.cache.size
    assert sum(d.ios for d in vol.disks) == 5
    env.run(vol.submit("write", 256 * KB, offset=32.0 * KB))
    assert sum(d.ios for d in vol.disks) == 5 + 14 and vol.cache.writes == 0
    # the host's writes, across the host's controller (its RAID box's reads and writes stay inside)
    assert vol.ios == vol.writes == 2 and vol.controllers[0].bytes == 2 * 256 * KB
    # sequential makes no whole rows of it: nothing gathered it, so its partial rows pay read-modify-write too
    env.run(vol.submit("write", 256 * KB, offset=32.0 * KB, sequential=True))
    assert sum(d.ios for d in vol.disks) == 5 + 14 + 14
    with pytest.raises(ValueError, match="larger than the 131072-byte cache"):   # the cache itself refuses it
        vol.cache.write(256 * KB, 0.0, False)


def test_a_write_the_size_of_the_cache_is_cached():
    """A write of exactly the cache's size fits it (only a larger one goes past): acknowledged once across the
    controller into the cache, overhead + 128 KB / 100 MB/s, and counted as the cache's write."""
    env = simpy.Environment()
    vol = _volume(env, 128 * KB)
    env.run(vol.submit("write", 128 * KB, offset=0.0))
    assert env.now == pytest.approx(0.2 * MS + 128 * KB / 100e6)
    assert vol.cache.writes == 1 and vol.controllers[0].bytes == 128 * KB
    env.run()
    assert vol.cache.destages == 1 and vol.cache.free == vol.cache.size


def _paced_writer(env, vol, per_s: float, until: float = float("inf"), then: float = 0.0) -> None:
    """8 KB random writes arriving every 1/per_s s (then every 1/then s from `until`), not waiting for each
    other (a writer ahead of the cache)."""
    def writer():
        while True:
            vol.submit("write", 8 * KB)
            rate = per_s if env.now < until else then
            yield env.timeout(1.0 / rate)
    env.process(writer())


def test_a_cache_that_fills_settles_full_and_one_that_keeps_up_is_left_alone():
    """A steady state, not the fill: 5 RAID5 drives destage some 200-265 random 8 KB writes/s (more as the
    cache fills: C-LOOK). Offered 400/s, a 64 MB cache fills at ~140 writes/s net with its destager
    saturated; settle fills it at once with stand-ins of the writes' size (free under one write), and the
    writes then wait for destages: it stays full. Offered 50/s or 240/s (above the empty cache's destage
    rate, so it fills a little, then levels off at a few % as its destages draw closer), it is left alone."""
    for rate, fills in ((400.0, True), (240.0, False), (50.0, False)):
        env = simpy.Environment()
        vol = _volume(env, 64 * 2**20)
        _paced_writer(env, vol, rate)
        vol.cache.watch(5.0)
        env.run(until=15.0)
        g = vol.cache.net_fill_rate()
        added = vol.cache.settle()
        assert vol.cache.fill_rate == g
        if fills:
            assert 100 * 8 * KB < g < 200 * 8 * KB and added > 40 * 2**20
            assert vol.cache.free < 8 * KB and len(vol.cache.dirty) > 5000
            vol.cache.watch(env.now)
            env.run(until=20.0)
            assert vol.cache.stays_full() and vol.cache.free < 8 * KB
        else:
            assert added == 0.0 and vol.cache.occupancy() < 0.05


def test_a_filled_cache_whose_writes_slow_gives_its_stand_ins_back():
    """Filled at 400 writes/s, then offered 100/s: the destager makes room faster than writes come, so few
    wait (stays_full false: it is draining to a level part full), and unfill takes back the stand-ins not
    yet destaged: what is left dirty is the writes' own."""
    env = simpy.Environment()
    vol = _volume(env, 64 * 2**20)
    _paced_writer(env, vol, 400.0, until=15.0, then=100.0)
    vol.cache.watch(5.0)
    env.run(until=15.0)
    assert vol.cache.settle() > 40 * 2**20
    vol.cache.watch(env.now)
    env.run(until=25.0)
    assert not vol.cache.stays_full()
    removed = vol.cache.unfill()
    assert removed > 30 * 2**20
    assert all(seq >= 0 for _off, seq, _n in vol.cache.dirty)
    held = sum(n for _off, _seq, n in vol.cache.dirty) + sum(n for _off, n in vol.cache.log)
    assert vol.cache.size - vol.cache.free == pytest.approx(held + vol.cache.in_flight * 8 * KB, abs=64 * 8 * KB)


def test_unfill_everything_takes_back_every_random_write_not_destaged_and_keeps_the_account():
    """Filled at 400 writes/s, then offered 100/s: taking back everything not yet destaged (the timeout's writes
    held again, sim/run.py) leaves no random write dirty, and what the cache holds is then only what is in flight
    or sequential; the bytes taken back leave the accepted total, so accepted = destaged + held still."""
    env = simpy.Environment()
    vol = _volume(env, 64 * 2**20)
    _paced_writer(env, vol, 400.0, until=15.0, then=100.0)
    vol.cache.watch(5.0)
    env.run(until=15.0)
    vol.cache.settle()
    env.run(until=16.0)
    real = sum(n for _off, seq, n in vol.cache.dirty if seq >= 0)
    assert real > 0   # real writes are waiting, beside the stand-ins
    stand_ins = sum(n for _off, seq, n in vol.cache.dirty if seq < 0)
    removed = vol.cache.unfill(everything=True)
    assert removed == pytest.approx(real + stand_ins) and vol.cache.dirty == []
    held = vol.cache.size - vol.cache.free
    assert held == pytest.approx(sum(n for _off, n in vol.cache.log) + vol.cache.in_flight * 8 * KB, abs=8 * KB)
    assert vol.cache.accepted_total - vol.cache.destaged_total == pytest.approx(held)


class _Occupied:
    """A cache stand-in whose occupancy is a function of time."""

    def __init__(self, env, occupancy):
        self.env, self._occupancy = env, occupancy

    def occupancy(self):
        return self._occupancy(self.env.now)


@pytest.mark.parametrize("occupancy, settled_by", [
    (lambda t: max(0.005, 0.02 - 0.001 * t), 20.0),     # falls for 15 s to a floor of 0.5%: settled once a step is flat
    (lambda t: max(0.0, 0.025 - 0.001 * t), 25.0),      # falls to empty: settled under 0.1%
    (lambda t: 0.002 * t if t < 8 else max(0.0, 0.016 - 0.001 * (t - 8)), 25.0),   # fills with DBWR's backlog, then drains
    (lambda t: 0.02 + 0.0001 * t, 5.0),                 # creeps up by less than DRAIN_RISE a step: settled
    (lambda t: max(0.0, 0.5 - 0.0001 * t), 300.0)])     # would take 5,000 s: cut at DRAIN_LIMIT
def test_the_warm_up_goes_on_while_a_cache_fills_or_drains(occupancy, settled_by):
    from sim.run import DRAIN_LIMIT, DRAIN_STEP, _until_drained
    env = simpy.Environment()
    _until_drained(env, [_Occupied(env, occupancy)])
    assert settled_by <= env.now <= settled_by + DRAIN_STEP and env.now <= DRAIN_LIMIT


def test_no_cache_to_drain_is_no_warm_up():
    from sim.run import _until_drained
    env = simpy.Environment()
    _until_drained(env, [])
    assert env.now == 0.0


# ---------------------------------------------------------------- from a mutation round: times worked by hand

class _PlacedStubVolume(_StubVolume):
    """The stub, with a place for settle's stand-ins."""

    def random_offset(self, nbytes):
        return 0.0


def _stub_cache(size, d=100 * MS, h=1 * MS):
    from sim.hardware.write_cache import WriteBackCache
    env = simpy.Environment()
    return env, WriteBackCache(env, _PlacedStubVolume(env, service=d, overhead=h), size)


def test_a_small_write_does_not_pass_a_big_one_waiting_though_it_would_fit():
    """Cache 16 KB, one drive, destage D, ack h. A (8 KB) at 0; B (16 KB) at 0 waits; C (8 KB) at h/2 would fit
    the 8 KB free but waits behind B: B lands when A's destage ends (ack 2h + D), C when B's does (3h + 2D)."""
    h, d = 1 * MS, 10 * MS
    env, cache = _stub_cache(16 * KB, d, h)
    _issue(env, cache, 0.0, 8 * KB)
    b = _issue(env, cache, 0.0, 16 * KB, offset=16 * KB)
    c = _issue(env, cache, h / 2, 8 * KB, offset=64 * KB)
    env.run()
    assert np.isclose(b[0], 2 * h + d) and np.isclose(c[0], 3 * h + 2 * d)


def test_one_destage_lets_in_every_waiting_write_it_makes_room_for():
    """Cache 16 KB: A (16 KB) at 0 fills it; B and C (8 KB each) wait. A's destage ends at h + D: both land, acked
    together at 2h + D (not C a destage later)."""
    h, d = 1 * MS, 10 * MS
    env, cache = _stub_cache(16 * KB, d, h)
    _issue(env, cache, 0.0, 16 * KB)
    b = _issue(env, cache, 0.0, 8 * KB, offset=32 * KB)
    c = _issue(env, cache, 0.0, 8 * KB, offset=64 * KB)
    env.run()
    assert np.isclose(b[0], 2 * h + d) and np.isclose(c[0], 2 * h + d)


def test_the_watch_starts_at_a_write_at_its_first_instant_and_has_no_rate_before_time_passes():
    env, cache = _stub_cache(1 * 2**20)
    cache.watch(0.0)
    cache.write(8 * KB, 0.0, False)          # at the watch's first instant: it starts the watch
    assert cache.net_fill_rate() is None     # no time yet (not a division by zero)
    env.run(until=0.05)
    assert cache.net_fill_rate() == 0.0      # one destage in flight of two: it keeps up


def test_saturated_time_counts_the_open_interval_and_a_watch_begun_saturated():
    """One drive (2 destage slots), D = 100 ms, h = 1 ms. Two 8 KB writes at 0, watched from 0: saturated from h,
    49 of the first 50 ms, nothing destaged: 16 KB / 50 ms. Watched from 5 ms (already saturated), a third write
    then: 8 KB over 45 ms. Three writes at 0: saturated h .. h + D and no more (the third destage runs alone),
    100 of 140 ms, under 90%: the destager keeps up, 0."""
    env, cache = _stub_cache(1 * 2**20)
    cache.watch(0.0)
    cache.write(8 * KB, 0.0, False)
    cache.write(8 * KB, 8 * KB, False)
    env.run(until=0.05)
    assert cache.net_fill_rate() == pytest.approx(16 * KB / 0.05, rel=1e-9)
    env, cache = _stub_cache(1 * 2**20)
    cache.write(8 * KB, 0.0, False)
    cache.write(8 * KB, 8 * KB, False)
    env.run(until=0.005)
    cache.watch(0.005)
    cache.write(8 * KB, 16 * KB, False)
    env.run(until=0.05)
    assert cache.net_fill_rate() == pytest.approx(8 * KB / 0.045, rel=1e-9)
    env, cache = _stub_cache(1 * 2**20)
    cache.watch(0.0)
    for i in range(3):
        cache.write(8 * KB, i * 8 * KB, False)
    env.run(until=0.14)
    assert cache.net_fill_rate() == 0.0


def test_settle_leaves_alone_a_cache_that_keeps_up_or_has_writes_waiting():
    """One write in flight (not saturated, nothing destaged yet): no fill. Cache 20 KB holding four 4 KB writes
    (saturated) with an 8 KB one waiting for room: filling, but already full for the writes that come: no fill."""
    env, cache = _stub_cache(1 * 2**20)
    cache.watch(0.0)
    cache.write(8 * KB, 0.0, False)
    env.run(until=0.05)
    assert cache.settle() == 0.0 and cache.free == 2**20 - 8 * KB
    env, cache = _stub_cache(20 * KB)
    cache.watch(0.0)
    for i in range(4):
        cache.write(4 * KB, i * 4 * KB, False)
    cache.write(8 * KB, 64 * KB, False)
    env.run(until=0.05)
    assert cache.waiting and cache.settle() == 0.0 and cache.free == 4 * KB


def test_settle_fills_with_stand_ins_of_the_watchs_write_size_to_exactly_full_and_unfill_lets_a_waiter_in():
    """Two 32 KB writes before the watch (in flight, saturating the drive), two 8 KB in it: stand-ins are 8 KB
    (the watch's, not the 16 KB mean of all four), as many as fit the 944 KB free: 118, leaving exactly 0. A
    write then waits; unfill takes the stand-ins back and lets it in at once (acked h later, not after a destage)."""
    h = 1 * MS
    env, cache = _stub_cache(1 * 2**20, h=h)
    cache.write(32 * KB, 0.0, False)
    cache.write(32 * KB, 64 * KB, False)
    env.run(until=0.005)
    cache.watch(0.005)
    cache.write(8 * KB, 128 * KB, False)
    cache.write(8 * KB, 136 * KB, False)
    env.run(until=0.05)
    assert cache.settle() == 118 * 8 * KB and cache.free == 0.0
    assert sum(1 for e in cache.dirty if e[1] < 0) == 118
    done = cache.write(8 * KB, 256 * KB, False)
    assert cache.waiting
    assert cache.unfill() == 118 * 8 * KB and not cache.waiting and cache.free == 1 * 2**20 - 88 * KB
    env.run(until=0.05 + 1.5 * h)
    assert done.triggered


def test_stays_full_needs_more_than_half_of_the_watchs_own_writes_to_have_waited():
    """Cache 8 KB: of two writes at 0 one waits: half, not most (not full). Watched again later, one write that finds
    room: none of the watch's waited (the earlier wait is not this watch's)."""
    env, cache = _stub_cache(8 * KB, d=10 * MS)
    cache.watch(0.0)
    cache.write(8 * KB, 0.0, False)
    cache.write(8 * KB, 8 * KB, False)
    env.run(until=0.1)
    assert cache.waited == 1 and not cache.stays_full()
    cache.watch(env.now)
    cache.write(8 * KB, 16 * KB, False)
    env.run(until=0.2)
    assert not cache.stays_full()


def test_a_cache_filling_at_a_quarter_of_its_destage_rate_settles_full():
    """One drive, D = 10 ms: 2 slots destage 200 writes/s; offered 250/s, saturated, it fills at 50/s net, a
    quarter of what it destages (at least MARGIN, a tenth): settle fills it. Watched over 1.0-1.2 s only: the
    destage rate compared is the watch's 200/s, not the 240 destages since 0 over the 0.2 s."""
    h, d = 1 * MS, 10 * MS
    env, cache = _stub_cache(4 * 2**20, d, h)

    def writer():
        i = 0
        while True:
            cache.write(8 * KB, i * 8 * KB, False)
            i += 1
            yield env.timeout(1 / 250)
    env.process(writer())
    env.run(until=1.0)
    cache.watch(1.0)
    env.run(until=1.2)
    g = cache.net_fill_rate()
    assert g == pytest.approx(50 * 8 * KB, rel=0.1)
    assert cache.settle() > 3 * 2**20 and cache.free < 8 * KB
