"""Flash array, latches, SMT and the SLOB / CALIBRATE_IO workloads against closed forms and invariants."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim import report, scenario
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


def test_the_pipe_at_the_bandwidth_ceiling_is_the_busy_one():
    """Each brick's ports and the host's fabric are FCFS pipes; at a ceiling the one that sets it is busy all the
    time and the others by the bytes they carry over their bandwidth (what the run reports as the device's busiest
    controller, controller_util_pct)."""
    env = simpy.Environment()
    arr = _array(env, bricks=2, iops=1e5, service=0.2e-3, bw=400e6, fabric_bw=500e6)
    # (16 reads in flight keep the fabric busy; with hundreds, the ports would still be carrying what queues
    # for the fabric, a backlog that takes many seconds to build)
    _, bps = _closed_loop(arr, env, 16, 1 << 20, 4.0)
    fabric, *ports = arr.controllers
    assert fabric is arr.fabric and fabric.utilisation() == pytest.approx(1.0, abs=1e-3)
    assert sum(p.utilisation() for p in ports) == pytest.approx(bps / 400e6, rel=0.02)   # 0.625 each, ~1.25 both


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


PIO_CACHE = {"database.db_cache": "96 MB"}   # SLOB's physical-I/O set-up: the least cache 12c allows, 4 MB x 24 CPUs


def _slob(profile, **params):
    sets = {"run.warmup": "0.05 s", "run.batch": "0.05 s", "run.min_batches": "2", "run.max_time": "0.1 s"}
    sets.update({k: str(v) for k, v in params.items()})
    return run(scenario.load(None, sets, profile=profile, workload="slob"))


def test_slob_direct_path_costs_less_cpu_per_read_and_is_deterministic():
    sga = _slob("xeon-e5-2643v3-2s", sessions=8, read_path="sga", **PIO_CACHE)
    again = _slob("xeon-e5-2643v3-2s", sessions=8, read_path="sga", **PIO_CACHE)
    direct = _slob("xeon-e5-2643v3-2s", sessions=8, read_path="direct")
    assert (sga.extra["iops"], sga.events, sga.cpu) == (again.extra["iops"], again.events, again.cpu)
    assert direct.extra["iops_per_db_cpu"] > 1.3 * sga.extra["iops_per_db_cpu"]
    # direct path reads bypass the cache: no Buffer Hit % (not a 0% read as every buffer missed)
    assert "buffer_hit_ratio" not in direct.extra and "buffer hit" not in report.full(direct)
    # every read of a schema far larger than the cache is physical: one wait per read
    ev = {e["event"]: e for e in sga.top_events}
    reads = sga.extra["iops"] * sga.measured_time
    assert ev["db file sequential read"]["waits"] == pytest.approx(reads, rel=0.01)
    # closed loop, Little's law: sessions = IOPS x (wait + CPU per read)
    cycle = sga.extra["avg_read_wait_ms"] / 1e3 + 1.0 / sga.extra["iops_per_db_cpu"]
    assert sga.extra["iops"] * cycle == pytest.approx(8, rel=0.05)


def test_slob_runs_on_any_profile_and_commits_updates():
    r = _slob("t5220", sessions=4, update_pct=50, schema_size="100 GB",   # (the 1 TB default fills no T5220 volume)
              **{"database.db_cache": "256 MB", "run.max_time": "3 s",
                 "run.min_batches": "60"})   # the whole 3 s
    assert r.status == "ok" and r.extra["iops"] > 0
    assert any(e["event"] == "log file sync" for e in r.top_events)
    # the changed blocks leave the cache dirty and DBWR writes them, in batches of up to 512: at most the
    # updates' blocks and one batch from the warm-up (which goes on until DBWR has written, sim/run.py)
    assert 0 < r.extra["physical_writes_per_s"] <= 0.5 * r.throughput_per_s + 512 / r.measured_time
    assert r.extra["physical_reads_per_s"] == pytest.approx(r.extra["iops"], rel=0.01)
    assert r.extra["disk_reads_per_s"] == r.extra["physical_reads_per_s"]


def test_a_cached_schema_takes_its_memory():
    """Through the SGA, the buffer cache fills with the schema: all of it without db_cache. The 1 TB default
    on a 256 GB Haswell is out of memory (it had run at 118,800 logical reads/s); 16 GB is in the SGA; the
    direct path reads into the PGA and maps no cache."""
    big = _slob("xeon-e5-2699v3-2s", sessions=2)
    assert big.status == "out_of_memory" and "exceed physical memory" in big.message
    small = _slob("xeon-e5-2699v3-2s", sessions=2, schema_size="16 GB")
    assert small.status == "ok" and small.extra["iops"] == 0
    sc = scenario.load(None, {"sessions": "2", "schema_size": "16 GB"}, profile="xeon-e5-2699v3-2s", workload="slob")
    from sim.system import System
    import workloads
    system = System(sc)
    workloads.get("slob").Workload(system, sc.params)
    assert system.vm.shared["sga_buffer_cache"] == 16 * 2**30
    assert _slob("xeon-e5-2699v3-2s", sessions=2, read_path="direct").status == "ok"


def test_slob_updates_hand_dbwr_the_buffers_they_dirty():
    """A 1 GB cache over a 4 GB schema (hit 0.25), UPDATE_PCT 50: an update finds its buffer clean, and hands
    DBWR one more to write, with odds (1 - h) / (1 - h (1 - u)) = 0.857; all cached: no DBWR, nothing written.
    DBWR writes the datafiles' device: a schema elsewhere is refused."""
    from workloads import slob
    assert slob.dirtying_share(0.0, 0.3) == 1.0 and slob.dirtying_share(1.0, 0.3) == 0.0
    assert slob.dirtying_share(0.25, 0.5) == pytest.approx(0.75 / 0.875)
    job = _slob_job(sessions=8, schema_size="4 GB", update_pct=50, until=0.5, **{"database.db_cache": "1 GB"})
    dbwr, commits = job.instance.dbwr, job.instance.lgwr.commits
    assert commits > 2000
    assert dbwr.dirtied_total / commits == pytest.approx(slob.dirtying_share(0.25, 0.5), abs=0.03)
    assert dbwr.writes > 0 and dbwr.written_total <= dbwr.dirtied_total
    cached = _slob_job(sessions=8, schema_size="4 GB", update_pct=50, until=0.05)
    assert cached.instance.dbwr is None and cached.instance.lgwr.commits > 0
    with pytest.raises(ConfigError, match=r"params\.device: got 'internal'; expected the datafiles' device, array"):
        scenario.load(None, {"sessions": "4", "update_pct": "10", "schema_size": "10 GB", "device": "internal",
                             "database.db_cache": "256 MB"}, profile="t5220", workload="slob")


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
    # the CPU beside max_iops is its level's: CPU per read is the same at every level, so DB CPU grows with IOPS
    best = max(levels, key=lambda lv: lv["iops"])
    assert r.extra["db_cpu_per_s"] == best["db_cpu_per_s"] > levels[0]["db_cpu_per_s"] * 4
    assert r.extra["iops_per_db_cpu"] * r.extra["db_cpu_per_s"] == pytest.approx(r.extra["iops"])
    per_read = [lv["db_cpu_per_s"] / lv["iops"] for lv in levels]
    assert max(per_read) < 1.15 * min(per_read)


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
    # the per-core figure beside the headline IOPS is of the same (max_iops), not of the mean over the levels
    assert r.extra["iops_per_core"] == pytest.approx(r.extra["iops"] / 16) and r.extra["mean_iops"] < r.extra["iops"]


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



