"""Parallel execution and batch jobs: parameter defaults, pool limits, queuing, DOP policies,
granules, drive read-ahead, RMAN channel/section scheduling invariants, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim import report, scenario
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
    assert few_ev["DB CPU"]["pct_call_time"] > 90
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


def test_defaults_scale_with_concurrent_parallel_users_and_given_limits_stay():
    p = px.parameters(px.ParallelSpec(concurrent_parallel_users=2, parallel_degree_limit=6), 64)
    assert p["parallel_max_servers"] == 1280 and p["parallel_servers_target"] == 512
    assert p["parallel_degree_limit"] == 6 and p["default_dop"] == 128 and p["cpu_count"] == 64


def test_the_default_parallel_max_servers_stops_at_the_largest_value_oracle_takes():
    """11.2 takes parallel_max_servers from 0 to 3600 (Oracle 11.2 Reference): the formula's 10 x cpu_count stops
    there (cpu_count 100,000 had derived a million servers), the target with it. A value given stays as given (one
    past that range is refused by the loader: test_parallel_max_servers_past_oracles_range_is_refused)."""
    assert px.parameters(px.ParallelSpec(), 360)["parallel_max_servers"] == 3600     # the formula's own value
    p = px.parameters(px.ParallelSpec(), 361)
    assert (p["parallel_max_servers"], p["parallel_servers_target"]) == (3600, 2888)
    huge = px.parameters(px.ParallelSpec(), 100_000)
    assert (huge["parallel_max_servers"], huge["parallel_servers_target"]) == (3600, 3600)
    assert px.parameters(px.ParallelSpec(parallel_max_servers=3000), 1000)["parallel_max_servers"] == 3000


def test_parallel_max_servers_past_oracles_range_is_refused():
    """PARALLEL_MAX_SERVERS takes 0 to 3600 in 11.2 (Oracle 11.2 Reference), and PARALLEL_MIN_SERVERS no more than
    it: 3600 is the last value either takes. 3601 ran before (5,000 servers on a 64-strand T5220)."""
    from sim.config import ConfigError
    assert _system(parallel_max_servers=3600).instance.px.params["parallel_max_servers"] == 3600
    for key in ("parallel_max_servers", "parallel_min_servers"):
        with pytest.raises(ConfigError) as info:
            _system(**{key: 3601, "parallel_max_servers": 3600} if key == "parallel_min_servers" else {key: 3601})
        assert info.value.path == f"database.parallel.{key}" and info.value.problem == "got 3601; expected at most 3600"
    assert _system(parallel_min_servers=3600, parallel_max_servers=3600).instance.px.started == 3600


def test_concurrent_parallel_users_is_one_of_the_factors_oracle_derives():
    """concurrent_parallel_users is 1 (manual memory), 2 (PGA_AGGREGATE_TARGET) or 4 (MEMORY_TARGET or SGA_TARGET)
    in the 11.2 Reference's formula for PARALLEL_MAX_SERVERS; 3 stood for no configuration and was taken (a 1,920-server
    default on the T5220)."""
    from sim.config import ConfigError
    for users in (1, 2, 4):   # 10 x 64 strands x users, under 3600
        assert _system(concurrent_parallel_users=users).instance.px.params["parallel_max_servers"] == 640 * users
    with pytest.raises(ConfigError) as info:
        _system(concurrent_parallel_users=3)
    assert info.value.path == "database.parallel.concurrent_parallel_users"
    assert info.value.problem == "got 3; expected one of 1, 2, 4"


def test_a_servers_target_above_max_servers_acts_as_max_servers():
    """Oracle documents PARALLEL_SERVERS_TARGET's range as 0 to PARALLEL_MAX_SERVERS; a larger one is taken and acts
    as parallel_max_servers (no statement may hold more servers than that), as the param's doc says: above a given
    maximum and above the T5220's derived 640 alike."""
    assert _system(parallel_servers_target=3000, parallel_max_servers=20).instance.px.params[
        "parallel_servers_target"] == 20
    assert _system(parallel_servers_target=3000).instance.px.params["parallel_servers_target"] == 640
    assert "above parallel_max_servers" in px.ParallelSpec.__dataclass_fields__["parallel_servers_target"].metadata[
        "doc"]


def test_min_servers_above_max_servers_is_refused_naming_both():
    from sim.config import OltpsimError
    with pytest.raises(OltpsimError, match="parallel_min_servers") as info:
        _system(parallel_min_servers=30, parallel_max_servers=20)
    assert "at most parallel_max_servers (20)" in str(info.value) and "30" in str(info.value)
    _system(parallel_min_servers=20, parallel_max_servers=20)   # equal is fine


