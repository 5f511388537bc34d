"""Disks and volumes against closed forms: M/G/1 at light load, the seek curve's mean,
the elevator's gain with queue depth, and a stripe's throughput scaling with its width."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim.analytic import mg1_wait
from sim.hardware.profile import DiskSpec
from sim.hardware.storage import Disk, Volume

MS = 1e-3
SPEC = DiskSpec(model="test", rpm=7200 / 60, avg_seek=7.5 * MS, media_rate=15 * 2**20, capacity=8 * 2**30)
CURVE = DiskSpec(model="test", rpm=7200 / 60, avg_seek=7.5 * MS, media_rate=15 * 2**20, capacity=8 * 2**30,
                 track_seek=0.8 * MS, full_seek=15 * MS)


def _poisson_run(disk: Disk, env: simpy.Environment, rate: float, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)

    def source():
        for _ in range(n):
            yield env.timeout(rng.exponential(1.0 / rate))
            disk.submit("read", 2048)
    env.process(source())
    env.run()


def test_single_fcfs_disk_is_mg1_at_light_load():
    """Random 2 KB reads at 30% utilisation: mean response = E[S] + Pollaczek-Khinchine wait."""
    env = simpy.Environment()
    disk = Disk(env, "d", SPEC, np.random.default_rng(1))
    rot = 1.0 / SPEC.rpm
    fixed = SPEC.avg_seek + 2048 / SPEC.media_rate
    es = fixed + rot / 2
    es2 = fixed**2 + fixed * rot + rot**2 / 3          # E[(c + U(0, rot))^2]
    lam = 0.3 / es
    _poisson_run(disk, env, lam, 40_000, seed=2)
    expected = es + mg1_wait(lam, es, es2)
    # 40k samples at rho=0.3: the standard error of the mean response is ~0.5%; allow 3%.
    assert disk.response.mean == pytest.approx(expected, rel=0.03)
    assert disk.service.mean == pytest.approx(es, rel=0.01)


def test_seek_curve_mean_over_random_pairs():
    """FCFS random positions: mean seek = track + 8/15 (full - track), E[sqrt|U1-U2|] = 8/15."""
    env = simpy.Environment()
    disk = Disk(env, "d", CURVE, np.random.default_rng(3))
    _poisson_run(disk, env, 5.0, 30_000, seed=4)
    rot = 1.0 / CURVE.rpm
    mean_seek = disk.service.mean - rot / 2 - 2048 / CURVE.media_rate
    expected = CURVE.track_seek + 8 / 15 * (CURVE.full_seek - CURVE.track_seek)
    assert mean_seek == pytest.approx(expected, rel=0.03)


def _closed_loop_iops(devices, depth: int, seconds: float = 60.0, seed: int = 5, submit=None) -> float:
    """`depth` I/Os kept outstanding all the time; completions per second."""
    env = devices[0].env if hasattr(devices[0], "env") else None
    done = [0]

    def worker(dev):
        while True:
            yield (submit or (lambda d: d.submit("read", 2048)))(dev)
            done[0] += 1
    for i in range(depth):
        env.process(worker(devices[i % len(devices)]))
    env.run(until=seconds)
    return done[0] / seconds


@pytest.mark.parametrize("band", [1.0, 0.2])
def test_elevator_throughput_rises_with_queue_depth(band):
    rates = []
    for depth in (1, 4, 16):
        env = simpy.Environment()
        disk = Disk(env, "d", CURVE, np.random.default_rng(6), queue="elevator", band=band)
        rates.append(_closed_loop_iops([disk], depth))
    assert rates[0] < rates[1] < rates[2]
    assert rates[2] > 1.3 * rates[0]          # shorter seeks: a real gain, not noise
    env = simpy.Environment()
    fcfs = Disk(env, "d", CURVE, np.random.default_rng(6), queue="fcfs", band=band)
    assert _closed_loop_iops([fcfs], 16) == pytest.approx(rates[0], rel=0.05)   # FCFS gains nothing


@pytest.mark.parametrize("width", [2, 6])
def test_stripe_throughput_scales_with_width(width):
    """Random small reads over a stripe, 8 outstanding per member disk: width x one disk."""
    def iops(n):
        env = simpy.Environment()
        disks = [Disk(env, f"d{i}", CURVE, np.random.default_rng(10 + i), queue="elevator") for i in range(n)]
        vol = Volume(env, "v", disks, np.random.default_rng(7), "stripe", 64 * 1024)
        return _closed_loop_iops([vol], 8 * n, seconds=40.0)
    one = iops(1)
    # Random offsets put unequal queues on the members; at 8 per disk the loss is a few percent.
    assert iops(width) == pytest.approx(width * one, rel=0.08)


def test_small_volume_keeps_heads_in_a_band():
    """A 60 GB volume on 36 x 8 GB drives: seeks span a fifth of the stroke, so service drops."""
    def svc(size):
        env = simpy.Environment()
        disks = [Disk(env, f"d{i}", CURVE, np.random.default_rng(20 + i)) for i in range(4)]
        vol = Volume(env, "v", disks, np.random.default_rng(8), "stripe", 64 * 1024, size=size)
        _closed_loop_iops([vol], 1, seconds=60.0)
        return sum(d.service.total for d in disks) / sum(d.service.n for d in disks)
    full, band = svc(None), svc(4 * 8 * 2**30 / 5)
    rot = 1.0 / CURVE.rpm
    # mean seek over a band b: track + 8/15 (full - track) sqrt(b)
    expected = (CURVE.track_seek + 8 / 15 * (CURVE.full_seek - CURVE.track_seek) * (1 / 5) ** 0.5
                + rot / 2 + 2048 / CURVE.media_rate)
    assert band == pytest.approx(expected, rel=0.04)
    assert band < 0.8 * full


def test_asm_normal_redundancy_writes_twice_reads_once():
    """ASM normal redundancy: a write lands on two drives and crosses the controller twice, a read
    once, and the group holds half its raw capacity."""
    from sim.hardware.storage import Controller
    mb = 2.0**20

    def run(kind):
        env = simpy.Environment()
        disks = [Disk(env, f"d{i}", SPEC, np.random.default_rng(30 + i)) for i in range(6)]
        ctrl = Controller(env, "c", 100 * mb)
        vol = Volume(env, "v", disks, np.random.default_rng(9), "normal", mb, [ctrl])

        def stream():
            for i in range(64):
                yield vol.submit(kind, mb, i * mb)
        env.process(stream())
        env.run()
        return vol, disks, ctrl, env.now
    wvol, wdisks, wctrl, wtime = run("write")
    rvol, rdisks, rctrl, rtime = run("read")
    assert wvol.capacity == pytest.approx(3 * SPEC.capacity)
    assert sum(d.bytes for d in wdisks) == pytest.approx(2 * 64 * mb)
    assert wctrl.bytes == pytest.approx(2 * 64 * mb) and rctrl.bytes == pytest.approx(64 * mb)
    assert sum(d.bytes for d in rdisks) == pytest.approx(64 * mb)
    # a piece and its mirror sit on different drives (failure groups)
    env = simpy.Environment()
    pair = [Disk(env, f"p{i}", SPEC, np.random.default_rng(40 + i)) for i in range(2)]
    Volume(env, "p", pair, np.random.default_rng(9), "normal", mb).submit("write", mb, 0.0)
    env.run()
    assert [d.bytes for d in pair] == [mb, mb]


def test_t5220_array_seek_curve_averages_to_the_data_sheet_seek():
    """The T5220 array drives' seek curve (track-to-track, derived full stroke), sampled between
    uniformly random head positions, averages the data sheet's 3.5 ms seek."""
    from sim.hardware.profile import load_profile
    spec = load_profile("t5220").storage.disk_groups["array"].disk
    disk = Disk(simpy.Environment(), "d", spec, np.random.default_rng(0))
    u = np.random.default_rng(1).random((200_000, 2))
    mean = np.mean([disk.seek_time(abs(a - b)) for a, b in u])
    assert mean == pytest.approx(spec.avg_seek, rel=0.01)


