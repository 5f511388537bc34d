"""Parallel execution and batch jobs: parameter defaults, pool limits, queuing, DOP policies,
granules, drive read-ahead, RMAN channel/section scheduling invariants, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim import scenario
from sim.db import px
from sim.hardware.profile import DiskSpec
from sim.hardware.storage import Disk
from sim.run import run
from sim.system import System
from workloads import rman

MB = 1024.0 * 1024.0


def _system(profile="t5220", **parallel):
    sc = scenario.load(None, {"table_size": "8 MB", "dop": 2, **{f"database.parallel.{k}": v for k, v in parallel.items()}},
                       profile=profile, workload="ctas")
    system = System(sc)
    system.set_memory_behaviour(0.002)   # as a workload would: spawning servers runs on strands
    return system


@pytest.mark.parametrize("cpu_count,pms,pst,pdl", [(256, 2560, 2048, 512), (64, 640, 512, 128)])
def test_defaults_derive_from_cpu_count(cpu_count, pms, pst, pdl):
    p = px.parameters(px.ParallelSpec(), cpu_count)
    assert (p["parallel_max_servers"], p["parallel_servers_target"], p["parallel_degree_limit"]) == (pms, pst, pdl)
    assert p["default_dop"] == 2 * cpu_count          # "twice the value of cpu_count"
    given = px.parameters(px.ParallelSpec(parallel_max_servers=64, parallel_servers_target=256), cpu_count)
    assert given["parallel_servers_target"] == 64       # never above parallel_max_servers


def test_dop_policies():
    pool = _system().instance.px
    assert pool.dop(2, 1e6) == 128                        # manual: default DOP
    assert pool.dop(2, 1e6, fixed=4) == 4
    auto = _system(parallel_degree_policy="auto", parallel_servers_target=32).instance.px
    assert auto.dop(2, 5.0) == 1                          # below parallel_min_time_threshold: serial
    assert auto.dop(2, 45.0) == 5                         # ~ one threshold of work per server
    assert auto.dop(2, 1e6) == 16                         # capped: 2 sets within parallel_servers_target
    limited = _system(parallel_degree_policy="auto", parallel_degree_limit=3).instance.px
    assert limited.dop(1, 1e6) == 3


def test_pool_downgrades_at_parallel_max_servers_and_queues_at_target():
    sysm = _system(parallel_degree_policy="auto", parallel_servers_target=16, parallel_max_servers=20)
    env, pool = sysm.env, sysm.instance.px
    log = []

    def stmt(name, dop, hold):
        got = yield from pool.acquire(dop, 2)
        log.append((name, env.now, got, pool.busy))
        assert pool.busy <= 20
        yield env.timeout(hold)
        pool.release(got, 2)

    env.process(stmt("a", 8, 10.0))
    env.process(stmt("b", 8, 10.0))   # 16 busy + 16 > 16: queued until a releases
    env.run()
    (a, ta, ga, _), (b, tb, gb, _) = log
    assert ga == gb == 8 and tb >= ta + 10.0
    assert pool.queued == 1 and pool.busy == 0
    manual = _system(parallel_max_servers=10)
    env2, pool2 = manual.env, manual.instance.px
    out = []

    def one():
        out.append((yield from pool2.acquire(8, 2)))
    env2.process(one())
    env2.run()
    assert out == [5] and pool2.downgraded == 1   # 10 servers for two sets


def test_granules_cover_the_segment_exactly():
    for size, producers in [(2 * 1024 * MB, 128), (64 * MB, 4), (8192.0 * 3, 16)]:
        g = px.granules(size, producers, 8192.0)
        assert sum(n for _o, n in g) == pytest.approx(size)
        assert all(o2 == o1 + n1 for (o1, n1), (o2, _n2) in zip(g, g[1:]))
        assert len(g) <= px.GRANULES_PER_SERVER * producers


def test_drive_read_ahead_hits_only_while_streams_fit_in_its_segments():
    spec = DiskSpec(model="x", rpm=250.0, avg_seek=0.004, media_rate=100 * MB, capacity=1e11, cache_segments=4)

    def misses(streams):
        env = simpy.Environment()
        d = Disk(env, "d", spec, np.random.default_rng(1))
        for step in range(20):
            for s in range(streams):
                d.submit("read", 8192.0, offset=s * 1e9 + step * 8192.0)
        env.run()
        return d.ios - d.prefetch_hits
    assert misses(4) == 4            # only each stream's first read seeks
    assert misses(5) == 5 * 20       # one stream too many: LRU thrash, every read seeks


@pytest.mark.parametrize("section", [None, 3.0, 0.7])
def test_rman_work_items_lose_nothing(section):
    sizes = (10.0, 2.5, 7.0)
    items = rman.work_items(sizes, section)
    for f, size in enumerate(sizes):
        assert sum(mb for i, _o, mb in items if i == f) == pytest.approx(size)
    if section is None:
        assert [mb for _i, _o, mb in items] == sorted(sizes, reverse=True)


def _rman(channels, section=None, seed=1, files=(24.0, 8.0, 6.0, 4.0)):
    params = {"channels": channels, "datafiles_mb": list(files), "run.seed": seed, "run.max_time": "2000 s"}
    if section:
        params["section_size"] = section
    return run(scenario.load(None, params, profile="t5220", workload="rman"))


def test_rman_channels_bound_by_largest_file_and_multisection_breaks_the_bound():
    one, two, eight, largest = _rman(1), _rman(2), _rman(8), _rman(1, files=(24.0,))
    assert one.status == two.status == eight.status == "ok"
    assert eight.extra["channels_used"] == 4       # a channel per file, no more
    assert eight.extra["items_done"] == 4
    assert eight.elapsed >= largest.elapsed * 0.99  # the largest file bounds elapsed time
    assert one.elapsed > two.elapsed >= eight.elapsed
    sections = _rman(8, "4 MB")
    assert sections.extra["items_done"] == sections.extra["work_items"] == 6 + 2 + 2 + 1
    assert sections.elapsed < eight.elapsed        # sections spread the largest file


def test_same_seed_same_numbers():
    a, b = _rman(3, "4 MB", seed=7), _rman(3, "4 MB", seed=7)
    assert (a.elapsed, a.events, a.cpu) == (b.elapsed, b.events, b.cpu)


def test_sqlldr_refuses_sessions_without_parallel_direct():
    from sim.config import OltpsimError
    with pytest.raises(OltpsimError, match="sessions"):
        scenario.load(None, {"sessions": 4}, profile="t5220", workload="sqlldr")


def _create_index(dop):
    r = run(scenario.load(None, {"table_size": "512 MB", "read_size": "2 KB", "dop": dop,
                                 "run.max_time": "2000 s"}, profile="t5220", workload="create_index"))
    return r, {e["event"]: e for e in r.top_events}


def test_create_index_read_bottleneck_comes_with_more_streams_than_drive_segments():
    """128 producers on 6 drives of 16 read-ahead segments, reading the paper's 2 KB blocks: reads
    seek, queue and bound the run (the paper's default-target signature); 16 producers fit the
    segments and the run is CPU-bound."""
    many, many_ev = _create_index(128)
    few, few_ev = _create_index(16)
    blocks = 512 * MB / 2048.0
    for ev in (many_ev, few_ev):   # each block is read once, one block a read
        assert ev["db file sequential read"]["waits"] == blocks
    assert few.devices["array"]["avg_service_ms"] < 0.5            # transfer + overhead: read-ahead hits
    assert few_ev["DB CPU"]["pct_db_time"] > 90
    assert many.devices["array"]["avg_service_ms"] > 5 * few.devices["array"]["avg_service_ms"]
    assert many_ev["db file sequential read"]["avg_ms"] > 50 * few_ev["db file sequential read"]["avg_ms"]
    assert many.elapsed > few.elapsed   # 8x the servers, yet slower: the drives, not the strands, bound it


# --------------------------------------------------------------------------- the pool by hand

class _Strands:
    """A dispatcher with a strand for every burst, 1e9 instructions a second: a spawn takes 20 ms."""

    def __init__(self, env):
        self.env, self.bursts = env, []

    def run(self, instructions, sys_share=0.0):
        self.bursts.append((instructions, sys_share))
        return self.env.timeout(instructions / 1e9)


def _pool(cpu_count=4, **spec):
    env = simpy.Environment()
    return env, px.PxPool(env, _Strands(env), px.ParallelSpec(**spec), cpu_count)


def _statement(env, pool, log, name, dop, hold, at=0.0):
    def proc():
        yield env.timeout(at)
        got = yield from pool.acquire(dop, 2)
        log.append((name, round(env.now, 9), got))
        yield env.timeout(hold)
        pool.release(got, 2)
    env.process(proc())


def test_statements_starting_together_spawn_each_server_once():
    env, pool = _pool()
    log = []
    _statement(env, pool, log, "a", 4, 1.0)
    _statement(env, pool, log, "b", 4, 1.0)
    env.run()
    # 16 servers at once, none started: 16 spawns of 20 ms, not 8 + 16 (b counting a's 8 as missing too);
    # each statement asks the spawner for one server at a time, so their requests alternate: a's 8th is
    # the 15th spawn, b's the 16th
    assert log == [("a", 0.30, 4), ("b", 0.32, 4)]
    assert pool.started == 16 and len(pool.dispatcher.bursts) == 16


def test_queued_statements_go_first_in_first_out():
    # auto, target 16: a holds 12 for 10 s; b (8) must wait; c (4) would fit now but queues behind b;
    # d (10) queues behind c. At 10 s b and c go in (8 + 4 <= 16), d (12 + 10 > 16) waits for b's end
    # (not let in at 10 s too, as if b's and c's servers were free until they resumed).
    env, pool = _pool(parallel_degree_policy="auto", parallel_servers_target=16, parallel_min_servers=40)
    log = []
    _statement(env, pool, log, "a", 6, 10.0)
    _statement(env, pool, log, "b", 4, 5.0, at=1.0)
    _statement(env, pool, log, "c", 2, 10.0, at=2.0)
    _statement(env, pool, log, "d", 5, 1.0, at=3.0)
    env.run()
    assert log == [("a", 0.0, 6), ("b", 10.0, 4), ("c", 10.0, 2), ("d", 15.0, 5)]
    assert pool.queued == 3 and pool.queue_time == pytest.approx(9 + 8 + 12, rel=1e-12)
    assert pool.peak_busy == 14 and not pool.queue and pool.busy == 0