def test_servers_are_spawned_one_at_a_time_and_kept():
    env, pool = _pool(parallel_min_servers=2)        # cpu_count 4: 40 max, target 32, default DOP 8
    assert pool.started == 2
    log = []
    _statement(env, pool, log, "a", 4, 1.0)
    _statement(env, pool, log, "b", 2, 1.0, at=2.0)
    env.run()
    # a: 2 sets of 4, 2 already started: 6 spawns of 20 ms by the one spawner, though strands are free
    assert log == [("a", 0.12, 4), ("b", 2.0, 2)]   # b finds started servers: no spawn
    assert pool.dispatcher.bursts == [(px.SPAWN_INSTRUCTIONS, px.SPAWN_SYS_SHARE)] * 6
    assert pool.report()["px_servers_started"] == 8 and pool.peak_busy == 8 and pool.busy == 0
    assert pool.statements == 2
    _statement(env, pool, log, "c", 6, 1.0, at=1.0)   # at 4 s: 12 servers, 8 started: 4 more
    _statement(env, pool, log, "d", 2, 1.0, at=3.0)   # at 6 s: none more
    env.run()
    assert log[2:] == [("c", 4.08, 6), ("d", 6.0, 2)] and pool.started == 12
    env, pool = _pool(parallel_min_servers=3)
    log = []
    _statement(env, pool, log, "e", 2, 1.0)            # 4 servers, 3 started: one spawn
    env.run()
    assert log == [("e", 0.02, 2)] and pool.started == 4
    # a spawn is mostly kernel work (fork/exec, SGA attach)
    assert 0.5 < pool.dispatcher.bursts[0][1] <= 1.0


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


def test_min_servers_start_with_the_instance_within_max_servers():
    env, pool = _pool(parallel_min_servers=50)       # default max: 40
    assert pool.started == 40


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


def test_the_target_is_a_hard_bound_and_serial_statements_never_queue():
    env, pool = _pool(parallel_degree_policy="auto", parallel_servers_target=17, parallel_min_servers=40)
    log = []
    _statement(env, pool, log, "a", 6, 10.0)          # 12 of 17
    _statement(env, pool, log, "b", 3, 1.0, at=1.0)   # 12 + 6 = 18 > 17: waits
    _statement(env, pool, log, "s", 1, 1.0, at=2.0)   # serial: needs no server, does not queue behind b
    env.run()
    assert log == [("a", 0.0, 6), ("s", 2.0, 1), ("b", 10.0, 3)] and pool.queued == 1
    assert pool.downgraded == 0


def test_a_fresh_pool_reports_nothing_done():
    _env, pool = _pool()
    r = pool.report()
    assert (r["px_statements"], r["px_queued"], r["px_downgraded"], r["px_queue_time_s"], r["px_servers_started"],
            r["px_peak_busy"]) == (0, 0, 0, 0.0, 0, 0)


@pytest.mark.parametrize("key, bad, good", [("parallel_max_servers", -1, 0), ("parallel_servers_target", -1, 0),
                                            ("parallel_degree_limit", 0, 1), ("parallel_min_servers", -1, 0),
                                            ("parallel_threads_per_cpu", 0, 1), ("concurrent_parallel_users", 0, 1),
                                            ("parallel_min_time_threshold", "0 s", "1 s")])
def test_parallel_settings_out_of_range_are_refused_naming_the_key(key, bad, good):
    from sim.config import OltpsimError
    with pytest.raises(OltpsimError) as info:
        _system(**{key: bad})
    assert key in str(info.value)
    _system(**{key: good})


def test_manual_policy_never_queues():
    env, pool = _pool(parallel_servers_target=4, parallel_min_servers=40)
    log = []
    _statement(env, pool, log, "a", 4, 10.0)
    _statement(env, pool, log, "b", 4, 10.0)
    env.run()
    assert log == [("a", 0.0, 4), ("b", 0.0, 4)] and pool.queued == 0


def test_too_few_free_servers_for_two_per_set_run_serial():
    env, pool = _pool(parallel_max_servers=10, parallel_min_servers=10)
    log = []
    _statement(env, pool, log, "a", 4, 10.0)     # 8 of 10
    _statement(env, pool, log, "b", 4, 10.0)     # 2 free: 1 a set, so serial
    _statement(env, pool, log, "c", 1, 1.0)      # serial by choice: not a downgrade
    env.run(until=5.0)
    assert [(n, g) for n, _t, g in log] == [("a", 4), ("b", 1), ("c", 1)]
    assert pool.busy == 8 and pool.downgraded == 1 and pool.statements == 3