def test_a_volume_holds_what_its_disk_group_spec_says_it_can():
    """The capacity a profile's disk group is checked against (DiskGroupSpec.usable_capacity, which
    refuses a larger volume_size) is the capacity the simulated Volume gets: one rule, data_disks."""
    from sim import scenario
    from sim.hardware.profile import profile_names
    from sim.system import System

    for name in profile_names():
        sc = scenario.load(None, {"users": "8"}, profile=name, workload="tpcc")
        devices = System(sc).devices
        for gname in sc.profile.storage.disk_groups:
            assert devices[gname].capacity == pytest.approx(sc.profile.storage.capacity(gname)), (name, gname)
    # every layout, on t5220's array of 6 drives: 6, 5 (parity), 1 (mirror), 3 (ASM normal) drives' worth
    key = "hardware.storage.disk_groups.array"
    for layout, drives in (("stripe", 6), ("raid5", 5), ("mirror", 1), ("normal", 3)):
        sc = scenario.load(None, {"users": "8", f"{key}.layout": layout}, profile="t5220", workload="tpcc")
        group = sc.profile.storage.disk_groups["array"]
        assert group.count == 6 and group.usable_capacity == drives * group.disk.capacity, layout
        assert System(sc).devices["array"].capacity == group.usable_capacity, layout


