"""Disks, controllers and volumes against hand-computed cases: each I/O's service time from
seek + rotation + transfer, FCFS and elevator orders, the bus as a FCFS server, where a stripe,
a mirror and RAID5 put each piece (RAID5's small write = 2 reads then 2 writes), read-ahead
segments, and the iostat counters. The rotational delay is drawn from a stub generator that
returns a fixed fraction of the interval, so every time below is exact."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.hardware.profile import DiskSpec
from sim.hardware.storage import Controller, Disk, Volume

MS = 1e-3
KB = 1024
MB = 2.0**20
ROT = 0.01                      # one revolution: 10 ms (6000 rpm = 100 rev/s)
FLAT = DiskSpec(model="flat", rpm=1 / ROT, avg_seek=5 * MS, media_rate=10 * MB, capacity=1e9)
CURVE = DiskSpec(model="curve", rpm=1 / ROT, avg_seek=5 * MS, media_rate=10 * MB, capacity=1e9,
                 track_seek=1 * MS, full_seek=9 * MS)


class FixedRng:
    """uniform(lo, hi) -> lo + frac (hi - lo): rotation = frac x one revolution, no noise."""

    def __init__(self, frac: float = 0.25):
        self.frac = frac
        self.calls = 0

    def uniform(self, lo: float = 0.0, hi: float = 1.0) -> float:
        self.calls += 1
        return lo + self.frac * (hi - lo)

    def random(self, n: int):
        """A block of uniforms, as the drives and volumes draw them (sim/randomness.py Draws): `calls` counts
        those taken from it."""
        rng = self

        class Block(list):
            def __getitem__(self, i):
                rng.calls += 1
                return list.__getitem__(self, i)
        return SimpleNamespace(tolist=lambda: Block([self.frac] * n))


def _disk(env, spec=FLAT, frac=0.25, **kw) -> Disk:
    return Disk(env, "d", spec, FixedRng(frac), **kw)


def _times(env, evs) -> dict:
    done = {}
    for name, ev in evs.items():
        ev.callbacks.append(lambda _e, n=name: done.__setitem__(n, env.now))
    env.run()
    return done


# --- one drive ------------------------------------------------------------------------------

def test_random_io_service_is_overhead_plus_seek_plus_rotation_plus_transfer():
    env = simpy.Environment()
    d = _disk(env, overhead=0.5 * MS)
    s = d.service_time("read", 64 * KB, sequential=False)
    assert s == pytest.approx(0.5 * MS + 5 * MS + 0.25 * ROT + 64 * KB / (10 * MB))
    # a write without a write-back cache positions too
    assert d.service_time("write", 8 * KB, False) == pytest.approx(0.5 * MS + 5 * MS + 0.25 * ROT + 8 * KB / (10 * MB))
    # sequential: no seek, no rotation
    assert d.service_time("read", 64 * KB, True) == pytest.approx(0.5 * MS + 64 * KB / (10 * MB))


def test_a_log_write_waits_for_its_sector_to_come_round_unless_queued_behind_the_last():
    """Write cache off, the next block of a log: issued `gap` after the last write ended (LGWR's
    writes are synchronous), the sector has gone by the command's overhead and the gap, and the
    write waits the rest of the turn; queued behind the last (tagged queuing) it follows at once.
    Over gaps spread over many turns the wait is half a turn on average, with no random draw."""
    env = simpy.Environment()
    d = _disk(env, overhead=0.5 * MS)
    xfer = 8 * KB / (10 * MB)
    t = env.now
    env.run(d.submit("write", 8 * KB, True, 0.5))           # the first: nothing known of the head yet
    assert env.now - t == pytest.approx(0.5 * MS + xfer)

    def after(gap):
        env.run(env.timeout(gap))
        t = env.now
        env.run(d.submit("write", 8 * KB, True))
        return env.now - t
    assert after(3 * MS) == pytest.approx(0.5 * MS + (ROT - 3.5 * MS) + xfer)
    assert after(13 * MS) == pytest.approx(0.5 * MS + (ROT - 3.5 * MS) + xfer)   # a turn later: the same place
    t = env.now
    both = [d.submit("write", 8 * KB, True) for _ in range(2)]
    env.run(both[1])
    assert env.now - t == pytest.approx(0.5 * MS + (ROT - 0.5 * MS) + xfer + xfer)   # the second: no overhead
    gaps = np.random.default_rng(1).exponential(50 * MS, 2000)
    calls = d.rng.calls
    waits = [after(g) - 0.5 * MS - xfer for g in gaps]
    assert d.rng.calls == calls                                # where the head is decides, not a draw
    assert min(waits) >= 0.0 and max(waits) < ROT
    assert np.mean(waits) == pytest.approx(ROT / 2, rel=0.05)


def test_the_platter_turns_as_the_bytes_on_the_track_advance_queued_or_not():
    """Between two on-track writes the bytes the head has passed (end to end, in turns) and the time
    (in turns) agree: a write queued behind the last streams on from where it ended, so the drive
    cannot charge it a command overhead the platter did not turn through."""
    env = simpy.Environment()
    d = _disk(env, overhead=0.5 * MS)
    ends = []
    env.run(d.submit("write", 8 * KB, True, 0.5))
    ends.append((d._end, d._end_time))
    for ev in [d.submit("write", 8 * KB, True) for _ in range(3)]:   # the first at once, two queued
        env.run(ev)
        ends.append((d._end, d._end_time))
    for (e0, t0), (e1, t1) in zip(ends, ends[1:]):
        moved, turned = (e1 - e0) / d.track, (t1 - t0) / d.rotation
        assert (turned - moved + 0.5) % 1.0 - 0.5 == pytest.approx(0.0, abs=1e-9)


def test_a_write_at_an_unlocated_place_off_the_track_seeks():
    """Without an offset the drive takes the place from the position (a share of the stroke, times
    the capacity): a write far from where the last access ended seeks and waits a random turn."""
    env = simpy.Environment()
    d = _disk(env, CURVE, overhead=0.5 * MS)
    env.run(d.submit("read", 8 * KB, False, 0.2))
    t = env.now
    env.run(d.submit("write", 8 * KB, False, 0.7))
    assert env.now - t == pytest.approx(0.5 * MS + d.seek_time(0.5) + 0.25 * ROT + 8 * KB / (10 * MB))


def test_a_log_write_after_the_head_left_its_track_seeks_back():
    """A log sharing its drive with datafiles: once the head has served a read far away, the log's
    next write (sequential, but at a known place) seeks back and waits a random turn; the one after
    it, on the track again, waits only for its sector."""
    env = simpy.Environment()
    d = _disk(env, CURVE, overhead=0.5 * MS)
    xfer = 8 * KB / (10 * MB)
    env.run(d.submit("write", 8 * KB, True, 0.2, offset=0.2 * CURVE.capacity))
    env.run(d.submit("read", 8 * KB, False, 0.7))
    t = env.now
    env.run(d.submit("write", 8 * KB, True, 0.2, offset=0.2 * CURVE.capacity + 8 * KB))
    assert env.now - t == pytest.approx(0.5 * MS + d.seek_time(0.5) + 0.25 * ROT + xfer)
    assert d.head == pytest.approx(0.2)
    t = env.now
    env.run(d.submit("write", 8 * KB, True, 0.2, offset=0.2 * CURVE.capacity + 16 * KB))
    assert env.now - t == pytest.approx(0.5 * MS + (ROT - 0.5 * MS) + xfer)   # at once: the sector just gone


def test_a_read_ahead_hit_leaves_the_head_where_it_was():
    """A read served from the drive's read-ahead moves no head: a block just read that way and then
    rewritten needs a seek back from where the head really is (here 0.7 of the stroke, where a datafile
    read took it) and a random turn, not the wait of a write on the head's track."""
    spec = DiskSpec(model="ra", rpm=1 / ROT, avg_seek=5 * MS, media_rate=10 * MB, capacity=1e9,
                    track_seek=1 * MS, full_seek=9 * MS, cache_segments=4)
    env = simpy.Environment()
    d = Disk(env, "d", spec, FixedRng())
    log = 0.2 * spec.capacity
    env.run(d.submit("read", 8 * KB, False, 0.2, offset=log))
    env.run(d.submit("read", 8 * KB, False, 0.7))
    env.run(d.submit("read", 8 * KB, False, 0.2, offset=log + 8 * KB))
    assert d.prefetch_hits == 1 and d.head == pytest.approx(0.7)
    t = env.now
    env.run(d.submit("write", 8 * KB, False, 0.2, offset=log + 8 * KB))
    assert env.now - t == pytest.approx(d.seek_time(0.5) + 0.25 * ROT + 8 * KB / (10 * MB))
    assert d.head == pytest.approx(0.2)