def test_dop_rounds_up_and_never_drops_below_one():
    auto = _system(parallel_degree_policy="auto", parallel_servers_target=32).instance.px
    assert auto.dop(2, 10.5) == 2                         # ceil(1.05)
    assert auto.dop(2, 10.0) == 1
    tiny = _system(parallel_degree_policy="auto", parallel_servers_target=1).instance.px
    assert tiny.dop(2, 1e6) == 1                          # the target holds less than a server a set
    limited = _system(parallel_degree_policy="limited", parallel_servers_target=32).instance.px
    assert limited.dop(2, 1e6, fixed=6) == 6              # limited: a fixed degree is used as it is
    assert limited.dop(2, 45.0) == 5                      # no fixed degree: as auto
    assert limited.dop(2, 5.0) == 1


def test_granules_by_hand():
    b = 8192.0
    assert px.granules(10 * b, 1, b) == [(k * b, b) for k in range(10)]    # fewer blocks than 13: a block each
    g = px.granules(100 * b, 2, b)                                         # 26 granules of 100 blocks
    assert len(g) == 26 and {n / b for _o, n in g} == {3.0, 4.0} and g[0] == (0.0, 4 * b)
    assert px.granules(100.0, 4, b) == [(0.0, b)]                          # under a block: one block
    assert px.granules(10.5 * b, 1, b) == [(k * b, b) for k in range(11)]  # a part block at the end: read too


# --------------------------------------------------------------------------- a statement by hand

class _Session:
    def __init__(self, env, log):
        self.env, self.log = env, log

    def io(self, device, kind, nbytes, offset, event_name):
        self.log.append((kind, nbytes, offset, event_name))
        yield self.env.timeout(0.0)

    def cpu(self, instructions, sys_share=0.0):
        self.log.append(("cpu", instructions, sys_share))
        return self.env.timeout(instructions / 1e9)


class _Instance:
    def __init__(self):
        self.env, self.log, self.sessions = simpy.Environment(), [], 0
        self.spec = type("Spec", (), {"block_size": 8192.0})

    def new_session(self):
        self.sessions += 1
        return _Session(self.env, self.log)


def _px_statement(dop, consume_s, size=2 * MB, message=256 * 1024.0, finish_s=0.0):
    inst = _Instance()
    got, backlog = {}, []
    stmt = None

    def consume(session, nbytes):
        backlog.append(stmt.scanned - stmt.consumed)
        yield inst.env.timeout(consume_s)

    def finish(session, index, nbytes):
        yield inst.env.timeout(finish_s)
        got[index] = nbytes

    stmt = px.PxStatement(inst, dop=dop, device="table", segment_offset=1e9, segment_bytes=size, read_size=64 * 1024.0,
                          read_event="direct path read", message_bytes=message, produce_instructions_per_mb=1e6,
                          consume=consume, finish=finish, sys_share=0.25)

    def whole():
        yield from stmt.run()
        got["ended"] = inst.env.now
    inst.env.process(whole())
    inst.env.run()
    return inst, stmt, got, backlog


@pytest.mark.parametrize("dop", [1, 3])
def test_a_statement_reads_every_byte_once_and_hands_all_of_it_on(dop):
    inst, stmt, got, _ = _px_statement(dop, 0.001)
    reads = sorted((o, n) for k, n, o, _e in [x for x in inst.log if x[0] == "read"])
    assert reads[0][0] == 1e9 and all(o2 == o1 + n1 for (o1, n1), (o2, _n) in zip(reads, reads[1:]))
    assert sum(n for _o, n in reads) == 2 * MB and all(n <= 64 * 1024.0 for _o, n in reads)
    assert {e for k, *_x, e in inst.log if k == "read"} == {"direct path read"}
    cpu = [x for x in inst.log if x[0] == "cpu"]
    assert sum(i for _k, i, _s in cpu) == pytest.approx(2e6, rel=1e-12) and {s for *_x, s in cpu} == {0.25}
    ended = got.pop("ended")
    assert stmt.scanned == stmt.consumed == 2 * MB and sum(got.values()) == 2 * MB
    assert sorted(got) == list(range(dop)) and inst.sessions == (2 * dop if dop > 1 else 1)   # serial: one process
    assert ended == inst.env.now


def test_a_statement_ends_when_its_last_consumer_has_finished_and_its_cpu_is_user_time_unless_said():
    inst, stmt, got, _ = _px_statement(2, 0.001, finish_s=5.0)
    assert got["ended"] == inst.env.now and inst.env.now > 5.0
    inst2 = _Instance()
    s = px.PxStatement(inst2, dop=1, device=None, segment_offset=0.0, segment_bytes=8192.0, read_size=8192.0,
                       read_event="x", message_bytes=8192.0, produce_instructions_per_mb=1e6,
                       consume=lambda session, n: iter([]))
    inst2.env.process(s.run())
    inst2.env.run()
    assert [x[2] for x in inst2.log if x[0] == "cpu"] == [0.0] and s.consumed == 8192.0