def test_brick_channels_round_to_the_nearest_and_writes_are_counted_apart():
    """Channels are ceiling x service rounded to the nearest whole one: 1.4 -> 1, 2.4 -> 2 (not up, to 2 and 3).
    iostat's counters: 3 writes and 1 read of 8 KB are 4 I/Os, 3 of them writes, 32 KB."""
    env = simpy.Environment()
    assert [_array(env, iops=iops).channels_per_brick for iops in (1400.0, 2400.0)] == [1, 2]
    arr = _array(env, service=1e-4)
    for kind in ("write", "read", "write", "write"):
        arr.submit(kind, 8192)
    env.run()
    assert (arr.ios, arr.writes, arr.bytes) == (4, 3, 4 * 8192)



def test_two_bricks_busy_channels_return_to_idle_and_a_reset_clears_every_pipe():
    """util is the share of all channels busy (2 bricks x 4): after every I/O has ended it is back to 0, its mean
    a share within (0, 1]. A reset starts the brick ports' and the fabric's byte counts afresh too."""
    env = simpy.Environment()
    arr = _array(env, bricks=2, bw=1e9, fabric_bw=1e9)
    for _ in range(20):
        arr.submit("read", 2**20)
    env.run()
    assert arr.util.value == pytest.approx(0.0, abs=1e-12) and 0.0 < arr.util.mean() <= 1.0
    assert sum(c.bytes for c in arr.controllers) == 2 * 20 * 2**20      # each MB across a brick's ports and the fabric
    arr.reset_stats()
    assert [c.bytes for c in arr.controllers] == [0.0, 0.0, 0.0]