def test_write_back_drive_acknowledges_after_the_transfer_alone():
    env = simpy.Environment()
    spec = DiskSpec(model="wb", rpm=1 / ROT, avg_seek=5 * MS, media_rate=10 * MB, capacity=1e9, write_cache=True)
    d = Disk(env, "d", spec, FixedRng())
    assert d.service_time("write", 8 * KB, False) == pytest.approx(8 * KB / (10 * MB))
    assert d.service_time("read", 8 * KB, False) == pytest.approx(5 * MS + 0.25 * ROT + 8 * KB / (10 * MB))


def test_seek_curve_closed_form_and_head_movement():
    env = simpy.Environment()
    d = _disk(env, CURVE)
    assert d.seek_time(0.0) == 0.0
    assert d.seek_time(1.0) == pytest.approx(9 * MS)
    assert d.seek_time(0.25) == pytest.approx(1 * MS + 8 * MS * 0.5)
    # no curve: every distance pays avg_seek
    assert _disk(env).seek_time(0.25) == pytest.approx(5 * MS)
    # positioned I/Os: the head travels from 0 to 0.64, then back to 0.0, then stays
    s1 = d.service_time("read", 0.0, False, 0.64)
    assert d.head == 0.64
    assert s1 == pytest.approx(1 * MS + 8 * MS * 0.8 + 0.25 * ROT)
    s2 = d.service_time("read", 0.0, False, 0.0)
    assert s2 == pytest.approx(1 * MS + 8 * MS * 0.8 + 0.25 * ROT)
    assert d.service_time("read", 0.0, False, 0.0) == pytest.approx(0.25 * ROT)   # same place: no seek


def test_fcfs_queue_completes_in_arrival_order_with_cumulative_times():
    env = simpy.Environment()
    d = _disk(env)
    sizes = [8 * KB, 64 * KB, 16 * KB]
    svc = [5 * MS + 0.25 * ROT + b / (10 * MB) for b in sizes]
    done = _times(env, {i: d.submit("read", b) for i, b in enumerate(sizes)})
    ends = [sum(svc[:k + 1]) for k in range(3)]
    assert [done[i] for i in range(3)] == pytest.approx(ends)
    assert d.ios == 3 and d.bytes == sum(sizes)
    assert d.service.mean == pytest.approx(sum(svc) / 3)
    assert d.response.mean == pytest.approx(sum(ends) / 3)
    assert d.response.max == pytest.approx(ends[-1])
    assert not d.busy and d.queued() == 0
    env.run(until=2 * ends[-1])
    assert d.util.mean() == pytest.approx(0.5)      # busy to ends[-1], idle as long again
    d.reset_stats()
    assert (d.ios, d.bytes, d.response.n, d.service.n) == (0, 0.0, 0, 0)
    env.run(until=3 * ends[-1])
    assert d.util.mean() == 0.0                      # the busy time before the reset is gone


def test_elevator_serves_ahead_of_the_head_then_reverses():
    """Head at 0.5 moving up: 0.6, 0.7, 0.9, then back down 0.3, 0.2 (LOOK). FCFS: arrival order."""
    for queue, order in (("elevator", [0.6, 0.7, 0.9, 0.3, 0.2]), ("fcfs", [0.7, 0.2, 0.9, 0.6, 0.3])):
        env = simpy.Environment()
        d = _disk(env, CURVE, queue=queue)
        first = d.submit("read", 0.0, position=0.5)
        evs = {p: d.submit("read", 0.0, position=p) for p in (0.7, 0.2, 0.9, 0.6, 0.3)}
        assert d.queued() == 5 and d.busy
        done = _times(env, {"first": first, **evs})
        assert sorted(evs, key=done.get) == order, queue
        # exact end time: sum of seeks along the path plus a quarter revolution each
        path = [0.0, 0.5] + order
        seeks = [d.seek_time(abs(b - a)) for a, b in zip(path, path[1:])]
        assert max(done.values()) == pytest.approx(sum(seeks) + 6 * 0.25 * ROT)