def test_slow_consumers_hold_the_producers_back():
    # two producers and two consumers, granules of one 64 KB read (26 of them), a message a read, reads
    # instant, consuming 1 s a message: when a consumer takes a message a producer's blocked put goes
    # in, so the producers are ahead by the table queue's 2 messages a consumer and the ones being consumed
    _inst, stmt, _got, backlog = _px_statement(2, 1.0, size=26 * 64 * 1024.0, message=64 * 1024.0)
    assert max(backlog) == 2 * 3 * 64 * 1024.0 and len(backlog) == 26
    # serial: the one process reads nothing ahead of what it is processing
    _inst, stmt, _got, backlog = _px_statement(1, 1.0, size=13 * 64 * 1024.0, message=64 * 1024.0)
    assert max(backlog) == 64 * 1024.0 and len(backlog) == 13


def test_a_run_cut_while_servers_start_reports_the_dop_they_start_for():
    """cpu_count 100,000: parallel_max_servers 3,600 grants the statement 1,800 a set (downgraded), and PSP0 spawns
    them one at a time. Cut at 1 s with a few dozen started, the report had said 'DOP 1' beside 'peak busy 3,600'."""
    r = run(scenario.load(None, {"table_size": "2 GB", "database.cpu_count": 100_000, "run.max_time": "1 s"},
                          profile="t5220", workload="ctas"))
    x = r.extra
    assert r.status == "timeout" and 0 < x["px_servers_started"] < 3600
    assert (x["dop"], x["px_peak_busy"], x["px_downgraded"]) == (1800, 3600, 1)
    # the servers busy counts that PSP0 had not yet started: said beside it (busy above started had no why)
    assert x["px_servers_started"] + x["px_servers_spawning"] == 3600
    assert f"still being spawned {x['px_servers_spawning']:,}" in report.full(r)


def test_a_statement_asking_just_as_a_release_lets_a_queued_one_in_waits_behind_it():
    """A session ending a statement and asking for the next at the same instant finds the queue empty
    but b let in and not yet resumed: b's servers (admitted) count against the target, so a2 queues
    (counting only busy servers let a2 in too: 32 busy against a target of 16)."""
    env, pool = _pool(parallel_degree_policy="auto", parallel_servers_target=16, parallel_min_servers=40)
    log = []

    def back_to_back():
        for name in ("a1", "a2"):
            got = yield from pool.acquire(8, 2)
            log.append((name, env.now, got))
            yield env.timeout(10.0)
            pool.release(got, 2)
    env.process(back_to_back())
    _statement(env, pool, log, "b", 8, 5.0, at=1.0)
    env.run()
    assert log == [("a1", 0.0, 8), ("b", 10.0, 8), ("a2", 15.0, 8)]
    assert pool.peak_busy == 16 and pool.queued == 2 and pool.admitted == 0


def test_a_message_goes_on_as_soon_as_it_holds_message_bytes():
    """52 blocks, one producer: 13 granules of 4 blocks; reads of a block, messages of 2 blocks: each
    granule hands on two full messages (not 3 blocks then 1, nor the whole granule at its end)."""
    b = 8192.0
    inst, sizes = _Instance(), []

    def consume(session, nbytes):
        sizes.append(nbytes)
        yield inst.env.timeout(0.0)
    stmt = px.PxStatement(inst, dop=1, device="table", segment_offset=0.0, segment_bytes=52 * b, read_size=b,
                          read_event="direct path read", message_bytes=2 * b, produce_instructions_per_mb=1e6,
                          consume=consume)
    inst.env.process(stmt.run())
    inst.env.run()
    assert sizes == [2 * b] * 26


def test_one_thread_per_cpu_makes_the_default_dop_and_degree_limit_cpu_count():
    """default DOP = parallel_degree_limit ('CPU') = parallel_threads_per_cpu x cpu_count: with 1 thread a
    CPU, 64 (not 'twice cpu_count', which holds only for the usual 2); targets follow the same factor."""
    p = px.parameters(px.ParallelSpec(parallel_threads_per_cpu=1), 64)
    assert (p["default_dop"], p["parallel_degree_limit"], p["parallel_servers_target"], p["parallel_max_servers"]) == \
        (64, 64, 256, 320)


def test_the_limited_policy_never_queues():
    """Statement queuing is parallel_degree_policy=auto's alone: under limited a statement past the
    target runs at once, as under manual."""
    env, pool = _pool(parallel_degree_policy="limited", parallel_servers_target=4, parallel_min_servers=40)
    log = []
    _statement(env, pool, log, "a", 4, 10.0)
    _statement(env, pool, log, "b", 4, 10.0)
    env.run()
    assert log == [("a", 0.0, 4), ("b", 0.0, 4)] and pool.queued == 0 and pool.peak_busy == 16