@pytest.mark.parametrize("layout", ["stripe", "raid5"])
def test_a_volumes_response_obeys_littles_law_at_the_host(layout):
    """`depth` I/Os always outstanding: completions/s x the volume's mean response = depth (Little's law), with
    the controller's queue and a striped I/O's slowest piece in it. The drives' own response leaves both out:
    iostat's wait+svc from it had put 3.6 I/Os in flight where sessions kept 59 (helper probe, stop 32)."""
    from sim.hardware.storage import Controller
    env = simpy.Environment()
    disks = [Disk(env, f"d{i}", CURVE, np.random.default_rng(20 + i), queue="elevator") for i in range(5)]
    ctrl = Controller(env, "c", 20 * 2**20)   # slower than the drives together: I/Os queue at the bus
    vol = Volume(env, "v", disks, np.random.default_rng(8), layout, 64 * 1024, controllers=[ctrl])
    depth = 12
    warm = 5.0
    kinds = iter(np.random.default_rng(9).random(10**6))

    def one(v):   # a mix of 1 MB reads over all the drives, and 8 KB writes on one drive
        return v.submit("read", 2**20) if next(kinds) < 0.5 else v.submit("write", 8192)
    _closed_loop_iops([vol], depth, seconds=warm, submit=one)
    vol.reset_stats()
    start = env.now
    env.run(until=start + 60.0)
    x = vol.ios / (env.now - start)
    assert x * vol.response.mean == pytest.approx(depth, rel=0.02)
    drives = sum(d.response.total for d in disks) / sum(d.response.n for d in disks)
    assert x * drives < 0.8 * depth   # the drives' view alone misses the bus and the split


def test_the_t_series_profiles_share_one_array():
    """A what-if between T-series servers changes the server only: the same estimated FC array behind each (four
    of them had lost the T5220's mirroring, seek curve and read-ahead: a plain stripe of twice the capacity)."""
    from sim.hardware.profile import load_profile
    arrays = {n: load_profile(n).storage.disk_groups["array"] for n in ("t5120", "t5140", "t5220", "t5240", "t5440")}
    assert all(a == arrays["t5220"] for a in arrays.values())
    assert arrays["t5220"].layout == "normal" and arrays["t5220"].disk.cache_segments == 16