def test_elevator_reverses_at_the_bottom_too_and_unpositioned_io_goes_first():
    env = simpy.Environment()
    d = _disk(env, CURVE, queue="elevator")
    first = d.submit("read", 0.0, position=0.5)
    d.direction = -1
    evs = {p: d.submit("read", 0.0, position=p) for p in (0.9, 0.2, 0.4, 0.7)}
    evs["seq"] = d.submit("read", 0.0, sequential=True)   # no position: in arrival order, ahead of sorted
    done = _times(env, {"first": first, **evs})
    assert sorted(evs, key=done.get) == ["seq", 0.4, 0.2, 0.7, 0.9]   # down to 0.2, then up again


def test_elevator_sweeps_up_down_and_up_again():
    """Head at 0.5 going up: 0.7, reverse for 0.3; requests at 0.1, 0.8, 0.9 arriving meanwhile are
    served on the way down (0.1), then, reversing at the bottom, upwards: 0.8 before 0.9."""
    env = simpy.Environment()
    d = _disk(env, CURVE, queue="elevator")
    d.submit("read", 0.0, position=0.5)
    order = []

    def arrive(_e):
        for p in (0.9, 0.1, 0.8):
            d.submit("read", 0.0, position=p).callbacks.append(lambda _e, p=p: order.append(p))
    first = d.submit("read", 0.0, position=0.7)
    first.callbacks += [lambda _e: order.append(0.7), arrive]
    d.submit("read", 0.0, position=0.3).callbacks.append(lambda _e: order.append(0.3))
    env.run()
    assert order == [0.7, 0.3, 0.1, 0.8, 0.9]


def test_elevator_serves_requests_at_the_same_place_in_arrival_order():
    env = simpy.Environment()
    d = _disk(env, CURVE, queue="elevator")
    d.submit("read", 0.0, position=0.1)
    order = []
    for k in range(3):
        d.submit("read", 0.0, position=0.5).callbacks.append(lambda _e, k=k: order.append(k))
    env.run()
    assert order == [0, 1, 2]


def test_unpositioned_random_io_on_a_curve_lands_in_the_band():
    env = simpy.Environment()
    d = _disk(env, CURVE, frac=0.5, band=0.4)
    d.submit("read", 0.0)
    env.run()
    assert d.head == pytest.approx(0.2)   # uniform(0, band) -> band / 2 with the stub


def test_read_ahead_hits_continuing_streams_and_evicts_the_least_recent():
    env = simpy.Environment()
    spec = DiskSpec(model="ra", rpm=1 / ROT, avg_seek=5 * MS, media_rate=10 * MB, capacity=1e9, cache_segments=2)
    d = Disk(env, "d", spec, FixedRng())
    seq_svc = 8 * KB / (10 * MB)
    rnd_svc = 5 * MS + 0.25 * ROT + seq_svc

    def read(off):
        t = env.now
        ev = d.submit("read", 8 * KB, offset=off)
        env.run(ev)
        return env.now - t
    assert read(0.0) == pytest.approx(rnd_svc)            # a new stream seeks
    assert read(8 * KB) == pytest.approx(seq_svc)         # continues it: prefetched
    assert read(1e6) == pytest.approx(rnd_svc)            # second stream
    assert read(16 * KB) == pytest.approx(seq_svc)        # two segments hold both streams
    assert read(1e6 + 8 * KB) == pytest.approx(seq_svc)
    assert d.prefetch_hits == 3
    assert read(5e6) == pytest.approx(rnd_svc)            # a third stream evicts the older (stream 1)
    assert read(24 * KB) == pytest.approx(rnd_svc)        # stream 1 lost its segment
    assert read(5e6 + 8 * KB) == pytest.approx(seq_svc)
    assert d.prefetch_hits == 4
    # writes never hit the read-ahead: one elsewhere seeks and waits for its sector
    t = env.now
    env.run(d.submit("write", 8 * KB, offset=9e6))
    assert env.now - t == pytest.approx(rnd_svc)


# --- the bus ----------------------------------------------------------------------------------

def test_controller_is_a_fcfs_server_at_its_bandwidth():
    env = simpy.Environment()
    c = Controller(env, "c", 1 * MB)
    done = _times(env, {"a": c.transfer(1 * MB), "b": c.transfer(2 * MB)})
    assert done == pytest.approx({"a": 1.0, "b": 3.0})
    assert c.bytes == 3 * MB
    env.run(until=10.0)
    ev = simpy.Event(env)
    assert c.transfer(0.5 * MB, ev) is ev             # idle bus: starts now, not at free_at
    env.run()
    assert env.now == pytest.approx(10.5)


def test_controller_utilisation_is_its_busy_share_of_the_window():
    """FCFS keeps a bus busy from a transfer's start to free_at: its busy time is what was booked less what is
    still queued. A reset in the middle of a transfer leaves the rest to the new window."""
    env = simpy.Environment()
    c = Controller(env, "c", 1 * MB)
    c.transfer(1 * MB)
    c.transfer(2 * MB)                                # busy 0-3 s
    env.run(until=2.0)
    assert c.utilisation() == pytest.approx(1.0)      # booked 3 s, 1 s still to go
    env.run(until=4.0)
    assert c.utilisation() == pytest.approx(0.75)     # busy 3 s of 4
    env.run(until=5.0)
    c.transfer(2 * MB)                                # busy 5-7 s
    env.run(until=6.0)
    c.reset_stats()
    env.run(until=8.0)
    assert c.utilisation() == pytest.approx(0.5) and c.bytes == 0.0   # of 6-8 s, busy 6-7 s


@given(st.lists(st.tuples(st.floats(0.0, 2.0), st.floats(1.0, 4 * MB)), min_size=1, max_size=30),
       st.floats(0.1, 30.0))
