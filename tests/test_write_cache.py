"""A controller's write-back cache: acknowledges at bus speed while it has room, holds a
synchronous writer to the destage rate once full, destages faster the more it holds
(shorter seeks between sorted destages), and RAID5 pays read-modify-write at destage."""

from __future__ import annotations

import numpy as np
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
    """Until the cache fills, a write costs the controller overhead plus its transfer (the bus
    is shared with the destages' transfers)."""
    env = simpy.Environment()
    vol = _volume(env, 64 * 2**20)
    lat = _sync_writer(env, vol, 0.5)
    assert len(lat) > 1000
    ack = 0.2 * MS + 8 * KB / 100e6
    assert abs(lat[0] - ack) < 1e-12
    assert min(lat) >= ack - 1e-12 and max(lat) < 2 * ack   # at most a destage's transfer ahead on the bus
    assert vol.cache.full_wait.max == 0.0


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