def test_a_brick_serves_its_queue_in_arrival_order_and_iostat_averages_the_service_drawn():
    """One channel (1000 IOPS x 1 ms), services at their mean: three reads at t=0 end in the order they came
    (first come, first served), at 1, 2 and 3 ms. With random services iostat's service time is the mean of the
    ones drawn (not the spec's 1 ms)."""
    env = simpy.Environment()
    spec = FlashArraySpec(bricks=1, iops_per_brick=1000.0, bandwidth_per_brick=1e12, service_time=1e-3,
                          fabric_latency=0.0, fabric_bandwidth=1e12, capacity=1e12)
    arr = FlashArray(env, "a", spec, _UnitRng())
    ended = []
    for k in range(3):
        arr.submit("read", 8192).callbacks.append(lambda _e, k=k: ended.append((k, env.now)))
    env.run()
    assert [k for k, _ in ended] == [0, 1, 2]
    assert [t for _, t in ended] == pytest.approx([i * 1e-3 + 8192 / 1e12 for i in (1, 2, 3)], rel=1e-9)
    arr = _array(env)
    drawn, draw = [], arr._draw
    arr._draw = lambda: (lambda b_s: drawn.append(b_s[1]) or b_s)(draw())
    for _ in range(50):
        arr.submit("read", 8192)
    env.run()
    assert arr.service.n == 50 and arr.service.mean == pytest.approx(np.mean(drawn), rel=1e-12)
    assert arr.service.mean != pytest.approx(1e-3, rel=1e-3)


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


# --------------------------------------------------------------------------- SLOB by hand

def _slob_job(profile="xeon-e5-2643v3-2s", until=0.05, **params):
    """Build a SLOB run by hand and run it for `until` simulated seconds; returns the workload."""
    from sim.system import System
    from workloads import slob
    sc = scenario.load(None, {k: str(v) for k, v in params.items()}, profile=profile, workload="slob")
    system = System(sc)
    job = slob.Workload(system, sc.params)
    job.start()
    if until:
        system.env.run(until=until)
    return job


@pytest.mark.parametrize("cache, hit", [(None, 1.0), ("1 GB", 0.25), ("8 GB", 1.0)])
def test_slob_hits_the_cache_at_cache_over_schema_and_counts_its_reads_and_physical_reads(cache, hit):
    """Uniform reads over a 4 GB schema: the LRU hit ratio is cache/schema (capped at 1; no db_cache: the
    schema is all cached, as the setting says); the workload counts its operations (logical reads, finished) and apart the physical reads,
    one 'db file sequential read' each."""
    sets = {"sessions": 8, "schema_size": "4 GB"}
    if cache:
        sets["database.db_cache"] = cache
    job = _slob_job(until=0.1, **sets)
    paths = job.paths
    assert paths.hit_ratio == hit
    ev = job.instance.waits.events.get("db file sequential read")
    assert job.physical == paths.physical_reads == (ev.waits if ev else 0)
    assert paths.logical_reads - 8 <= job.completed <= paths.logical_reads   # at most one a session in flight
    assert paths.logical_reads > 1000
    assert paths.physical_reads / paths.logical_reads == pytest.approx(1.0 - hit, abs=0.03)
    if hit == 1.0:
        assert job.physical == 0 and job.paths.lru.stats.gets == 0
    # a CBC get per logical read, an LRU get per miss (at most one a session still reading)
    assert paths.cbc.stats.gets == paths.logical_reads
    assert paths.physical_reads <= paths.lru.stats.gets <= paths.physical_reads + 8


def test_slob_one_session_retires_its_instructions_by_hand():
    """One session, no latch contention: instructions = logical reads x (SQL + CBC latch) + physical reads x
    (cache upkeep + LRU latch), with a kernel share of SYS_SHARE; direct path: SQL per block only."""
    from sim.db.latches import CBC_INSTRUCTIONS, LRU_INSTRUCTIONS
    from workloads import slob
    job = _slob_job(sessions=1, schema_size="4 GB", **{"database.db_cache": "2 GB"})
    p = job.paths
    assert p.cbc.stats.misses == 0 and p.lru.stats.misses == 0
    # a read's burst comes after its CBC get (and, on a miss, its LRU get), before its physical read ends
    assert p.physical_reads <= p.lru.stats.gets <= p.physical_reads + 1 and p.physical_reads > 100
    started = p.logical_reads * (slob.SQL_INSTRUCTIONS + CBC_INSTRUCTIONS) + \
        p.lru.stats.gets * (slob.CACHE_INSTRUCTIONS + LRU_INSTRUCTIONS)
    running = slob.SQL_INSTRUCTIONS + CBC_INSTRUCTIONS + slob.CACHE_INSTRUCTIONS + LRU_INSTRUCTIONS
    retired = job.system.cpu.instructions_retired()
    assert started - running <= retired <= started * (1 + 1e-9)      # the last burst may be under way
    busy, sys = job.system.cpu.strand_time()
    assert sys / busy == pytest.approx(slob.SYS_SHARE, rel=1e-9)
    direct = _slob_job(sessions=1, schema_size="4 GB", read_path="direct")
    reads = direct.paths.physical_reads
    assert direct.completed == reads > 100 and direct.paths.logical_reads == 0
    retired = direct.system.cpu.instructions_retired()
    assert (reads - 1) * slob.SQL_INSTRUCTIONS <= retired <= reads * slob.SQL_INSTRUCTIONS * (1 + 1e-9)