@settings(max_examples=60, deadline=None)
def test_controller_utilisation_counts_the_time_some_transfer_is_under_way(arrivals, until):
    """Against the union of the transfers' intervals, which FCFS makes [start, end) back to back: the same
    busy share at any moment, never above 1."""
    env = simpy.Environment()
    c = Controller(env, "c", 1 * MB)
    intervals = []

    def arrive(gap, nbytes):
        yield env.timeout(gap)
        start = max(env.now, c.free_at)
        c.transfer(nbytes)
        intervals.append((start, c.free_at))

    def source():
        for gap, nbytes in arrivals:
            yield from arrive(gap, nbytes)

    env.process(source())
    env.run(until=until)
    busy = sum(max(0.0, min(end, until) - start) for start, end in intervals)
    assert c.utilisation() == pytest.approx(busy / until, abs=1e-9) and c.utilisation() <= 1.0 + 1e-12



def test_controller_utilisation_of_an_empty_window_is_zero_and_an_idle_reset_books_nothing():
    """At the window's first instant (t = 0, or a reset's) there is no time to share: 0, not a division by zero.
    A reset while the bus is idle (1 MB across 0-1 s, reset at 2 s) carries nothing over: a 1 MB transfer at 4-5 s
    is 1 s busy of the 4 s window at 6 s, 0.25 (had the reset booked free_at - now = -1 s, it would read 0)."""
    env = simpy.Environment()
    c = Controller(env, "c", 1 * MB)
    assert c.utilisation() == 0.0
    c.transfer(1 * MB)
    env.run(until=2.0)
    c.reset_stats()
    assert c.booked == 0.0 and c.utilisation() == 0.0
    env.run(until=4.0)
    c.transfer(1 * MB)
    env.run(until=6.0)
    assert c.utilisation() == pytest.approx(0.25) and c.bytes == 1 * MB

# --- volumes ----------------------------------------------------------------------------------

def _vol(layout, n, spec=FLAT, su=64 * KB, controllers=None, frac=0.25, size=None):
    env = simpy.Environment()
    disks = [Disk(env, f"d{i}", spec, FixedRng(frac)) for i in range(n)]
    return env, disks, Volume(env, "v", disks, FixedRng(frac), layout, su, controllers, size)


def test_stripe_puts_each_unit_on_the_next_drive():
    env, disks, vol = _vol("stripe", 4, CURVE)
    cap = CURVE.capacity
    vol.submit("read", 8 * KB, 5 * 64 * KB + 100)        # unit 5: drive 1, row 1
    env.run()
    assert [d.ios for d in disks] == [0, 1, 0, 0]
    assert disks[1].head == pytest.approx((64 * KB + 100) / cap)
    # 200 KB from the middle of unit 2: 32 KB on drive 2, 64 KB on 3, 64 on 0 (row 1), 40 on 1 (row 1)
    vol.submit("read", 200 * KB, 2 * 64 * KB + 32 * KB)
    env.run()
    assert [d.bytes for d in disks] == [64 * KB, 8 * KB + 40 * KB, 32 * KB, 64 * KB]
    assert disks[0].head == pytest.approx(64 * KB / cap)
    assert disks[2].head == pytest.approx(32 * KB / cap)
    assert vol.ios == 2 and vol.bytes == 208 * KB
    vol.reset_stats()
    assert vol.ios == 0 and vol.bytes == 0.0 and all(d.ios == 0 and d.bytes == 0.0 for d in disks)


def test_sequential_io_without_an_offset_continues_the_last_and_restarts_at_the_end():
    """A raw log on a stripe: each write goes where the last ended (a 64 KB unit on one drive, then
    the next drive), told to the drives so they see one stream each; one that would run past the
    volume's end begins again at its start. No random place is drawn."""
    env, disks, vol = _vol("stripe", 2, CURVE)
    calls = vol.rng.calls
    for _ in range(16):
        vol.submit("write", 8 * KB, sequential=True)
        env.run()
    assert [d.ios for d in disks] == [8, 8] and vol.append_at == 128 * KB
    assert [d._end for d in disks] == [64 * KB, 64 * KB]
    assert vol.rng.calls == calls
    vol.append_at = vol.capacity - 8 * KB       # exactly room for one more
    vol.submit("write", 8 * KB, sequential=True)
    env.run()
    assert vol.append_at == vol.capacity
    vol.append_at = vol.capacity - 4 * KB
    vol.submit("write", 8 * KB, sequential=True)
    env.run()
    assert vol.append_at == 8 * KB and disks[0]._end == 8 * KB


def test_raid5_log_write_after_the_head_left_seeks_back_for_its_old_data():
    """A raw log on RAID5 without a controller cache: each small write reads its old data and parity,
    then rewrites them. After a datafile read takes drive 1's head to 0.7 of the stroke, the log's
    next write there reads its old data only after seeking back (and a random turn); its rewrite,
    of what was just read, waits a turn less the transfer."""
    env, disks, vol = _vol("raid5", 4, CURVE)
    env.run(vol.submit("write", 8 * KB, sequential=True))        # row 0: parity on drive 0, data on 1
    env.run(disks[1].submit("read", 8 * KB, False, 0.7))       # a datafile read far away on drive 1
    t = env.now
    env.run(vol.submit("write", 8 * KB, sequential=True))        # the log's next write, at 8 KB
    xfer = 8 * KB / (10 * MB)
    assert env.now - t == pytest.approx(disks[1].seek_time(0.7 - 8 * KB / CURVE.capacity) + 0.25 * ROT + xfer
                                        + (ROT - xfer) + xfer)


def test_cached_raid5_log_destage_writes_parity_as_contiguously_as_the_data():
    """A write-back cache destages a log of 16 KB writes over one RAID5 row (4 drives, 3 data units
    of 64 KB). Each piece's parity (a third of it) lies where its data starts in the row, scaled to
    one unit: the parity drive writes 0, 5.33, 10.67, ... KB, each where the last ended."""
    env, disks, vol = _vol("raid5", 4, CURVE)
    places = []
    submit = disks[0].submit

    def spy(kind, nbytes, sequential=False, position=None, offset=None, **kw):
        places.append((offset, nbytes))
        return submit(kind, nbytes, sequential, position, offset, **kw)
    disks[0].submit = spy
    for i in range(12):
        env.run(vol.submit("write", 16 * KB, i * 16 * KB, sequential=True, destage=True))
    assert [o for o, _n in places] == pytest.approx([i * 16 * KB / 3 for i in range(12)])
    assert all(o + n == pytest.approx(o2) for (o, n), (o2, _n) in zip(places, places[1:]))


