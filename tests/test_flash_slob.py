"""Flash array, latches, SMT and the SLOB / CALIBRATE_IO workloads against closed forms and invariants."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim import scenario
from sim.analytic import mmc_wait, repairman
from sim.config import ConfigError, Source, build
from sim.db.latches import LatchFamily, LatchStats, cbc_children, line_transfer, lru_children
from sim.hardware.cpu import rate_table
from sim.hardware.flash import FlashArray
from sim.hardware.profile import FlashArraySpec, load_profile
from sim.run import run


def _array(env, bricks=1, iops=4000.0, service=1e-3, bw=1e12, fabric_bw=1e12, latency=0.0, seed=1):
    spec = FlashArraySpec(bricks=bricks, iops_per_brick=iops, bandwidth_per_brick=bw, service_time=service,
                          fabric_latency=latency, fabric_bandwidth=fabric_bw, capacity=1e12)
    return FlashArray(env, "a", spec, np.random.default_rng(seed))


def test_one_brick_is_an_mmc_queue():
    """Poisson arrivals at 75% of the ceiling: mean response = Erlang-C wait + service."""
    env = simpy.Environment()
    arr = _array(env)                      # c = 4000 x 1 ms = 4 channels, mu = 1000/s
    assert arr.channels_per_brick == 4 and arr.ceiling == pytest.approx(4000.0)
    lam, rng = 3000.0, np.random.default_rng(7)

    def source():
        while True:
            yield env.timeout(rng.exponential(1.0 / lam))
            arr.submit("read", 8192)
    env.process(source())
    env.run(until=2.0)
    arr.reset_stats()
    env.run(until=42.0)
    expected = mmc_wait(lam, 1000.0, 4) + 1e-3
    assert arr.response.mean == pytest.approx(expected, rel=0.04)
    assert arr.util.mean() == pytest.approx(0.75, rel=0.03)


def _closed_loop(arr, env, outstanding, nbytes, until):
    def user():
        while True:
            yield arr.submit("read", nbytes)
    for _ in range(outstanding):
        env.process(user())
    env.run(until=until / 10)
    arr.reset_stats()
    env.run(until=until / 10 + until)
    return arr.ios / until, arr.bytes / until


@pytest.mark.parametrize("bricks", [1, 2, 4])
def test_iops_ceiling_under_saturation_scales_with_bricks(bricks):
    env = simpy.Environment()
    arr = _array(env, bricks=bricks, iops=20_000.0, service=0.5e-3, latency=50e-6)
    iops, _ = _closed_loop(arr, env, 60 * bricks, 8192, 2.0)
    assert iops == pytest.approx(20_000.0 * bricks, rel=0.02)
    assert iops <= arr.ceiling * 1.01


def test_bandwidth_ceilings_brick_then_fabric():
    # enough reads in flight that neither brick's ports idle while the other's have a backlog
    env = simpy.Environment()
    arr = _array(env, bricks=2, iops=1e5, service=0.2e-3, bw=400e6, fabric_bw=1e12)
    _, bps = _closed_loop(arr, env, 512, 1 << 20, 1.0)
    assert bps == pytest.approx(2 * 400e6, rel=0.03)           # the bricks' ports
    env = simpy.Environment()
    arr = _array(env, bricks=2, iops=1e5, service=0.2e-3, bw=400e6, fabric_bw=500e6)
    _, bps = _closed_loop(arr, env, 512, 1 << 20, 1.0)
    assert bps == pytest.approx(500e6, rel=0.03)               # the host's fabric


def test_light_load_latency_is_service_plus_fabric():
    env = simpy.Environment()
    arr = _array(env, bricks=1, iops=1e5, service=0.25e-3, latency=50e-6)
    _closed_loop(arr, env, 1, 8192, 5.0)
    assert arr.response.mean == pytest.approx(0.30e-3, rel=0.03)


def test_latch_wait_is_pollaczek_khinchine_for_deterministic_hold():
    """One child, Poisson gets, deterministic hold h: M/D/1 wait lam h^2 / (2 (1 - rho))."""
    env = simpy.Environment()
    hold, lam = 2e-6, 250_000.0                    # rho = 0.5
    latch = LatchFamily(env, "cache buffers lru chain", 1, hold, spin_time=1e-6,
                        rng=np.random.default_rng(1), wakeup=20e-6)
    rng = np.random.default_rng(3)
    waits = []

    def getter():
        while True:
            yield env.timeout(rng.exponential(1.0 / lam))
            spin, sleep = latch.get()
            waits.append(spin + (sleep - latch.wakeup if sleep else 0.0))
    env.process(getter())
    env.run(until=0.4)
    expected = lam * hold**2 / (2 * (1 - lam * hold))
    assert np.mean(waits) == pytest.approx(expected, rel=0.05)
    st = latch.stats
    assert 0 < st.sleeps < st.misses < st.gets                # short waits spin, long ones sleep
    assert st.misses / st.gets == pytest.approx(0.5, abs=0.02)  # P(busy) = rho


def test_remote_line_transfers_only_across_sockets():
    assert line_transfer(1, 130e-9, 85e-9) == 0.0
    assert line_transfer(2, 130e-9, 85e-9) == pytest.approx(65e-9)
    assert line_transfer(4, 130e-9, 85e-9) > line_transfer(2, 130e-9, 85e-9)


def test_smt_window_split_limits_hyperthreading_gain():
    """Haswell + the Oracle miss rate: HT adds ~20% per core, not the repairman's ~+45%;
    in-order strands (mlp 1) keep the plain repairman exactly."""
    from workloads.tpcc import misses_per_instruction
    cpu = load_profile("xeon-e5-2699v3-2s").cpu
    mpi = misses_per_instruction(cpu.llc_size, cpu.cores_per_socket)
    stall = 107.5e-9 * cpu.clock / cpu.mlp
    rates, _ = rate_table(2, 1, cpu.cpi_issue, mpi, stall, cpu.clock, cpu.mlp)
    naive, _ = rate_table(2, 1, cpu.cpi_issue, mpi, stall, cpu.clock, 1.0)
    gain, naive_gain = 2 * rates[2] / rates[1] - 1, 2 * naive[2] / naive[1] - 1
    assert 0.15 < gain < 0.30 < naive_gain
    assert rate_table(4, 1, 1.0, 0.01, 100.0, 1e9) == rate_table(4, 1, 1.0, 0.01, 100.0, 1e9, 1.0)
    x, _ = repairman(2, 2 * stall, cpu.cpi_issue / mpi)      # two strands, each with half the window
    assert rates[2] == pytest.approx(x / mpi / 2 * cpu.clock)


def _slob(profile, **params):
    sets = {"run.warmup": "0.05 s", "run.batch": "0.05 s", "run.min_batches": "2", "run.max_time": "0.1 s"}
    sets.update({k: str(v) for k, v in params.items()})
    return run(scenario.load(None, sets, profile=profile, workload="slob"))


def test_slob_direct_path_costs_less_cpu_per_read_and_is_deterministic():
    sga = _slob("xeon-e5-2643v3-2s", sessions=8, read_path="sga")
    again = _slob("xeon-e5-2643v3-2s", sessions=8, read_path="sga")
    direct = _slob("xeon-e5-2643v3-2s", sessions=8, read_path="direct")
    assert (sga.extra["iops"], sga.events, sga.cpu) == (again.extra["iops"], again.events, again.cpu)
    assert direct.extra["iops_per_db_cpu"] > 1.3 * sga.extra["iops_per_db_cpu"]
    # every read of a schema far larger than the (absent) cache is physical: one wait per read
    ev = {e["event"]: e for e in sga.top_events}
    reads = sga.extra["iops"] * sga.measured_time
    assert ev["db file sequential read"]["waits"] == pytest.approx(reads, rel=0.01)
    # closed loop, Little's law: sessions = IOPS x (wait + CPU per read)
    cycle = sga.extra["avg_read_wait_ms"] / 1e3 + 1.0 / sga.extra["iops_per_db_cpu"]
    assert sga.extra["iops"] * cycle == pytest.approx(8, rel=0.05)


def test_slob_runs_on_any_profile_and_commits_updates():
    r = _slob("t5220", sessions=4, update_pct=50, schema_size="100 GB")   # (the 1 TB default fills no T5220 volume)
    assert r.status == "ok" and r.extra["iops"] > 0
    assert any(e["event"] == "log file sync" for e in r.top_events)


def test_slob_refuses_bad_input():
    with pytest.raises(ConfigError, match="update_pct"):
        scenario.load(None, {"sessions": "4", "read_path": "direct", "update_pct": "10"},
                      profile="xeon-e5-2643v3-2s", workload="slob")
    with pytest.raises(ConfigError, match="params.device"):
        scenario.load(None, {"sessions": "4", "device": "nope"}, profile="xeon-e5-2643v3-2s", workload="slob")


def test_calibrate_io_levels_obey_littles_law_and_stop_at_the_file_limit():
    sc = scenario.load(None, {"num_physical_disks": "4", "datafiles": "1", "level_time": "0.05 s"},
                       profile="xeon-e5-2643v3-2s", workload="calibrate_io")
    r = run(sc)
    levels = r.extra["level_table"]
    assert [lv["in_flight"] for lv in levels] == [4, 8, 16, 32]     # 1 file x 32 reads in flight
    for lv in levels:
        at_device = lv["iops"] * lv["latency_ms"] / 1e3               # Little's law at the array
        if lv["in_flight"] <= 24:       # one read per process (cpu_count 24): all but the CPU time at the array
            assert at_device == pytest.approx(lv["in_flight"], rel=0.06)
        else:                           # batches of 2 wait for their slower read: fewer at the array
            assert at_device < 0.97 * lv["in_flight"]
    assert r.extra["iops"] == max(lv["iops"] for lv in levels)


@pytest.mark.parametrize("processes", [1, 4, 32])
def test_calibrate_io_batch_waits_for_its_slowest_read(processes):
    """A process reaps its whole batch: the wait is E[max of k reads] = fabric + floor + spread x H_k."""
    sc = scenario.load(None, {"num_physical_disks": "32", "datafiles": "1", "level_time": "0.3 s",
                              "database.cpu_count": str(processes)},
                       profile="xeon-e5-2643v3-2s", workload="calibrate_io")
    spec = sc.profile.storage.flash_arrays["xtremio"]
    assert spec.service_floor > 0                      # the profile's reads have a floor and a spread
    k = 32 // processes
    harmonic = sum(1.0 / i for i in range(1, k + 1))
    expected = spec.fabric_latency + spec.service_floor + (spec.service_time - spec.service_floor) * harmonic
    r = run(sc)
    assert [lv["in_flight"] for lv in r.extra["level_table"]] == [32]    # ~100K IOPS: far below 600K, no queue
    assert r.extra["avg_read_wait_ms"] / 1e3 == pytest.approx(expected, rel=0.03)


def test_flash_floor_keeps_mean_and_ceiling_and_refuses_a_floor_above_the_mean():
    env = simpy.Environment()
    spec = FlashArraySpec(bricks=1, iops_per_brick=4000.0, bandwidth_per_brick=1e12, service_time=1e-3,
                          service_floor=0.8e-3, fabric_latency=0.0, fabric_bandwidth=1e12, capacity=1e12)
    arr = FlashArray(env, "a", spec, np.random.default_rng(3))
    draws = np.array([arr._draw()[1] for _ in range(20000)])
    assert draws.min() >= 0.8e-3 and draws.mean() == pytest.approx(1e-3, rel=0.01)
    assert draws.std() == pytest.approx(0.2e-3, rel=0.03)          # the exponential spread only
    assert arr.channels_per_brick == 4 and arr.ceiling == pytest.approx(4000.0)
    with pytest.raises(ConfigError, match="service_floor.*less than service_time"):
        build(FlashArraySpec, {"bricks": 1, "iops_per_brick": "1000 IOPS", "bandwidth_per_brick": "1 Gb/s",
                               "service_time": "0.25 ms", "service_floor": "0.3 ms", "fabric_latency": "50 us",
                               "fabric_bandwidth": "1 Gb/s", "capacity": "1 TB"}, Source("array.yaml"))


def test_calibrate_io_on_a_disk_volume_times_its_reads_and_obeys_littles_law():
    """CALIBRATE_IO on spinning disks (the UE10000's 36-drive stripe): each read is timed from its
    submission to its completion, so reads in flight = IOPS x latency while every process has one,
    and a read costs at least an average half turn of a 7,200 rpm drive (4.17 ms)."""
    sc = scenario.load(None, {"num_physical_disks": "4", "datafiles": "1", "database_size": "10 GB",
                              "device": "data", "level_time": "0.5 s"},
                       profile="ue10000", workload="calibrate_io")
    r = run(sc)
    assert r.status == "ok"
    levels = r.extra["level_table"]
    assert [lv["in_flight"] for lv in levels][:2] == [4, 8]
    for lv in levels:
        assert lv["latency_ms"] > 4.17
        if lv["in_flight"] <= 16:       # one read per process (16 CPUs)
            assert lv["iops"] * lv["latency_ms"] / 1e3 == pytest.approx(lv["in_flight"], rel=0.1)
    assert r.extra["iops"] == max(lv["iops"] for lv in levels if lv["latency_ms"] <= 20.0)


class _UnitRng:
    """Every service draw at its mean (unit exponential = 1), every I/O to brick 0."""

    def exponential(self, scale, size):
        return np.full(size, scale)

    def integers(self, lo, hi, size):
        return np.zeros(size, dtype=np.int64)


def test_brick_channels_by_hand_and_iostat_service_time():
    """One brick of 2 channels (2000 IOPS x 1 ms), services at their 1-ms mean: 3 reads of 1 MB at
    t=0, two served at once, the third queued until 1 ms. The brick's ports (1 GB/s: 1.048576 ms a
    MB) carry the first two one after the other from 1 ms, the third from the end of the second,
    then 50 us of round trip. iostat's service time is the flash service alone (1 ms); the response
    adds the queue and the transfer. A ceiling x service below one channel still gives the brick
    one channel (it never serves nothing), and exactly one gives one, not two."""
    env = simpy.Environment()
    spec = FlashArraySpec(bricks=1, iops_per_brick=2000.0, bandwidth_per_brick=1e9, service_time=1e-3,
                          fabric_latency=50e-6, fabric_bandwidth=1e12, capacity=1e12)
    arr = FlashArray(env, "a", spec, _UnitRng())
    assert arr.channels_per_brick == 2
    done = {}
    for k in range(3):
        arr.submit("read", 2**20).callbacks.append(lambda _e, k=k: done.__setitem__(k, env.now))
    env.run()
    mb = 2**20 / 1e9
    fabric = 2**20 / 1e12
    assert done[0] == pytest.approx(1e-3 + max(mb, fabric) + 50e-6)
    assert done[1] == pytest.approx(1e-3 + 2 * mb + 50e-6)
    assert done[2] == pytest.approx(1e-3 + 3 * mb + 50e-6)     # served 1-2 ms, its port free at 1 + 2 mb ms
    assert arr.ios == 3 and arr.service.n == 3 and arr.service.mean == pytest.approx(1e-3)
    assert arr.response.mean == pytest.approx(sum(done.values()) / 3)
    def brick(iops):
        return FlashArray(env, "a", FlashArraySpec(bricks=1, iops_per_brick=iops, bandwidth_per_brick=1e9,
                                                   service_time=1e-3, fabric_latency=0.0, fabric_bandwidth=1e12,
                                                   capacity=1e12), _UnitRng())
    assert [brick(iops).channels_per_brick for iops in (400.0, 1000.0, 1600.0)] == [1, 1, 2]
    start = env.now
    env.run(brick(400.0).submit("read", 8192))
    assert env.now - start == pytest.approx(1e-3 + 8192 / 1e9)


class _Alternate:
    """integers(): children 0, 1, 0, 1, ... in the order get() takes them (it pops from the end)."""

    def integers(self, lo, hi, size):
        return np.array([k % 2 for k in range(size)][::-1])


def test_latch_gets_by_hand_spin_then_sleep_and_the_counters():
    """One child, hold 1, spin 0.5, wake-up 2 (time units): three gets at t=0 find it free, then held
    1 and 2 more: the first is immediate, the others spin 0.5 and sleep the rest plus the wake-up
    (1 - 0.5 + 2, 2 - 0.5 + 2). At 2.5 the child is free at 3: a 0.5 wait, spun whole (a wait equal
    to the spin time spins). At 5 and at 6 (when the previous get frees it exactly) no wait."""
    env = simpy.Environment()
    latch = LatchFamily(env, "cache buffers chains", 1, 1.0, spin_time=0.5, rng=None, wakeup=2.0)
    assert latch.event == "latch: cache buffers chains"
    got = [latch.get() for _ in range(3)]
    env.run(until=2.5)
    got.append(latch.get())
    env.run(until=5.0)
    got.append(latch.get())
    env.run(until=6.0)
    got.append(latch.get())
    assert got == [(0.0, 0.0), (0.5, 2.5), (0.5, 3.5), (0.5, 0.0), (0.0, 0.0), (0.0, 0.0)]
    st = latch.stats
    assert (st.gets, st.misses, st.sleeps, st.spin_time, st.sleep_time) == (6, 3, 2, 1.5, 6.0)
    assert latch.utilisation(12.0) == pytest.approx(6 * 1.0 / 12.0) and latch.utilisation(0.0) == 0.0
    latch.reset_stats()
    assert latch.stats == LatchStats()


def test_latch_children_each_serve_their_own_gets():
    """Two children, gets alternating between them: two gets at t=0 both find their child free, the
    next two wait one hold each (not two: 1 - 0 spun 0.5, then asleep); utilisation is per child."""
    env = simpy.Environment()
    latch = LatchFamily(env, "cbc", 2, 1.0, spin_time=0.5, rng=_Alternate(), wakeup=0.0)
    got = [latch.get() for _ in range(4)]
    assert got == [(0.0, 0.0), (0.0, 0.0), (0.5, 0.5), (0.5, 0.5)]
    assert latch.utilisation(4.0) == pytest.approx(4 * 1.0 / (2 * 4.0))
    short = LatchFamily(env, "lru", 1, 0.25, spin_time=0.0, rng=None)
    short.get(), short.get()
    assert short.utilisation(0.8) == pytest.approx(2 * 0.25 / 0.8)      # rho over a span under 1 s too


def test_latch_gets_spread_uniformly_over_the_children():
    """4,000 gets at one instant on 4 children (the 64 of a 1,000-buffer cache, CBC rule, work too):
    each child is then held for its own gets back to back, about 1,000 holds each (within 4 sigma)."""
    env = simpy.Environment()
    assert len(LatchFamily(env, "cbc", cbc_children(1000), 1.0, 0.5, rng=np.random.default_rng(1)).free_at) == 64
    latch = LatchFamily(env, "cbc", 4, 1.0, spin_time=0.5, rng=np.random.default_rng(5))
    for _ in range(4000):
        latch.get()
    assert sum(latch.free_at) == pytest.approx(4000.0)
    assert all(abs(f - 1000.0) < 4 * np.sqrt(4000 * 0.25 * 0.75) for f in latch.free_at)


def test_latch_children_counts_and_bad_input():
    """CBC: hash buckets the power of two at or above 2 x buffers, one child per 32, at least one;
    LRU: cpu_count / 2, at least one; one socket pulls no remote lines, a machine without a remote
    latency pays the local one; a latch without children, with a negative hold or spin is refused."""
    assert [cbc_children(b) for b in (0, 8, 16, 32, 1000, 1024, 1025)] == [1, 1, 1, 2, 64, 64, 128]
    assert [lru_children(c) for c in (1, 2, 3, 8)] == [1, 1, 1, 4]
    assert line_transfer(1, None, 85e-9) == 0.0
    assert line_transfer(2, None, 80e-9) == pytest.approx(40e-9)
    assert line_transfer(4, 100e-9, 80e-9) == pytest.approx(75e-9)
    env = simpy.Environment()
    for children, hold, spin in ((0, 1.0, 1.0), (1, -1.0, 1.0), (1, 1.0, -1.0)):
        with pytest.raises(ValueError, match="need children >= 1, hold >= 0, spin_time >= 0"):
            LatchFamily(env, "x", children, hold, spin, rng=None)
    LatchFamily(env, "x", 1, 0.0, 0.0, rng=None)          # zero hold and spin are legal