def test_slob_direct_path_keeps_its_slots_of_reads_in_flight():
    """Direct path, one session: with one slot it waits for every block; with four the next reads are already
    in flight while it works, so it waits for fewer blocks than it reads and reads more in the same time."""
    one = _slob_job(sessions=1, schema_size="4 GB", read_path="direct", direct_io_slots=1)
    four = _slob_job(sessions=1, schema_size="4 GB", read_path="direct", direct_io_slots=4)
    assert four.completed > 1.5 * one.completed
    assert one.instance.waits.events["direct path read"].waits == one.completed
    assert four.instance.waits.events["direct path read"].waits < four.completed


def test_slob_updates_commit_their_share_of_operations():
    """UPDATE_PCT 25: a quarter of the operations update the block and commit (log file sync), each with
    UPDATE_REDO bytes of redo and UPDATE_INSTRUCTIONS more CPU; 0: nothing commits."""
    from workloads import slob
    job = _slob_job(sessions=8, schema_size="4 GB", update_pct=25, until=0.2)
    ops = job.paths.logical_reads
    lgwr = job.instance.lgwr
    assert ops > 3000 and lgwr.commits / ops == pytest.approx(0.25, abs=0.03)
    assert lgwr.bytes >= lgwr.commits * slob.UPDATE_REDO
    assert job.instance.waits.events["log file sync"].waits == lgwr.commits
    none = _slob_job(sessions=4, schema_size="4 GB")
    assert none.instance.lgwr.commits == 0 and "log file sync" not in none.instance.waits.events
    assert slob.idle(slob.Params(sessions=1)).keys() == {"redo"}
    assert slob.idle(slob.Params(sessions=1, update_pct=5.0)) == {}
    assert slob.idle(slob.Params(sessions=1, read_path="direct")).keys() == {"redo", "buffer_cache"}


def test_slob_latches_are_sized_as_oracle_sizes_them_and_the_schema_lives_on_the_first_flash_array():
    from workloads import slob
    job = _slob_job(sessions=1, until=0.0, schema_size="4 GB", **{"database.db_cache": "1 GB",
                                                                  "database.cpu_count": "10"})
    assert job.paths.cbc.children == cbc_children(1 * 2**30 / 8192) == 8192     # 2 x buffers / 32
    assert job.paths.lru.children == lru_children(10) == 5
    assert job.device == "xtremio" and job.paths.device is job.system.devices["xtremio"]
    # a latch is held for its get's instructions at one strand's rate plus the cache lines it pulls from the
    # other socket (2 lines, remote with odds 1/2 on two sockets)
    system, mem = job.system, job.system.profile.memory
    xfer = 2 * line_transfer(system.profile.cpu.sockets, mem.remote_latency, mem.latency)
    assert system.profile.cpu.sockets == 2 and xfer > 0
    rate = system.single_strand_rate()
    assert job.paths.cbc.hold == pytest.approx(400.0 / rate + xfer, rel=1e-12)
    assert job.paths.lru.hold == pytest.approx(800.0 / rate + xfer, rel=1e-12)
    cached = _slob_job(sessions=1, until=0.0, schema_size="4 GB")   # no db_cache: a cache that holds the schema
    assert cached.paths.cbc.children == cbc_children(4 * 2**30 / 8192) == 32768
    spec = job.system.profile
    assert job.paths.cbc.spin_time == pytest.approx(2000 * 10.0 / spec.cpu.clock)
    t = _slob_job(profile="t5220", sessions=1, until=0.0, schema_size="4 GB")
    assert t.device == "array"                                                  # no flash array: the first
    assert slob.data_device(t.system.profile, "internal") == "internal"
    with pytest.raises(ConfigError, match="direct_io_slots"):
        scenario.load(None, {"sessions": "1", "direct_io_slots": "4", "schema_size": "4 GB"},
                      profile="xeon-e5-2643v3-2s", workload="slob")
    scenario.load(None, {"sessions": "1", "direct_io_slots": "4", "read_path": "direct", "schema_size": "4 GB"},
                  profile="xeon-e5-2643v3-2s", workload="slob")
    with pytest.raises(ConfigError, match="capacity"):
        scenario.load(None, {"sessions": "1", "schema_size": "100 TB"}, profile="xeon-e5-2643v3-2s", workload="slob")
    for key, value in (("schema_size", "0 GB"), ("update_pct", "100.5"), ("update_pct", "-1")):
        with pytest.raises(ConfigError, match=f"params.{key}"):
            scenario.load(None, {"sessions": "1", key: value}, profile="xeon-e5-2643v3-2s", workload="slob")
    for pct in ("0", "100"):
        scenario.load(None, {"sessions": "1", "update_pct": pct}, profile="xeon-e5-2643v3-2s", workload="slob")
    with pytest.raises(ConfigError, match="update_pct"):      # any update at all: direct path never updates
        scenario.load(None, {"sessions": "1", "update_pct": "0.5", "read_path": "direct"},
                      profile="xeon-e5-2643v3-2s", workload="slob")
    assert slob.Params(sessions=1).direct_io_slots == 2       # Oracle's default: 2 slots