def test_unlocated_random_offset_is_uniform_over_the_capacity():
    env, disks, vol = _vol("stripe", 4, size=4 * 64 * KB + 8 * KB, frac=0.5)
    assert vol.capacity == 4 * 64 * KB + 8 * KB
    vol.submit("read", 8 * KB)          # offset = (capacity - 8 KB) / 2 = 128 KB: unit 2
    env.run()
    assert [d.ios for d in disks] == [0, 0, 1, 0]
    assert all(d.band == pytest.approx(vol.capacity / (4 * FLAT.capacity)) for d in disks)
    env, disks, vol = _vol("stripe", 4, size=4 * 64 * KB, frac=1.0)
    vol.submit("read", 8 * KB)          # the highest offset a random I/O may take: capacity - 8 KB
    env.run()
    assert [d.ios for d in disks] == [0, 0, 0, 1]


def test_random_blocks_are_aligned_so_none_straddles_a_stripe_unit():
    """Oracle's blocks sit at block-aligned offsets, so an 8 KB block on 64 KB units is always on one
    drive: 4,000 random 8 KB reads are 4,000 drive I/Os (unaligned, 1 in 8 would split in two), spread
    evenly (each of 4 drives within 4 sigma of 1,000) and every offset a multiple of 8 KB."""
    import numpy as np
    env = simpy.Environment()
    disks = [Disk(env, f"d{i}", FLAT, np.random.default_rng(i)) for i in range(4)]
    vol = Volume(env, "v", disks, np.random.default_rng(7), "stripe", 64 * KB)
    seen = []
    for d in disks:
        orig = d.submit

        def spy(kind, nbytes, seq=False, position=None, offset=None, *a, _orig=orig, **kw):
            seen.append(position * FLAT.capacity)
            return _orig(kind, nbytes, seq, position, offset, *a, **kw)
        d.submit = spy
    for _ in range(4000):
        vol.submit("read", 8 * KB)
    env.run()
    assert vol.ios == sum(d.ios for d in disks) == 4000
    assert all(abs(d.ios - 1000) < 4 * math.sqrt(1000 * 0.75) for d in disks)
    assert all(abs(p / (8 * KB) - round(p / (8 * KB))) < 1e-6 for p in seen)


def test_mirror_reads_from_the_idler_drive_and_writes_to_all():
    env, disks, vol = _vol("mirror", 2)
    assert vol.capacity == FLAT.capacity
    svc = 5 * MS + 0.25 * ROT + 8 * KB / (10 * MB)
    r = [vol.submit("read", 8 * KB, 0.0) for _ in range(3)]   # d0, d1 (d0 busy), then d0 (both busy, tie)
    done = _times(env, dict(enumerate(r)))
    assert [d.ios for d in disks] == [2, 1]
    assert [done[i] for i in range(3)] == pytest.approx([svc, svc, 2 * svc])
    w = vol.submit("write", 8 * KB, 0.0)
    t0 = env.now
    env.run(w)
    # d0 has just read that block: its sector has gone by, and the write waits a turn for it
    assert [d.ios for d in disks] == [3, 2] and env.now - t0 == pytest.approx(ROT)


def test_iostat_counts_the_hosts_reads_and_writes_and_the_drives_their_own():
    """r/s and w/s are the host's I/Os, as iostat on the volume shows them: a mirrored write is one write to the
    host and one to each drive; a reset starts both counts afresh."""
    env, disks, vol = _vol("mirror", 2)
    for kind in ("read", "write", "write", "read", "read"):
        env.run(vol.submit(kind, 8 * KB, 0.0))
    assert (vol.ios, vol.writes) == (5, 2)
    assert [(d.ios, d.writes) for d in disks] == [(5, 2), (2, 2)]   # one read at a time: the first idle drive
    vol.reset_stats()
    env.run(vol.submit("write", 8 * KB, 0.0))
    assert (vol.ios, vol.writes) == (1, 1) and [(d.ios, d.writes) for d in disks] == [(1, 1), (1, 1)]


def test_raid5_small_write_is_two_reads_then_two_writes():
    """4 drives, 64 KB units, an 8 KB write in unit 4: row 1 (4 // 3), parity on drive 1,
    data on the row's second data drive (4 % 3 = 1, shifted past the parity drive): drive 2."""
    env, disks, vol = _vol("raid5", 4)
    assert vol.capacity == 3 * FLAT.capacity
    reads, writes = [], []
    for d in disks:
        orig = d.submit

        def spy(kind, nbytes, *a, _d=d, _orig=orig, **kw):
            (reads if kind == "read" else writes).append((_d.name, nbytes, env.now))
            return _orig(kind, nbytes, *a, **kw)
        d.submit = spy
    svc = 5 * MS + 0.25 * ROT + 8 * KB / (10 * MB)
    ev = vol.submit("write", 8 * KB, 4 * 64 * KB + 16 * KB)
    env.run(ev)
    assert sorted(reads) == [("d1", 8 * KB, 0.0), ("d2", 8 * KB, 0.0)]
    assert sorted(w[:2] for w in writes) == [("d1", 8 * KB), ("d2", 8 * KB)]
    assert all(t == pytest.approx(svc) for *_, t in writes)    # the writes wait for both reads
    # each write goes where its read just was: a turn less its transfer, then the transfer
    assert env.now == pytest.approx(svc + ROT)
    assert [d.ios for d in disks] == [0, 2, 2, 0]
    # a read of the same block touches the data drive alone
    env.run(vol.submit("read", 8 * KB, 4 * 64 * KB + 16 * KB))
    assert [d.ios for d in disks] == [0, 2, 3, 0]
    # parity rotates: unit 0 is row 0, parity on drive 0, data on drive 1
    env.run(vol.submit("write", 8 * KB, 0.0))
    assert [d.ios for d in disks] == [2, 4, 3, 0]
    # unit 3 opens row 1 (3 data units a row): data on drive 0, parity on drive 1
    env.run(vol.submit("write", 8 * KB, 3 * 64 * KB))
    assert [d.ios for d in disks] == [4, 6, 3, 0]