def test_slob_reports_iops_per_core_and_latch_rates_by_their_definitions():
    r = _slob("xeon-e5-2643v3-2s", sessions=8, schema_size="4 GB", **{"database.db_cache": "1 GB"})
    x, span = r.extra, r.measured_time
    cores = load_profile("xeon-e5-2643v3-2s").cpu.cores
    assert x["iops_per_core"] == pytest.approx(x["iops"] / cores)
    assert r.tpm == pytest.approx(60 * r.throughput_per_s)       # its operations are logical reads, 3/4 physical
    assert x["iops"] / r.throughput_per_s == pytest.approx(0.75, rel=0.05)
    assert x["buffer_hit_ratio"] == pytest.approx(1.0 - x["iops"] / r.throughput_per_s)   # AWR's Buffer Hit %
    text = report.full(r)   # the load profile and AWR's latch activity, as the text says them
    assert f"buffer hit {100 * x['buffer_hit_ratio']:.2f}%" in text
    assert "corestat" not in text and "(cycles issuing, cpustat-like)" in text   # a Xeon's hyper-threads: no corestat
    assert f"Latch cache buffers chains: gets/s {x['latch.cache buffers chains.gets_per_s']:,.0f}" in text
    lrs = x["latch.cache buffers lru chain.gets_per_s"] * span
    assert lrs == pytest.approx(x["iops"] * span)             # one LRU latch get per physical read
    cbc = x["latch.cache buffers chains.gets_per_s"]
    assert cbc / x["iops"] == pytest.approx(1 / 0.75, rel=0.05)   # one CBC get per logical read, 3/4 physical
    assert x["read_wait_event"] == "db file sequential read"
    ev = {e["event"]: e for e in r.top_events}["db file sequential read"]
    assert x["avg_read_wait_ms"] == pytest.approx(ev["avg_ms"], rel=1e-6)
    assert 0.0 <= x["latch.cache buffers chains.miss_pct"] <= 100.0
    busy = x["iops"] * span / x["iops_per_db_cpu"]              # DB CPU: reads / (reads per busy second)
    assert x["db_cpu_per_s"] * span == pytest.approx(busy, rel=1e-9) and 0 < x["db_cpu_per_s"] < 8
    # the report of a run by hand, against the counters it is made of
    job = _slob_job(sessions=16, until=0.05, schema_size="4 GB", **{"database.db_cache": "1 MB",
                                                                    "database.cpu_count": "2"})
    rep = job.report(0.05)
    assert job.paths.lru.children == 1 and job.paths.cbc.children == 8
    for latch in (job.paths.cbc, job.paths.lru):
        st = latch.stats
        assert st.gets > 0 and st.misses > 0                    # few latches among 16 sessions: contended
        assert rep[f"latch.{latch.name}.miss_pct"] == pytest.approx(100.0 * st.misses / st.gets)
        assert rep[f"latch.{latch.name}.gets_per_s"] == pytest.approx(st.gets / 0.05)
        assert rep[f"latch.{latch.name}.sleeps"] == st.sleeps
    assert rep["iops"] == pytest.approx(job.completed / 0.05)
    cached = _slob_job(sessions=2, schema_size="4 GB", **{"database.db_cache": "8 GB"})
    rep = cached.report(0.05)                                   # all cached: no read, no read wait to average
    assert rep["iops"] == 0.0 and np.isnan(rep["avg_read_wait_ms"])
    assert rep["latch.cache buffers lru chain.miss_pct"] == 0.0



def test_slob_default_device_is_the_first_flash_array_even_after_disk_groups():
    """The schema's default device is the profile's first flash array, though device_names() lists the disk
    groups first (a profile with both: 'disks', then 'fa'); with none, the first device; a named one is kept."""
    from types import SimpleNamespace

    from workloads import slob

    def profile(flash):
        storage = SimpleNamespace(flash_arrays=dict.fromkeys(flash), device_names=lambda: ["disks", *flash])
        return SimpleNamespace(storage=storage)
    assert slob.data_device(profile(["fa", "fb"]), None) == "fa"
    assert slob.data_device(profile([]), None) == "disks"
    assert slob.data_device(profile(["fa"]), "disks") == "disks"


def test_slob_schema_must_fit_its_named_device_and_updates_need_the_datafiles_device_only_with_a_cache():
    """The capacity check takes params.device: 20 GB fits the UE10000's 'data' (60 GB) but not 'redo' (8 GB).
    Updates off the datafiles' device are refused only with a db_cache (DBWR writes there); with the schema all
    cached there is no DBWR and nothing is written, so the same update_pct on 'internal' loads."""
    scenario.load(None, {"sessions": "1", "schema_size": "20 GB", "device": "data"}, profile="ue10000",
                  workload="slob")
    with pytest.raises(ConfigError, match=r"params\.schema_size: got '?20 GB'?; expected at most the capacity of "
                                          r"device 'redo'"):
        scenario.load(None, {"sessions": "1", "schema_size": "20 GB", "device": "redo"}, profile="ue10000",
                      workload="slob")
    sc = scenario.load(None, {"sessions": "4", "update_pct": "10", "schema_size": "10 GB", "device": "internal"},
                       profile="t5220", workload="slob")
    assert sc.params.device == "internal" and sc.spec.database.db_cache is None



def test_slob_reads_with_no_wait_average_a_wait_of_0_and_no_read_has_none():
    """io_report: reads but no wait under the read event (each read had completed when its session took it,
    as a direct-path reader with slots may find) average 0 ms; no read at all averages nothing (NaN)."""
    from workloads import slob
    job = _slob_job(sessions=1, until=0.0, schema_size="4 GB")
    assert slob.io_report(job.system, job.paths, 10, 1.0, "no such event")["avg_read_wait_ms"] == 0.0
    assert np.isnan(slob.io_report(job.system, job.paths, 0, 1.0, "no such event")["avg_read_wait_ms"])


# --------------------------------------------------------------------------- CALIBRATE_IO by hand

def _calibrate(profile="xeon-e5-2643v3-2s", **params):
    sc = scenario.load(None, {k: str(v) for k, v in params.items()}, profile=profile, workload="calibrate_io")
    return run(sc)


def _steps_follow_the_rule(r, max_latency_ms, limit):
    """Each level doubles the reads in flight (capped at the files' limit) and the ramp continues exactly while a
    level is within max_latency, gains at least KNEE_GAIN over the previous one and is below the limit."""
    from workloads.calibrate_io import KNEE_GAIN
    levels = r.extra["level_table"]
    for i, lv in enumerate(levels):
        gain = lv["iops"] / levels[i - 1]["iops"] - 1.0 if i else 1.0
        goes_on = lv["latency_ms"] <= max_latency_ms and gain >= KNEE_GAIN and lv["in_flight"] < limit
        assert goes_on == (i < len(levels) - 1), (i, lv, gain)
        if i:
            assert lv["in_flight"] == min(2 * levels[i - 1]["in_flight"], limit)
    ok = [lv for lv in levels if lv["latency_ms"] <= max_latency_ms]
    best = max(ok, key=lambda lv: lv["iops"]) if ok else None
    assert r.extra["iops"] == (best["iops"] if best else 0.0)
    if best:
        assert r.extra["actual_latency_ms"] == best["latency_ms"]
    assert r.extra["levels"] == len(levels) and r.extra["max_latency_ms"] == max_latency_ms
    return levels


def test_calibrate_io_ramps_by_doubling_until_the_knee_the_latency_or_the_limit():
    # the T5220's six-drive array: the drives queue, latency passes 20 ms before 5 x 32 reads are in flight
    knee = _calibrate("t5220", num_physical_disks=2, database_size="10 GB", level_time="0.5 s")
    levels = _steps_follow_the_rule(knee, 20.0, 5 * 32)
    assert levels[0]["in_flight"] == 2 and levels[-1]["in_flight"] < 5 * 32
    # no latency bound to speak of: the drives' knee stops it (64 in flight add less than KNEE_GAIN to 32's)
    knee = _calibrate("t5220", num_physical_disks=2, database_size="10 GB", level_time="0.5 s", max_latency="1 s")
    levels = _steps_follow_the_rule(knee, 1000.0, 5 * 32)
    assert [lv["in_flight"] for lv in levels] == [2, 4, 8, 16, 32, 64]
    assert 0 < levels[-1]["iops"] / levels[-2]["iops"] - 1 < 0.05 and knee.extra["iops"] == levels[-1]["iops"]
    # the knee at the second level: 64 reads in flight already saturate the six drives
    early = _calibrate("t5220", num_physical_disks=64, database_size="10 GB", level_time="0.5 s", max_latency="1 s")
    assert [lv["in_flight"] for lv in _steps_follow_the_rule(early, 1000.0, 5 * 32)] == [64, 128]
    # a latency bound of 4 ms stops it at the first level above 6 ms, and none within: max_iops 0
    tight = _calibrate("ue10000", num_physical_disks=4, database_size="10 GB", device="data", level_time="0.2 s",
                       max_latency="4 ms")
    levels = _steps_follow_the_rule(tight, 4.0, 5 * 32)
    assert len(levels) == 1 and levels[0]["latency_ms"] > 4.17 and tight.extra["iops"] == 0.0
    assert np.isnan(tight.extra["actual_latency_ms"])
    # two files: at most 64 in flight
    files = _calibrate(num_physical_disks=16, datafiles=2, level_time="0.05 s")
    assert [lv["in_flight"] for lv in _steps_follow_the_rule(files, 20.0, 64)] == [16, 32, 64]