def test_volume_reset_clears_its_write_cache_counters_too():
    env, disks, vol = _vol("raid5", 4)
    vol.attach_cache(1 * MB)
    env.run(vol.submit("write", 8 * KB, 0.0))
    env.run()
    assert vol.cache.writes == 1 and vol.cache.destages == 1 and vol.cache.full_wait.n == 1
    assert vol.ios == 1 and sum(d.ios for d in disks) == 4    # the destage: 2 reads + 2 writes
    vol.reset_stats()
    assert vol.cache.writes == vol.cache.destages == vol.cache.full_wait.n == 0
    assert vol.ios == 0 and sum(d.ios for d in disks) == 0


def test_raid5_write_over_two_units_updates_parity_over_their_union():
    """96 KB from 32 KB into unit 0 (4 drives, row 0, parity on drive 0): 32 KB on drive 1 and 64 KB
    on drive 2; the parity pieces cover both units' ranges, [32, 64) and [0, 64) KB: 64 KB read and
    written on drive 0."""
    env, disks, vol = _vol("raid5", 4)
    env.run(vol.submit("write", 96 * KB, 32 * KB))
    assert [d.bytes for d in disks] == [2 * 64 * KB, 2 * 32 * KB, 2 * 64 * KB, 0.0]
    assert [d.ios for d in disks] == [2, 2, 2, 0]


def test_a_stripe_tells_its_drives_where_the_piece_lies_so_read_ahead_works():
    """8 KB reads one after another over 256 KB of a 2-drive stripe (64 KB units) of read-ahead
    drives: each drive's pieces are contiguous on it (units 0, 2 on drive 0 at 0 and 64 KB), so only
    the first read on each drive misses. Without an offset (random reads) nothing is told."""
    spec = DiskSpec(model="ra", rpm=1 / ROT, avg_seek=5 * MS, media_rate=10 * MB, capacity=1e9, cache_segments=2)
    env, disks, vol = _vol("stripe", 2, spec)
    for k in range(32):
        env.run(vol.submit("read", 8 * KB, k * 8 * KB))
    assert [d.prefetch_hits for d in disks] == [15, 15]
    assert [d.ios for d in disks] == [16, 16]
    env, disks, vol = _vol("stripe", 2, spec)
    for k in range(8):
        env.run(vol.submit("read", 8 * KB))
    assert sum(d.prefetch_hits for d in disks) == 0


def test_raid5_sequential_destage_writes_data_plus_its_parity_share():
    env, disks, vol = _vol("raid5", 4)
    env.run(vol.submit("write", 3 * 64 * KB, 0.0, sequential=True, destage=True))
    # row 0: parity on drive 0, data on 1, 2, 3, and one parity unit: nbytes / 3 data drives
    assert [d.bytes for d in disks] == [64 * KB] * 4
    assert all(d.ios == 1 for d in disks)
    # the next row (units 3-5): parity on drive 1 (row 1 % 4), data on drives 0, 2, 3
    env.run(vol.submit("write", 3 * 64 * KB, 3 * 64 * KB, sequential=True, destage=True))
    assert [d.bytes for d in disks] == [2 * 64 * KB] * 4
    assert disks[1].ios == 2
    # a piece of a row the cache gathers: its share of the row's parity, a third, no reads
    env, disks, vol = _vol("raid5", 4)
    env.run(vol.submit("write", 12 * KB, 0.0, sequential=True, destage=True))
    assert [d.bytes for d in disks] == [4 * KB, 12 * KB, 0.0, 0.0] and [d.ios for d in disks] == [1, 1, 0, 0]


def test_raid5_over_two_drives_alternates_parity_and_over_one_is_refused():
    """Two drives: each row is one data unit and its parity; parity on drive row % 2, data on the
    other. One drive has no room for parity: refused (it used to fail at the first I/O)."""
    env, disks, vol = _vol("raid5", 2)
    env.run(vol.submit("read", 8 * KB, 0.0))           # row 0: parity on 0, data on 1
    env.run(vol.submit("read", 8 * KB, 64 * KB))       # row 1: parity on 1, data on 0
    assert [d.ios for d in disks] == [1, 1] and vol.capacity == FLAT.capacity
    env.run(vol.submit("write", 8 * KB, 64 * KB))
    assert [d.ios for d in disks] == [3, 3]
    with pytest.raises(ValueError, match="RAID5 needs at least 2 disks"):
        _vol("raid5", 1)


def _spy(env, disks):
    """Record (drive, kind, bytes, time) of every I/O the volume gives its drives."""
    log = []
    for d in disks:
        orig = d.submit

        def spy(kind, nbytes, *a, _d=d, _orig=orig, **kw):
            log.append((_d.name, kind, nbytes, env.now))
            return _orig(kind, nbytes, *a, **kw)
        d.submit = spy
    return log


def test_raid5_write_over_two_rows_updates_each_rows_parity_on_its_own_drive():
    """3 drives (2 data units a row), 64 KB units; 64 KB from 96 KB: 32 KB of unit 1 (row 0, parity
    drive 0, data drive 2) and 32 KB of unit 2 (row 1, parity drive 1, data drive 0). Each row's
    parity is read and written on that row's parity drive (drive 1 too, not only the first row's),
    the writes after all the reads."""
    env, disks, vol = _vol("raid5", 3)
    log = _spy(env, disks)
    read_ends = []
    for d in disks:                       # when each drive's reads complete, too
        spied = d.submit

        def timed(kind, nbytes, *a, _spied=spied, **kw):
            ev = _spied(kind, nbytes, *a, **kw)
            if kind == "read":
                ev.callbacks.append(lambda _e: read_ends.append(env.now))
            return ev
        d.submit = timed
    env.run(vol.submit("write", 64 * KB, 96 * KB))
    reads = sorted((d, b) for d, k, b, _ in log if k == "read")
    writes = sorted((d, b) for d, k, b, _ in log if k == "write")
    assert reads == writes == [("d0", 32 * KB), ("d0", 32 * KB), ("d1", 32 * KB), ("d2", 32 * KB)]
    assert max(t for _d, k, _b, t in log if k == "read") == 0.0
    # every write goes out when the last read is in, not before: drive 0's two reads, one after the other,
    # 2 x (5 ms seek + a quarter turn + 32 KB at 10 MB/s); the others' end at half that
    svc = 5 * MS + 0.25 * ROT + 32 * KB / (10 * MB)
    assert sorted(read_ends) == pytest.approx([svc, svc, svc, 2 * svc])
    assert [t for _d, k, _b, t in log if k == "write"] == pytest.approx([2 * svc] * 4)


def test_raid5_write_of_whole_rows_needs_no_reads():
    """A write covering whole stripe rows computes parity from the new data: 4 drives, two full rows
    (6 units from offset 0): data on the 3 data drives of each row, 64 KB of parity on drive 0 (row 0)
    and drive 1 (row 1), no reads; drives 0 and 1 serve a data piece and a parity piece each, so the
    write is done after two 64 KB services.
    A write covering a row and a half is read-modify-write for all of it."""
    env, disks, vol = _vol("raid5", 4)
    log = _spy(env, disks)
    env.run(vol.submit("write", 6 * 64 * KB, 0.0))
    assert not [x for x in log if x[1] == "read"]
    assert [d.bytes for d in disks] == [2 * 64 * KB] * 4
    assert env.now == pytest.approx(2 * (5 * MS + 0.25 * ROT + 64 * KB / (10 * MB)))
    env, disks, vol = _vol("raid5", 4)
    log = _spy(env, disks)
    env.run(vol.submit("write", 4 * 64 * KB, 0.0))
    assert sum(x[2] for x in log if x[1] == "read") == sum(x[2] for x in log if x[1] == "write") == 6 * 64 * KB


def test_mirror_and_raid5_tell_their_drives_where_the_piece_lies_so_read_ahead_works():
    """Consecutive 8 KB reads: on a mirror every read after the first continues the stream of the
    drive it lands on (each drive holds the whole image at the volume's offsets); on RAID5 (3 drives,
    64 KB units) a drive's units are contiguous on it, so only the first read of each unit's run on
    a drive misses."""
    spec = DiskSpec(model="ra", rpm=1 / ROT, avg_seek=5 * MS, media_rate=10 * MB, capacity=1e9, cache_segments=2)
    env, disks, vol = _vol("mirror", 2, spec)
    for k in range(16):
        env.run(vol.submit("read", 8 * KB, k * 8 * KB))
    assert sum(d.prefetch_hits for d in disks) == 15    # one idle drive takes them all: d0
    env, disks, vol = _vol("raid5", 3, spec)
    for k in range(16):                                 # units 0, 1: row 0, drives 1 and 2
        env.run(vol.submit("read", 8 * KB, k * 8 * KB))
    assert [d.prefetch_hits for d in disks] == [0, 7, 7]


def test_asm_normal_mirror_copy_lies_in_the_other_half_of_the_group():
    """6 drives, two failure groups of 3: unit 0 on drive 0, its copy on drive 3; unit 4 on
    drive 4, its copy on drive 1."""
    env, disks, vol = _vol("normal", 6, su=MB)
    env.run(vol.submit("write", 8 * KB, 0.0))
    assert [d.ios for d in disks] == [1, 0, 0, 1, 0, 0]
    env.run(vol.submit("write", 8 * KB, 4 * MB))
    assert [d.ios for d in disks] == [1, 1, 0, 1, 1, 0]
    env.run(vol.submit("read", 8 * KB, 4 * MB))          # reads the primary copy only
    assert [d.ios for d in disks] == [1, 1, 0, 1, 2, 0]


def test_a_read_over_two_drives_completes_when_the_slower_piece_does():
    env = simpy.Environment()
    slow = DiskSpec(model="slow", rpm=1 / ROT, avg_seek=5 * MS, media_rate=1 * MB, capacity=1e9)
    disks = [Disk(env, "fast", FLAT, FixedRng()), Disk(env, "slow", slow, FixedRng())]
    vol = Volume(env, "v", disks, FixedRng(), "stripe", 64 * KB)
    env.run(vol.submit("read", 128 * KB, 0.0))
    assert env.now == pytest.approx(5 * MS + 0.25 * ROT + 64 * KB / MB)


def test_controller_transfer_follows_the_drive():
    """Drive i's bytes cross controller i % n after the drive's service: done = service + bytes / bw."""
    env = simpy.Environment()
    disks = [Disk(env, f"d{i}", FLAT, FixedRng()) for i in range(3)]
    ctrl = [Controller(env, "c0", 1 * MB), Controller(env, "c1", 2 * MB)]
    vol = Volume(env, "v", disks, FixedRng(), "stripe", 64 * KB, ctrl)
    svc = 5 * MS + 0.25 * ROT + 64 * KB / (10 * MB)
    done = _times(env, {u: vol.submit("read", 64 * KB, u * 64 * KB) for u in range(3)})
    assert done[1] == pytest.approx(svc + 64 * KB / (2 * MB))         # drive 1 on controller 1
    # drives 0 and 2 share controller 0: the second transfer queues behind the first
    assert sorted([done[0], done[2]]) == pytest.approx([svc + 64 * KB / MB, svc + 2 * 64 * KB / MB])
    assert ctrl[0].bytes == 2 * 64 * KB and ctrl[1].bytes == 64 * KB


def test_volume_with_no_disks_or_a_bad_queue_is_refused():
    env = simpy.Environment()
    with pytest.raises(ValueError, match="no disks"):
        Volume(env, "v", [], FixedRng())
    with pytest.raises(ValueError, match="fcfs"):
        Disk(env, "d", FLAT, FixedRng(), queue="sstf")
    assert math.isfinite(_disk(env).rotation)


# --- round 4 of mutation testing: where the pieces lie, the ends of the random range ---------