def test_calibrate_io_levels_shorter_than_a_read_go_on_ramping_not_crash():
    # 1-ms levels on the T5220's drives (a read takes ~5 ms): the first levels complete no read, which has no rate
    # to gain over (it divided by zero) and shows no knee: the ramp goes on until reads complete
    r = _calibrate("t5220", database_size="1 GB", level_time="1 ms")
    levels = r.extra["level_table"]
    assert r.status == "ok" and levels[0]["iops"] == levels[1]["iops"] == 0.0
    assert r.extra["iops"] == max(lv["iops"] for lv in levels) > 0
    assert [lv["in_flight"] for lv in levels] == [2 ** k for k in range(len(levels))]


def test_calibrate_io_levels_take_a_settling_fifth_and_their_time_and_mean_iops_is_all_reads_over_the_run():
    r = _calibrate(num_physical_disks=8, datafiles=1, level_time="0.05 s")
    levels = r.extra["level_table"]
    assert [lv["in_flight"] for lv in levels] == [8, 16, 32]
    assert r.elapsed == pytest.approx(len(levels) * 1.2 * 0.05, rel=1e-9)
    # every read counts in mean_iops, the settling fifth's too (at the level's rate: 1.2 x the measured reads)
    measured = sum(lv["iops"] * 0.05 for lv in levels)
    assert r.extra["mean_iops"] * r.elapsed == pytest.approx(1.2 * measured, rel=0.02)
    ev = {e["event"]: e for e in r.top_events}["Disk file I/O Calibration"]
    assert ev["waits"] > 0
    # by hand: every read counted once, by the process that reaped it; at the end every process retires
    from sim.system import System
    from workloads import calibrate_io
    sc = scenario.load(None, {"num_physical_disks": "1", "datafiles": "1", "level_time": "0.01 s"},
                       profile="xeon-e5-2643v3-2s", workload="calibrate_io")
    job = calibrate_io.Workload(System(sc), sc.params)
    job.start()
    job.system.env.run(until=job.done)
    assert [lv["in_flight"] for lv in job.levels] == [1, 2, 4, 8, 16, 32]
    job.system.env.run(until=job.system.env.now + 0.01)     # the last batches end, and nothing follows them
    assert job.completed == sum(s.reads_done for s in job.slaves) == job.paths.physical_reads > 0
    assert [s.slots for s in job.slaves] == [0] * len(job.slaves) and len(job.slaves) == 24   # cpu_count
    for key, zero in (("max_latency", "0 ms"), ("database_size", "0 GB"), ("level_time", "0 s")):
        with pytest.raises(ConfigError, match=f"params.{key}: got '?0"):
            scenario.load(None, {key: zero}, profile="xeon-e5-2643v3-2s", workload="calibrate_io")
    with pytest.raises(ConfigError, match="params.device: got 'nope'; expected one of the profile's devices: "):
        scenario.load(None, {"device": "nope"}, profile="xeon-e5-2643v3-2s", workload="calibrate_io")


def test_calibrate_io_spreads_reads_in_flight_over_at_most_cpu_count_processes():
    from sim.system import System
    from workloads import calibrate_io
    sc = scenario.load(None, {"database.cpu_count": "4"}, profile="xeon-e5-2643v3-2s", workload="calibrate_io")
    job = calibrate_io.Workload(System(sc), sc.params)
    assert job.limit == 5 * calibrate_io.IOS_PER_FILE
    job._set_in_flight(3)
    assert [s.slots for s in job.slaves] == [1, 1, 1]
    job._set_in_flight(10)
    assert [s.slots for s in job.slaves] == [3, 3, 2, 2]
    job._set_in_flight(2)                           # processes stay; the extra ones get nothing
    assert [s.slots for s in job.slaves] == [1, 1, 0, 0]
    job._set_in_flight(0)
    assert [s.slots for s in job.slaves] == [0, 0, 0, 0]
    assert job.progress() == 0.0
    job.levels = [{}] * 8
    assert job.progress() == 0.5
    job.levels = [{}] * 40
    assert job.progress() == 0.99
    job.done.succeed()
    assert job.progress() == 1.0



def test_calibrate_io_caps_every_level_at_the_file_limit_and_times_each_levels_reads_alone():
    """40 disks' worth on one file: the first level is already capped at 1 x 32 reads in flight, and the ramp
    stops there. On the T5220's six queuing drives, 16 then 32 in flight (one read per process, 64 CPUs): each
    level's latency is of its own reads, so Little's law holds per level (an average over the run so far
    would put the lighter level's shorter reads into the second and break it)."""
    capped = _calibrate(num_physical_disks=40, datafiles=1, level_time="0.02 s")
    assert [lv["in_flight"] for lv in capped.extra["level_table"]] == [32]
    r = _calibrate("t5220", num_physical_disks=16, datafiles=1, database_size="10 GB", level_time="0.5 s",
                   max_latency="1 s")
    levels = r.extra["level_table"]
    assert [lv["in_flight"] for lv in levels] == [16, 32] and levels[1]["latency_ms"] > 1.5 * levels[0]["latency_ms"]
    for lv in levels:
        assert lv["iops"] * lv["latency_ms"] / 1e3 == pytest.approx(lv["in_flight"], rel=0.05)



def test_calibrate_io_reports_the_best_level_within_the_latency_not_the_last():
    """max_iops is the highest IOPS among the levels within max_latency (20 ms): of 100, 150, 140 IOPS within
    it and 200 at 30 ms, the second level's 150, with that level's latency and CPU beside it (a level past the
    knee can read less than the one before, so the last within the bound is not the best); every level counts
    in `levels`."""
    from sim.system import System
    from workloads import calibrate_io
    sc = scenario.load(None, {}, profile="xeon-e5-2643v3-2s", workload="calibrate_io")
    job = calibrate_io.Workload(System(sc), sc.params)
    job.levels = [{"in_flight": n, "iops": x, "latency_ms": ms, "db_cpu_per_s": cpu}
                  for n, x, ms, cpu in ((4, 100.0, 5.0, 0.1), (8, 150.0, 10.0, 0.3), (16, 140.0, 15.0, 0.2),
                                        (32, 200.0, 30.0, 0.5))]
    rep = job.report(1.0)
    assert (rep["iops"], rep["actual_latency_ms"], rep["db_cpu_per_s"]) == (150.0, 10.0, 0.3)
    assert rep["iops_per_db_cpu"] == pytest.approx(500.0) and rep["iops_per_core"] == pytest.approx(150.0 / 12)
    assert rep["levels"] == 4 and rep["level_table"] is job.levels and rep["max_latency_ms"] == 20.0



def test_calibrate_io_data_files_must_fit_their_named_device():
    """20 GB of data files fit the UE10000's 'data' (60 GB), not its 'redo' (8 GB): the check takes params.device."""
    scenario.load(None, {"database_size": "20 GB", "device": "data"}, profile="ue10000", workload="calibrate_io")
    with pytest.raises(ConfigError, match=r"params\.database_size: .* capacity of device 'redo'"):
        scenario.load(None, {"database_size": "20 GB", "device": "redo"}, profile="ue10000", workload="calibrate_io")


@pytest.mark.parametrize("hit, update", [(0.25, 0.5), (0.5, 0.1), (0.8, 0.3)])
def test_slob_dirtying_share_matches_an_exact_lru_cache_with_dirty_buffers(hit, update):
    """The closed form against an exact LRU of `hit` x S buffers under uniform references over S blocks, each
    an update with odds `update`: a buffer is written once when it leaves dirty, so DBWR's writes per update
    are the share of updates that found their buffer clean (within 0.2 points at these three; asserted to 1)."""
    from collections import OrderedDict

    from workloads import slob
    blocks, rng = 4000, np.random.default_rng(7)
    size = int(hit * blocks)
    cache: OrderedDict[int, bool] = OrderedDict()   # block -> dirty
    writes = updates = 0
    refs, is_update = rng.integers(blocks, size=300_000), rng.random(300_000) < update
    for n, (b, u) in enumerate(zip(refs.tolist(), is_update.tolist())):
        if b in cache:
            cache.move_to_end(b)
        else:
            if len(cache) >= size:
                _, dirty = cache.popitem(last=False)
                writes += dirty and n > 50_000
            cache[b] = False
        if u:
            cache[b] = True
            updates += n > 50_000
    assert writes / updates == pytest.approx(slob.dirtying_share(hit, update), abs=0.01)