def test_raid5_parity_piece_lies_where_its_rows_data_does_on_the_parity_drive():
    """The parity of a unit's range sits at the same place on the parity drive as the data on its
    data drive (row x unit + offset in the unit), so the parity drive's head goes there: an 8 KB
    write 16 KB into unit 4 (row 1: parity drive 1, data drive 2) leaves both heads at 80 KB; 96 KB
    from 32 KB into unit 3 (row 1: 32 KB on drive 0, 64 KB on drive 2) updates parity over the union
    of both units' ranges, [0, 64) KB of row 1 on drive 1, so its head rests at 64 KB."""
    cap = CURVE.capacity
    env, disks, vol = _vol("raid5", 4, CURVE)
    env.run(vol.submit("write", 8 * KB, 4 * 64 * KB + 16 * KB))
    assert [d.ios for d in disks] == [0, 2, 2, 0]
    assert disks[1].head == disks[2].head == pytest.approx(80 * KB / cap)
    env, disks, vol = _vol("raid5", 4, CURVE)
    env.run(vol.submit("write", 96 * KB, 3 * 64 * KB + 32 * KB))
    assert [d.bytes for d in disks] == [2 * 32 * KB, 2 * 64 * KB, 2 * 64 * KB, 0.0]
    assert disks[0].head == pytest.approx(96 * KB / cap)
    assert disks[1].head == disks[2].head == pytest.approx(64 * KB / cap)


def test_raid5_whole_row_write_completes_only_once_its_parity_is_written():
    """Two drives, a 64 KB write of row 0 (data on drive 1, parity on drive 0, no reads) while drive 0
    is serving an 8 KB read of row 3 (off row 0's track): the data is down after one 64 KB service,
    but the write is done when the parity is, behind the read."""
    env, disks, vol = _vol("raid5", 2)
    svc = {b: 5 * MS + 0.25 * ROT + b / (10 * MB) for b in (8 * KB, 64 * KB)}
    done = _times(env, {"read": vol.submit("read", 8 * KB, 3 * 64 * KB), "write": vol.submit("write", 64 * KB, 0.0)})
    assert [d.ios for d in disks] == [2, 1]
    assert done["read"] == pytest.approx(svc[8 * KB])
    assert done["write"] == pytest.approx(svc[8 * KB] + svc[64 * KB])


def test_raid5_write_one_byte_past_a_whole_row_is_read_modify_write():
    """4 drives: row 0 is 192 KB; a write of 192 KB + 1 byte from 0 covers row 0 and one byte of
    row 1, so it is not a whole-row write: read-modify-write of all of it (the data pieces plus
    row 0's 64 KB and row 1's 1-byte parity pieces, read and then written)."""
    env, disks, vol = _vol("raid5", 4)
    log = _spy(env, disks)
    env.run(vol.submit("write", 3 * 64 * KB + 1, 0.0))
    read = sum(b for _d, k, b, _t in log if k == "read")
    assert read == sum(b for _d, k, b, _t in log if k == "write") == 4 * 64 * KB + 2


def test_random_io_takes_every_block_from_the_first_to_the_last():
    """8 KB stripe units on 4 drives, a volume of 5 blocks: a random 8 KB read drawn at the bottom
    of the range reads block 0 (drive 0), at the top block 4 (drive 0 again, row 1), just below
    the top block 3 (drive 3); a read of the whole volume starts at its first byte, every drive's
    piece at the start of the drive; a zero-byte random I/O (positioning alone) is served."""
    def read_at(frac, nbytes=8 * KB, size=5 * 8 * KB):
        env, disks, vol = _vol("stripe", 4, CURVE, su=8 * KB, frac=frac, size=size)
        env.run(vol.submit("read", nbytes))
        return disks
    assert [d.ios for d in read_at(0.0)] == [1, 0, 0, 0]
    top = read_at(0.999)
    assert [d.ios for d in top] == [1, 0, 0, 0] and top[0].head == pytest.approx(8 * KB / CURVE.capacity)
    assert [d.ios for d in read_at(0.799)] == [0, 0, 0, 1]
    whole = read_at(0.5, nbytes=4 * 8 * KB, size=4 * 8 * KB)
    assert [d.bytes for d in whole] == [8 * KB] * 4 and [d.head for d in whole] == [0.0] * 4
    assert sum(d.ios for d in read_at(0.5, nbytes=0.0)) == 1



@pytest.mark.parametrize("layout, n, nbytes, offset, drive_ios", [
    ("mirror", 2, 8 * KB, 0.0, [1, 1]),                 # a write to both drives
    ("stripe", 2, 8 * KB, 0.0, [1, 0]),                 # one unit: the one-piece path
    ("stripe", 2, 96 * KB, 32 * KB, [1, 1]),            # 32 KB in unit 0 and 64 KB in unit 1
    ("normal", 4, 8 * KB, 0.0, [1, 0, 1, 0]),           # ASM normal: the copy on the partner drive (0 + 4 // 2)
])
def test_behind_a_write_back_cache_every_layouts_destage_stays_off_the_host_controller(layout, n, nbytes, offset,
                                                                                        drive_ios):
    """Behind a write-back cache the volume is a RAID box: the host's controller carries a write's bytes once, into
    the cache, and the destage's pieces (a mirror's two copies, a stripe's pieces, ASM's partner copy) reach the
    drives inside the box. Drives with no overhead, a 1 MB/s controller: the write is acknowledged at
    nbytes / 1 MB/s, and once the destage is done the controller has carried nbytes, not once per drive piece."""
    env = simpy.Environment()
    disks = [Disk(env, f"d{i}", FLAT, FixedRng()) for i in range(n)]
    ctrl = Controller(env, "c", 1 * MB)
    vol = Volume(env, "v", disks, FixedRng(), layout, 64 * KB, [ctrl])
    vol.attach_cache(1 * MB)
    ev = vol.submit("write", nbytes, offset)
    env.run(ev)
    assert env.now == pytest.approx(nbytes / MB)
    env.run()
    assert vol.cache.destages == 1 and [d.ios for d in disks] == drive_ios
    assert sum(d.bytes for d in disks) == nbytes * (2 if layout in ("mirror", "normal") else 1)
    assert ctrl.bytes == nbytes and (vol.ios, vol.writes, vol.bytes) == (1, 1, nbytes)
