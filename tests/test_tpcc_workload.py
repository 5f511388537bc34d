"""The TPC-C-like workload (workloads/tpcc.py) and its block layout (workloads/tpcc_blocks.py) against
the TPC-C specification and first principles: the mix, keying and think times (TPC-C 5.2.3, 5.2.5.7),
5..15 order lines (2.4.1.3), NURand (2.1.6) against brute-force enumeration, rows per block from the
block size and row length, terminals as a closed queueing network (Little's law), and the I/O plan's
bookkeeping (every dirty block and every touch accounted for)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy

from sim import scenario
from sim.config import ConfigError
from sim.db.buffer_cache import BufferCache
from sim.system import System
from workloads import tpcc, tpcc_blocks as tb

TYPES = ("new_order", "payment", "order_status", "delivery", "stock_level")
SPEC_MIX = {"new_order": 0.45, "payment": 0.43, "order_status": 0.04, "delivery": 0.04, "stock_level": 0.04}
# TPC-C 5.2.5.7: minimum keying time and mean think time per transaction type (seconds)
SPEC_KEYING = {"new_order": 18.0, "payment": 3.0, "order_status": 2.0, "delivery": 2.0, "stock_level": 2.0}
SPEC_THINK = {"new_order": 12.0, "payment": 12.0, "order_status": 10.0, "delivery": 5.0, "stock_level": 5.0}


# --------------------------------------------------------------------------- helpers

class FakeSession:
    """A session whose every CPU burst takes `busy` seconds and whose I/O and commits take none;
    it records what the workload asks of it."""

    def __init__(self, env, busy=0.0):
        self.env, self.busy, self.log = env, busy, []

    def cpu(self, instructions, sys_share=0.0):
        self.log.append(("cpu", instructions, sys_share))
        return self.env.timeout(self.busy)

    def commit(self, redo_bytes):
        self.log.append(("commit", redo_bytes))
        yield self.env.timeout(0.0)

    def read_block(self, os_cached=False, files=None, cpu=0.0, sys_share=0.0):
        if cpu:   # the CPU up to the read (a real session runs it in the read's burst): logged as a burst of its own
            yield self.cpu(cpu, sys_share)
        self.log.append(("read", os_cached, files))
        yield self.env.timeout(0.0)

    def dirtied(self, blocks, files=None, checkpoint=False):
        self.log.append(("dirtied", blocks, files, checkpoint))

    def wake(self, client_working_set=0.0):
        self.log.append(("wake", client_working_set))
        yield self.env.timeout(0.0)


def _load(profile="t5220", **over):
    return scenario.load(None, {"users": 8, **over}, profile=profile, workload="tpcc")


def _build(profile="t5220", **over):
    sc = _load(profile, **over)
    system = System(sc)
    return system, tpcc.Workload(system, sc.params)


def _one(wl, kind, session=None):
    """Run one transaction of `kind` on a fake session; its log."""
    session = session or FakeSession(wl.env)
    wl.env.run(until=wl.env.process(wl._transaction(session, kind)))
    return session.log


def _cached(**over):
    """A database not all cached (datafiles in the model): 200 warehouses of 2 KB blocks, 1 GB cache."""
    base = {"users": 6, "warehouses": 200, "database.block_size": "2 KB", "database.db_cache": "1 GB",
            "database.redo_device": "redo", "database.data_device": "data"}
    return _build("ue10000", **{**base, **over})


# --------------------------------------------------------------------------- the specification's constants

def test_the_mix_keying_and_think_times_are_the_specifications():
    """TPC-C 5.2.3 (45/43/4/4/4) and 5.2.5.7; the mean cycle is 20.99 s, so ten terminals run at most
    10 x 60 / 20.99 x 0.45 = 12.86 New-Orders a minute per warehouse."""
    assert tpcc.TYPES == TYPES
    assert tpcc.STANDARD_MIX == SPEC_MIX and sum(tpcc.STANDARD_MIX.values()) == pytest.approx(1.0)
    assert tpcc.STANDARD_KEYING == SPEC_KEYING and tpcc.STANDARD_THINK == SPEC_THINK
    cycle = sum(SPEC_MIX[t] * (SPEC_KEYING[t] + SPEC_THINK[t]) for t in TYPES)
    assert cycle == pytest.approx(20.99)
    assert 10 * 60.0 / cycle * 0.45 == pytest.approx(12.86, abs=0.005)


def test_read_only_types_change_nothing_and_write_no_redo():
    for t in ("order_status", "stock_level"):
        assert tpcc.REDO_BYTES[t] == 0.0
        assert all(t not in per for per in tb.updates(2048).values())
        assert t not in tb.UNDO_BYTES and t not in tb.INSERTED_BYTES
    for t in ("new_order", "payment", "delivery"):
        assert tpcc.REDO_BYTES[t] > 0.0


def test_llc_misses_follow_the_square_root_rule():
    """MPKI_REF at 512 KB of last-level cache per core (the T2: 4 MB over 8 cores); four times the
    cache per core halves the misses, a quarter doubles them."""
    ref = tpcc.MPKI_REF / 1000.0
    assert tpcc.misses_per_instruction(4 * 2**20, 8) == pytest.approx(ref)
    assert tpcc.misses_per_instruction(16 * 2**20, 8) == pytest.approx(ref / 2)
    assert tpcc.misses_per_instruction(4 * 2**20, 32) == pytest.approx(ref * 2)
    assert tpcc.misses_per_instruction(2 * 2**20, 1) == pytest.approx(ref / 2)


def test_warehouses_are_a_tenth_of_the_terminals_at_least_one():
    """TPC-C 4.2.2: ten terminals per warehouse."""
    P = tpcc.Params
    assert tpcc.warehouses_of(P(users=100)) == 10
    assert tpcc.warehouses_of(P(users=109)) == 10
    assert tpcc.warehouses_of(P(users=9)) == 1
    assert tpcc.warehouses_of(P(users=1)) == 1
    assert tpcc.warehouses_of(P(users=100, warehouses=3)) == 3


# --------------------------------------------------------------------------- configuration checks

def test_the_mix_is_checked():
    with pytest.raises(ConfigError, match="unknown transaction type"):
        _load(mix={"new_order": 1.0, "bogus": 1.0})
    with pytest.raises(ConfigError, match="a share >= 0"):
        _load(mix={"new_order": 1.0, "payment": -0.1})
    with pytest.raises(ConfigError, match="add up to more than 0"):
        _load(mix={"new_order": 0.0, "payment": 0.0})
    assert _load(mix={"new_order": 1.0, "payment": 0.0}).params.mix["payment"] == 0.0   # zero is a share


def test_ten_terminals_per_warehouse_with_the_standard_times():
    assert _load(users=20, warehouses=2).params.users == 20
    with pytest.raises(ConfigError, match=r"at most 10 terminals per warehouse.*\(20 for 2 warehouses\)"):
        _load(users=21, warehouses=2)
    # with times of one's own the terminals are not TPC-C's: no limit
    assert _load(users=21, warehouses=2, think_time="1 s").params.users == 21
    assert _load(users=21, warehouses=2, keying_time="1 s").params.users == 21


def test_datafiles_needed_with_a_datafile_size():
    """Six segments (stock, its index, customer, its index, old orders, hot) and the insert point: 7
    datafiles; with rollback segments 8."""
    base = {"users": 6, "warehouses": 1, "database.block_size": "2 KB", "database.db_cache": "50 MB",
            "database.datafile_size": "100 MB"}
    assert _load("ue10000", **base, **{"database.datafiles": 7})
    with pytest.raises(ConfigError, match="at least 7 with datafile_size"):
        _load("ue10000", **base, **{"database.datafiles": 6})
    undo = {**base, "database.rollback_size": "10 MB"}
    assert _load("ue10000", **undo, **{"database.datafiles": 8})
    with pytest.raises(ConfigError, match="at least 8 with datafile_size"):
        _load("ue10000", **undo, **{"database.datafiles": 7})


def test_rollback_segments_need_a_mix_that_changes_something():
    base = {"users": 6, "warehouses": 1, "database.block_size": "2 KB", "database.db_cache": "50 MB",
            "database.rollback_size": "10 MB"}
    with pytest.raises(ConfigError, match="transactions that change nothing"):
        _load("ue10000", **base, mix={"order_status": 0.5, "stock_level": 0.5})
    assert _load("ue10000", **base, mix={"order_status": 0.5, "payment": 0.5})


# --------------------------------------------------------------------------- one transaction

def test_new_order_has_5_to_15_order_lines_uniformly_and_work_scales_with_them():
    """TPC-C 2.4.1.3: ol_cnt uniform in [5, 15] (mean 10); CPU is the logical reads at the path
    length per get and redo scales with the lines."""
    _, wl = _build()
    per_get = tpcc.INSTRUCTIONS_PER_GET * tpcc.PATH_LENGTH["sparcv9"]
    assert wl.path_length == pytest.approx(per_get)
    session = FakeSession(wl.env)
    n = 5500

    def many():
        for _ in range(n):
            yield from wl._transaction(session, "new_order")
    wl.env.run(until=wl.env.process(many()))
    cpu = [i for op, i, *_ in session.log if op == "cpu"]
    redo = [r for op, r in ((e[0], e[1]) for e in session.log) if op == "commit"]
    assert len(cpu) == len(redo) == n
    assert all(s == tpcc.SYSCALL_SHARE for op, _, s in (e for e in session.log if e[0] == "cpu"))
    lines = np.array([10.0 * i / (per_get * tpcc.LOGICAL_READS["new_order"]) for i in cpu])
    assert np.allclose(lines, np.round(lines))
    lines = np.round(lines).astype(int)
    assert set(lines.tolist()) == set(range(5, 16))
    counts = np.bincount(lines, minlength=16)[5:]
    assert counts.min() > n / 11 * 0.8 and counts.max() < n / 11 * 1.2
    assert lines.mean() == pytest.approx(10.0, abs=0.1)
    assert np.allclose(redo, tpcc.REDO_BYTES["new_order"] * lines / 10.0)


@pytest.mark.parametrize("kind", ["payment", "order_status", "delivery", "stock_level"])
def test_the_other_types_run_their_reads_once_and_commit_their_redo(kind):
    _, wl = _build()
    log = _one(wl, kind)
    cpu = [e for e in log if e[0] == "cpu"]
    assert len(cpu) == 1
    assert cpu[0][1] == pytest.approx(wl.path_length * tpcc.LOGICAL_READS[kind])
    commits = [e[1] for e in log if e[0] == "commit"]
    assert commits == ([tpcc.REDO_BYTES[kind]] if tpcc.REDO_BYTES[kind] > 0.0 else [])
    assert not any(e[0] in ("read", "dirtied", "wake") for e in log)


def test_client_processes_on_the_host_add_their_share_and_wake_with_their_working_set():
    _, plain = _build()
    _, host = _build(users_on_host=True)
    a, b = _one(plain, "payment")[0][1], _one(host, "payment")[0][1]
    assert b == pytest.approx(a * (1.0 + tpcc.CLIENT_SHARE))
    # memory overcommitted: each transaction first wakes the session (and its client's working set)
    for wl, ws in ((plain, 0.0), (host, tpcc.CLIENT_WORKING_SET)):
        wl.system.vm.overcommit = lambda: 1.0
        log = _one(wl, "payment")
        assert log[0] == ("wake", ws)
        wl.system.vm.overcommit = lambda: 0.0
        assert not any(e[0] == "wake" for e in _one(wl, "payment"))


def test_the_path_length_follows_the_instruction_set():
    isas = set()
    for profile in ("t5220", "rx5670", "opteron-4way"):
        sc = _load(profile)
        wl = tpcc.Workload(System(sc), sc.params)
        isa = sc.profile.cpu.isa
        assert wl.path_length == pytest.approx(tpcc.INSTRUCTIONS_PER_GET * tpcc.PATH_LENGTH[isa])
        assert _one(wl, "payment")[0][1] == pytest.approx(wl.path_length * tpcc.LOGICAL_READS["payment"])
        isas.add(isa)
    assert isas == {"sparcv9", "ia64", "x86_64"}


# --------------------------------------------------------------------------- choosing transactions

def test_next_kind_follows_the_mix():
    _, wl = _build()
    n = 40_000
    drawn = [wl._next_kind(wl.streams.draws) for _ in range(n)]
    for t in TYPES:
        p = SPEC_MIX[t]
        assert drawn.count(t) / n == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / n))


def test_a_type_left_out_of_the_mix_is_never_run():
    _, wl = _build(mix={"new_order": 3.0, "payment": 1.0})
    drawn = [wl._next_kind(wl.streams.draws) for _ in range(8000)]
    assert set(drawn) == {"new_order", "payment"}
    assert drawn.count("new_order") / 8000 == pytest.approx(0.75, abs=0.02)
    _, last = _build(mix={"stock_level": 1.0})
    assert {last._next_kind(last.streams.draws) for _ in range(500)} == {"stock_level"}


def test_first_transactions_are_those_of_a_user_seen_at_a_random_moment():
    """Renewal theory: with cycle C = sum mix (keying + think), a user is keying type k with odds
    mix_k keying_k / C (then its remaining keying is uniform: mean keying_k / 2), else thinking
    after type j with odds mix_j think_j / C (remaining think exponential, mean think_j, then the
    keying of a type drawn from the mix)."""
    _, wl = _build()
    C = sum(SPEC_MIX[t] * (SPEC_KEYING[t] + SPEC_THINK[t]) for t in TYPES)
    thinking = sum(SPEC_MIX[t] * SPEC_THINK[t] for t in TYPES) / C
    mean_keying = sum(SPEC_MIX[t] * SPEC_KEYING[t] for t in TYPES)
    p_kind = {t: SPEC_MIX[t] * SPEC_KEYING[t] / C + thinking * SPEC_MIX[t] for t in TYPES}
    mean_wait = (sum(SPEC_MIX[t] * SPEC_KEYING[t] / C * SPEC_KEYING[t] / 2 for t in TYPES)
                 + sum(SPEC_MIX[t] * SPEC_THINK[t] / C * (SPEC_THINK[t] + mean_keying) for t in TYPES))
    n = 30_000
    first = [wl._first_transaction(wl.streams.draws) for _ in range(n)]
    for t in TYPES:
        p = p_kind[t]
        assert sum(k == t for k, _ in first) / n == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / n))
    waits = np.array([w for _, w in first])
    assert waits.min() >= 0.0
    assert waits.mean() == pytest.approx(mean_wait, abs=4 * waits.std() / math.sqrt(n))
    # A first New-Order sooner than its 18 s keying comes only from a user seen keying it (a thinking user
    # still keys the whole 18 s after the think): odds mix x 18 / C of all users, the rest of the keying
    # uniform on [0, 18), mean 9 s. A New-Order after a think waits 18 s + the rest of a think under way,
    # length-biased: mean sum mix_j think_j^2 / sum mix_j think_j = 11.68 s.
    k_no = SPEC_KEYING["new_order"]
    no = np.array([w for k, w in first if k == "new_order"])
    keying_no, after_think = no[no < k_no], no[no >= k_no] - k_no
    share = SPEC_MIX["new_order"] * k_no / C / p_kind["new_order"]
    assert len(keying_no) / len(no) == pytest.approx(share, abs=4 * math.sqrt(share * (1 - share) / len(no)))
    assert keying_no.mean() == pytest.approx(k_no / 2, abs=4 * k_no / math.sqrt(12 * len(keying_no)))
    assert keying_no.var() == pytest.approx(k_no ** 2 / 12, rel=0.1)      # uniform, not bunched at either end
    biased = sum(SPEC_MIX[t] * SPEC_THINK[t] ** 2 for t in TYPES) / sum(SPEC_MIX[t] * SPEC_THINK[t] for t in TYPES)
    assert after_think.mean() == pytest.approx(biased, abs=4 * after_think.std() / math.sqrt(len(after_think)))


def test_without_keying_a_first_transaction_is_part_way_through_a_think():
    _, wl = _build(think_time="10 s", keying_time="0 s")
    waits = np.array([wl._first_transaction(wl.streams.draws)[1] for _ in range(20_000)])
    assert waits.mean() == pytest.approx(10.0, abs=4 * 10.0 / math.sqrt(20_000))   # memoryless
    _, none = _build(think_time="0 s", keying_time="0 s")
    waits = [none._first_transaction(none.streams.draws)[1] for _ in range(2000)]
    assert all(0.0 <= w < 0.01 for w in waits) and max(waits) > 0.005


def test_own_times_replace_the_specifications_for_every_type():
    _, wl = _build(think_time="7 s", keying_time="1 s")
    assert all(wl._times(t) == (1.0, 7.0) for t in TYPES)
    _, std = _build()
    assert all(std._times(t) == (SPEC_KEYING[t], SPEC_THINK[t]) for t in TYPES)



class _Uniforms:
    """Draws whose uniforms are the given values, in turn."""

    def __init__(self, *u):
        self.u = list(u)

    def uniform(self):
        return self.u.pop(0)


def test_next_kind_at_the_ends_of_the_unit_interval():
    """A uniform of exactly 0 (numpy's random() can return it) falls in the first type of the mix, not in a type
    left out before it (bisect_left would pick New-Order at a 0 share); the largest uniform below 1 falls in the
    last type even where the cumulated mix ends a rounding short of 1 (4:8:6:4:6 sums to 1 - 1.1e-16)."""
    _, wl = _build(mix={"payment": 1.0})
    assert wl._next_kind(_Uniforms(0.0)) == "payment"
    _, odd = _build(mix=dict(zip(TYPES, (4.0, 8.0, 6.0, 4.0, 6.0))))
    top = np.nextafter(1.0, 0.0)
    assert odd.cum_mix[-1] <= top
    assert odd._next_kind(_Uniforms(top)) == "stock_level"


def test_the_population_is_the_terminals_and_their_mean_keying_plus_think():
    """What sim/run.py checks the response time law on: N terminals and Z = sum mix (keying + think) = 20.99 s
    with the TPC-C times (9.63 s of keying, 11.36 s of think), 8 s with keying 1 s and think 7 s."""
    assert _build(users=30, warehouses=3)[1].population() == (30, pytest.approx(20.99))
    assert _build(users=5, think_time="7 s", keying_time="1 s")[1].population() == (5, pytest.approx(8.0))


# --------------------------------------------------------------------------- terminals over time

def _run(wl, busy, until, warm=None):
    wl.sessions = [FakeSession(wl.env, busy) for _ in wl.sessions]
    wl.start()
    if warm is not None:
        wl.env.run(until=warm)
        wl.reset_stats()
    wl.env.run(until=until)
    return wl


def test_dedicated_terminals_cycle_through_keying_work_and_think():
    """A closed system of N terminals, each transaction 0.5 s of CPU: throughput N / (20.99 + 0.5)
    with the TPC-C mix, each response exactly the 0.5 s of work."""
    n, busy, span = 20, 0.5, 3000.0
    wl = _run(_build(users=n, warehouses=2)[1], busy, span + 200.0, warm=200.0)
    x = n / (20.99 + busy)
    assert wl.completed / span == pytest.approx(x, rel=0.06)
    assert wl.finished > wl.completed            # the warm-up's transactions are not reset from the pace
    report = wl.report(span)
    assert report["tpm"] == pytest.approx(wl.completed / span * 60.0)
    assert report["throughput_per_s"] == pytest.approx(wl.completed / span)
    assert report["new_order_tpm"] == pytest.approx(wl.response["new_order"].n / span * 60.0)
    assert sum(r["count"] for r in report["response"].values()) == wl.completed
    for t, r in report["response"].items():
        assert r["mean"] == pytest.approx(busy)
    assert wl.response["new_order"].n / wl.completed == pytest.approx(0.45, abs=0.05)



def test_a_terminal_thinks_the_think_time_of_the_transaction_it_has_just_run():
    """One terminal, no keying, instant transactions: the gap from one transaction to the next is the think
    after the first, exponential with that type's TPC-C mean (New-Order 12 s, Delivery 5 s), whichever type
    comes next (the next type's think would give both gaps the mix's 8.5 s)."""
    wl = _build(users=1, keying_time="0 s", mix={"new_order": 1.0, "delivery": 1.0})[1]
    wl.env = simpy.Environment()     # the terminal alone: no background process ticking through 25,000 s
    started, run_one = [], wl._transaction

    def transaction(session, kind, streams=None):
        started.append((kind, wl.env.now))
        return run_one(session, kind, streams)
    wl._transaction = transaction
    _run(wl, 0.0, 25_000.0)
    for kind, mean in (("new_order", 12.0), ("delivery", 5.0)):
        gaps = [b - a for (k, a), (_, b) in zip(started, started[1:]) if k == kind]
        assert len(gaps) > 1000
        assert np.mean(gaps) == pytest.approx(mean, abs=4 * mean / math.sqrt(len(gaps)))


def test_terminals_without_keying_or_think_run_back_to_back():
    """Each terminal starts within its first 10 ms (a think of 0 s under way: 0.01 x U, see above), then runs
    0.5-s transactions with no gap: the 199th ends before 100 s (<= 99.51 s), the 200th after (>= 100 s)."""
    wl = _run(_build(users=3, think_time="0 s", keying_time="0 s")[1], 0.5, 100.0)
    assert wl.completed == 3 * 199
    assert sum(t.n for t in wl.response.values()) == 3 * 199 and all(r["mean"] == pytest.approx(0.5) for r in wl.report(100.0)["response"].values())


def test_reset_keeps_the_pace_and_empties_the_tallies():
    wl = _run(_build(users=3, think_time="0 s", keying_time="0 s")[1], 0.5, 10.0)
    done = wl.finished
    assert done == wl.completed > 0
    wl.reset_stats()
    assert wl.completed == 0 and wl.finished == done
    assert all(t.n == 0 for t in wl.response.values())
    assert wl.report(1.0)["response"] == {}



def test_reset_starts_the_tp_monitors_averages_afresh_and_keeps_the_checkpoint_pace():
    """After a warm-up the monitor's time averages cover the measured span only: 4 requests queued for the
    first 10 ms and none after the reset average 0 over the next 10 ms (not 2 over both). The checkpoint
    timeout's pace is handed `finished`, the transactions since the start, which the reset keeps."""
    sc = _load(users=20, sessions=2)
    system = System(sc)
    handed = []
    system.instance.checkpoint_cached_blocks = lambda cache, redo, finished, set_dirty: handed.append(finished)
    wl = tpcc.Workload(system, sc.params)
    wl.queued.add(4.0)
    wl.env.run(until=0.01)
    wl.queued.add(-4.0)
    wl.reset_stats()
    wl.env.run(until=0.02)
    assert wl.queued.mean() == 0.0
    assert handed == []     # all cached (no db_cache): no datafiles, no checkpoint writes to pace
    sc = _load("ue10000", **{"users": 6, "warehouses": 2, "database.block_size": "2 KB", "database.db_cache": "1 GB",
                             "database.redo_device": "redo", "database.data_device": "data"})
    system = System(sc)
    system.instance.checkpoint_cached_blocks = lambda cache, redo, finished, set_dirty: handed.append(finished)
    wl = tpcc.Workload(system, sc.params)
    for _ in range(3):
        wl._done("payment", 0.1)
    wl.reset_stats()
    assert wl.completed == 0 and [f() for f in handed] == [3]


def test_each_terminal_draws_its_io_and_its_dirty_blocks_from_streams_of_its_own():
    """Common random numbers per terminal (see _Streams): a terminal's work, I/O and dirty-block streams are
    three different sequences, and another terminal's are different again (a dirty stream seeded as the I/O
    one would tie the blocks a transaction dirties to the ones it misses)."""
    system, _ = _build()
    a, b = (tpcc._Streams.of_terminal(system, i, True) for i in (0, 1))
    firsts = [a.draws.uniform(), a.io.random(), a.dirty.random(), b.draws.uniform(), b.io.random(), b.dirty.random()]
    assert len(set(firsts)) == 6
    assert tpcc._Streams.of_terminal(system, 0, False).io is None


def test_a_tp_monitor_saturated_session_serves_one_request_after_another():
    """100 terminals behind one server session, 0.5 s a transaction: it is never idle, so 2
    transactions a second; by Little's law N = X (R + Z), the mean response R = 100 / 2 - 20.99."""
    users, busy, warm, span = 100, 0.5, 300.0, 1000.0
    wl = _run(_build(users=users, warehouses=10, sessions=1)[1], busy, warm + span, warm=warm)
    assert wl.completed == pytest.approx(span / busy, abs=1)
    assert sum(t.n for t in wl.response.values()) == wl.completed
    mean = sum(t.mean * t.n for t in wl.response.values() if t.n) / wl.completed
    assert mean == pytest.approx(users / (1 / busy) - 20.99, abs=2.5)
    assert all(t.percentile(50) > busy for t in wl.response.values() if t.n)   # all queued
    # the monitor's own figures: the session always busy, every response its queue wait + the 0.5 s of work,
    # and requests waiting by Little's law L = X W (X = 2/s)
    tp = wl.report(span)["tp_monitor"]
    assert tp["sessions"] == 1 and tp["sessions_busy"] == pytest.approx(1.0, abs=1e-3)
    assert tp["queue_wait_ms"] / 1000.0 == pytest.approx(mean - busy, rel=0.01)
    assert tp["queued"] == pytest.approx(2.0 * (mean - busy), rel=0.02)
    assert tp["queued_at_end"] == len(wl.requests)


def test_a_tp_monitor_with_spare_sessions_answers_at_once():
    """Eight sessions for 20 terminals at 0.5 s a transaction: almost never all busy; responses are
    the work, throughput that of dedicated servers. Every request is submitted, served or queued:
    none lost."""
    users, busy, span = 20, 0.5, 2000.0
    wl = _build(users=users, warehouses=2, sessions=8)[1]
    wl.sessions = [FakeSession(wl.env, busy) for _ in wl.sessions]
    wl.start()
    env = wl.env
    env.run(until=1e-9)                                          # the server sessions start (all idle)
    assert len(wl.idle) == 8 and not wl.requests
    # At every event: each terminal is keying or thinking (its next request scheduled), queued, or being
    # served (a session not idle: running it, or woken with it) - one of the three, none lost or doubled
    # (the check counted at 0.5 s steps is the one test_run.py makes of a full run)
    checked = 0
    while env.peek() < span:
        env.step()
        keying = sum(1 for *_, ev in env._queue if ev.callbacks and wl._submit in ev.callbacks)
        serving = len(wl.sessions) - len(wl.idle)
        assert keying + len(wl.requests) + serving == users, env.now
        assert not (wl.requests and wl.idle)                    # never a request waiting by an idle session
        assert wl.queued.value == len(wl.requests)               # the monitor's queue count follows its queue
        checked += 1
    assert checked > 4 * wl.completed                            # every submission, start and end was seen
    assert wl.completed / span == pytest.approx(users / (20.99 + busy), rel=0.07)
    mean = sum(t.mean * t.n for t in wl.response.values() if t.n) / wl.completed
    assert busy <= mean < busy * 1.1
    tp = wl.report(span)["tp_monitor"]   # busy sessions by Little's law: X x 0.5 s; the rest is queue wait
    assert tp["sessions_busy"] == pytest.approx(wl.completed / span * busy, rel=0.01)
    assert tp["queue_wait_ms"] / 1000.0 == pytest.approx(mean - busy, abs=1e-3)
    assert "tp_monitor" not in _run(_build(users=3, warehouses=1)[1], busy, 10.0).report(10.0)   # dedicated servers


# --------------------------------------------------------------------------- the I/O plan

def test_redo_per_transaction_is_the_mix_average():
    _, wl = _cached()
    assert wl.io.redo_per_tx == pytest.approx(0.45 * 6000 + 0.43 * 1200 + 0.04 * 15000)   # 3,816 B


def test_every_dirty_block_is_charged_to_a_transaction_that_changes_it():
    """Per transaction of the mix, the dirty blocks charged to the types add up to the segments'
    evicted dirty blocks plus the blocks filled by inserts (and the checkpoint writes when given);
    the read-only types are charged nothing."""
    _, wl = _cached()
    io = wl.io
    mix = SPEC_MIX
    evicted = sum(io.cache.odds[s].writes_per_tx for s in tb.updates(2048))
    inserts = tb.appended_blocks_per_tx(mix, 2048)
    assert sum(mix[t] * io.dirty[t] for t in TYPES) == pytest.approx(evicted + inserts)
    assert io.dirty["order_status"] == 0.0 and io.dirty["stock_level"] == 0.0
    assert io.dirty["payment"] > tb.INSERTED_BYTES["payment"] / tb.usable(2048)
    for t in TYPES:
        assert sum(m for m, _, _ in io.dirty_parts[t]) == pytest.approx(io.dirty[t])
    ckpt = {"stock": 0.2, "customer": 0.1, "old_orders": 0.05, "hot": 9.0}    # hot has no updater
    # (evicted, checkpointed) per segment, the evicted part as without checkpoints
    io.set_dirty({seg: (io.cache.odds[seg].writes_per_tx, w) for seg, w in ckpt.items()})
    assert sum(mix[t] * io.checkpointed[t] for t in TYPES) == pytest.approx(0.35)
    assert sum(mix[t] * io.dirty[t] for t in TYPES) == pytest.approx(evicted + inserts + 0.35)
    assert io.checkpointed["new_order"] == pytest.approx(0.2 / 0.45)          # stock: New-Order's alone
    # customer: Payment changes 1, Delivery 10 per transaction
    share = 0.1 / (0.43 * 1 + 0.04 * 10)
    assert io.checkpointed["payment"] == pytest.approx(share)
    assert io.checkpointed["delivery"] == pytest.approx(10 * share + 0.05 / 0.04)


def test_reads_draw_the_misses_and_where_the_os_has_them():
    _, wl = _cached()
    io, rng = wl.io, np.random.default_rng(5)
    io.plan["payment"] = [(10.0, 1.0, 0.0, (1, 2))]
    assert io.reads("payment", 1.5, rng) == [(False, (1, 2))] * 15
    io.plan["payment"] = [(10.0, 1.0, 1.0, None), (4.0, 0.0, 1.0, None)]
    assert io.reads("payment", 0.5, rng) == [(True, None)] * 5
    io.plan["payment"] = [(1000.0, 0.25, 0.5, None)]
    reads = io.reads("payment", 1.0, rng)
    assert len(reads) == pytest.approx(250, abs=4 * math.sqrt(1000 * 0.25 * 0.75))
    hits = sum(c for c, _ in reads)
    assert hits == pytest.approx(len(reads) / 2, abs=4 * math.sqrt(len(reads) / 4))



def test_a_fractional_mean_of_touches_rounds_up_with_the_odds_of_its_fraction():
    """Payment's 1.6 customer blocks: 1 touch and one more with odds 0.6, so a mean of 1.6 reads when every
    touch misses, some transactions reading 1 and some 2 (always 2 would be a mean of 2)."""
    _, wl = _cached(warehouses=2)
    io, rng, n = wl.io, np.random.default_rng(4), 4000
    io.plan["payment"] = [(1.6, 1.0, 0.0, None)]
    counts = np.array([len(io.reads("payment", 1.0, rng)) for _ in range(n)])
    assert set(counts.tolist()) == {1, 2}
    assert counts.mean() == pytest.approx(1.6, abs=4 * math.sqrt(0.24 / n))


def test_the_plan_reads_each_types_cold_touches_and_the_rest_of_its_gets_as_hot_ones():
    _, wl = _cached()
    for t in TYPES:
        plan = wl.io.plan[t]
        cold = tb.cold_touches(t, 2048)
        assert [n for n, *_ in plan] == [*cold.values(), tpcc.LOGICAL_READS[t] - sum(cold.values())]
        assert sum(n for n, *_ in plan) == pytest.approx(tpcc.LOGICAL_READS[t])   # every get can miss
        for (name, n), (_, miss, os_hit, _) in zip([*cold.items(), ("hot", 0)], plan):
            assert (0.0 <= miss if name == "hot" else 0.0 < miss) and miss <= 1.0
            assert os_hit == 0.0   # raw datafiles: no page cache


def test_a_transaction_splits_its_cpu_around_its_reads_and_hands_its_dirty_blocks_over():
    _, wl = _cached()
    wl.io.plan["payment"] = [(3.0, 1.0, 0.0, None)]
    log = _one(wl, "payment")
    kinds = [e[0] for e in log]
    assert kinds[:7] == ["cpu", "read", "cpu", "read", "cpu", "read", "cpu"]
    pieces = [e[1] for e in log if e[0] == "cpu"]
    assert len(pieces) == 4 and max(pieces) == pytest.approx(min(pieces))
    assert sum(pieces) == pytest.approx(wl.path_length * tpcc.LOGICAL_READS["payment"])
    assert kinds[-1] == "commit" and "dirtied" in kinds
    assert kinds.index("dirtied") > 6



def test_a_transaction_passes_on_where_its_reads_are_found_and_which_dirty_blocks_a_checkpoint_writes():
    """The session is told what the plan drew: two misses the page cache holds (read_block's os_cached True),
    one it does not; and of New-Order's dirty blocks, stock's checkpointed ones (a mean of 45 / 0.45 = 100 a
    transaction, never 0 in a Poisson draw that large) go with checkpoint=True, the rest with False. (Two
    warehouses: the plan is overwritten, and a small cache model is quick to build.)"""
    _, wl = _cached(warehouses=2)
    wl.io.plan["payment"] = [(2.0, 1.0, 1.0, None), (1.0, 1.0, 0.0, None)]
    assert [e[1] for e in _one(wl, "payment") if e[0] == "read"] == [True, True, False]
    io = wl.io
    io.set_dirty({"stock": (io.cache.odds["stock"].writes_per_tx, 45.0)})
    wl.io.plan["new_order"] = []
    dirtied = [e for e in _one(wl, "new_order") if e[0] == "dirtied"]
    assert [e[3] for e in dirtied] == [False, True] and dirtied[1][1] > 50



def test_new_orders_reads_and_dirty_blocks_scale_with_its_order_lines():
    """A New-Order of 15 lines (a uniform of 0.99: 5 + int(10.89)) touches 1.5 x the plan's 10 blocks, all
    missing: 15 reads; one of 5 lines (a uniform of 0): 5. Its dirty blocks are drawn at the same scale."""
    _, wl = _cached(warehouses=2)
    wl.io.plan["new_order"] = [(10.0, 1.0, 0.0, None)]
    scales = []
    wl.io.dirtied = lambda kind, scale, rng: scales.append(scale) or []
    for u, reads in ((0.99, 15), (0.0, 5)):
        wl.streams.draws = _Uniforms(u)
        assert sum(e[0] == "read" for e in _one(wl, "new_order")) == reads
    assert scales == [1.5, 0.5]



def test_a_segments_evicted_and_checkpointed_parts_add_up_to_its_dirty_blocks():
    """Per type, the parts drawn by segment (evicted ones unflagged, checkpointed ones flagged) add up to the
    mean dirty blocks, the flagged ones to the checkpointed mean: a checkpointed block is in one part, not both."""
    _, wl = _cached(warehouses=2)
    io = wl.io
    io.set_dirty({seg: (io.cache.odds[seg].writes_per_tx, w) for seg, w in (("stock", 0.2), ("customer", 0.1))})
    for t in TYPES:
        assert sum(m for m, _, _ in io.dirty_parts[t]) == pytest.approx(io.dirty[t])
        assert sum(m for m, _, ck in io.dirty_parts[t] if ck) == pytest.approx(io.checkpointed[t])
    assert io.checkpointed["new_order"] == pytest.approx(0.2 / 0.45)


def test_dirty_blocks_are_drawn_around_their_means():
    _, wl = _cached()
    io, rng = wl.io, np.random.default_rng(3)
    io.set_dirty({"stock": (io.cache.odds["stock"].writes_per_tx, 0.3)})
    assert io.layout.uniform
    n = 4000
    draws = [io.dirtied("new_order", 1.5, rng) for _ in range(n)]
    evicted = np.array([d[0][0] for d in draws])
    ckpt = np.array([d[1][0] for d in draws])
    assert all(len(d) == 2 and d[0][2] is False and d[1][2] is True for d in draws)
    c = io.checkpointed["new_order"] * 1.5
    assert ckpt.mean() == pytest.approx(c, abs=4 * math.sqrt(c / n))
    e = io.dirty["new_order"] * 1.5 - c
    assert evicted.mean() == pytest.approx(e, abs=4 * math.sqrt(e / n))
    assert io.dirtied("stock_level", 1.0, rng) == [(0, None, False)]


def test_written_pages_found_in_the_page_cache():
    """Without a caching file system no evicted block's page is cached; the blocks filled by inserts
    find theirs (the blocks before them wrote it) but the first of each page, a new page of the
    preallocated file: of 4 blocks a page (8 KB pages, 2 KB blocks) 3 find it."""
    system, wl = _cached()
    evicted = sum(wl.io.cache.odds[s].writes_per_tx for s in tb.updates(2048))
    inserts = tb.appended_blocks_per_tx(SPEC_MIX, 2048)
    assert all(wl.io.cache.odds[s].write_os_hit == 0.0 for s in tb.updates(2048))
    assert system.datafiles.page_blocks == 4
    assert system.datafiles.write_page_hit == pytest.approx(inserts * 3 / 4 / (evicted + inserts))



def test_checkpointed_writes_find_their_pages_with_the_checkpoint_page_hit():
    """A block a checkpoint writes finds its page with the cache's checkpoint_os_hit (the page as it was a
    checkpoint delay after the change), not the segment's eviction write_os_hit (0 on raw files): 2 stock
    blocks a transaction checkpointed at a hit of 0.5 add 1 found page to the inserts' 3 in 4; the same for
    undo blocks, the first of each page."""
    system, wl = _cached(warehouses=2)
    io = wl.io
    evicted = sum(io.cache.odds[s].writes_per_tx for s in tb.updates(2048))
    inserts = tb.appended_blocks_per_tx(SPEC_MIX, 2048)
    io.cache.checkpoint_os_hit = {"stock": 0.5}
    io.set_dirty({"stock": (io.cache.odds["stock"].writes_per_tx, 2.0)})
    assert system.datafiles.write_page_hit == pytest.approx((2.0 * 0.5 + inserts * 3 / 4) / (evicted + 2.0 + inserts))
    # undo: 2 blocks checkpointed besides the evicted ones; of each page's 4 all but the first find it, the
    # first at the checkpoint page hit (0.5) when a checkpoint writes it, at write_os_hit (0) when evicted
    system, wl = _cached(warehouses=2, **{"database.rollback_size": "10 MB"})
    io = wl.io
    undo = io.cache.odds["undo"].writes_per_tx
    io.cache.checkpoint_os_hit = {"undo": 0.5}
    io.set_dirty({"undo": (undo, 2.0)})
    found = inserts * 3 / 4 + (3 * (undo + 2.0) + 2.0 * 0.5) / 4
    assert system.datafiles.write_page_hit == pytest.approx(found / (evicted + inserts + undo + 2.0))


def test_the_rows_inserted_go_to_one_file_after_the_segments_tablespaces():
    """With a datafile size each segment gets the files its bytes need, one after another, and the insert
    point one file after them all (its last extent), whatever the rows inserted add up to."""
    _, wl = _cached(warehouses=2, **{"database.datafiles": 20, "database.datafile_size": "200 MB"})
    ranges = wl.io.layout.ranges
    segments = [r for name, r in ranges.items() if name != "inserts"]
    assert [first for first, _ in segments] == list(np.cumsum([0] + [n for _, n in segments[:-1]]))
    assert ranges["inserts"] == (sum(n for _, n in segments), 1)


def test_undo_blocks_are_written_in_order_and_find_their_pages():
    """Undo blocks are filled in order: of a page's 4 blocks (8 KB pages, 2 KB blocks) all but the
    first find the page their predecessor's write left (raw files: the first never does)."""
    system, wl = _cached(**{"database.rollback_size": "10 MB"})
    odds = wl.io.cache.odds
    page = system.datafiles.page_blocks
    assert page == 4
    evicted = sum(odds[s].writes_per_tx for s in tb.updates(2048))
    inserts = tb.appended_blocks_per_tx(SPEC_MIX, 2048)
    undo = odds["undo"].writes_per_tx
    assert undo > 0.0 and odds["undo"].write_os_hit == 0.0
    assert system.datafiles.write_page_hit == pytest.approx((inserts + undo) * 3 / 4 / (evicted + inserts + undo))
    assert wl.io.writers["undo"] == tb.UNDO_BYTES
    mix_dirty = sum(SPEC_MIX[t] * wl.io.dirty[t] for t in TYPES)
    assert mix_dirty == pytest.approx(evicted + inserts + undo)


# --------------------------------------------------------------------------- the block layout

def test_rows_per_block_from_block_size_and_row_length():
    """Usable bytes: (block - 90 B header) x (1 - 10% PCTFREE)."""
    assert tb.usable(2048) == pytest.approx(1958 * 0.9)
    assert tb.usable(8192) == pytest.approx(8102 * 0.9)
    assert tb.rows_per_block(306, 2048) == 5       # stock: 1762.2 / 306
    assert tb.rows_per_block(655, 2048) == 2       # customer
    assert tb.rows_per_block(655, 8192) == 11
    assert tb.rows_per_block(82, 2048) == 21       # item
    assert tb.rows_per_block(1762.2, 2048) == 1    # a row that fills the usable space exactly
    assert tb.rows_per_block(5000, 2048) == 1      # a row larger than a block still takes one


def test_row_lengths_are_tpc_c_1_3s():
    """TPC-C 1.3 average row lengths (bytes)."""
    assert tb.ROW_BYTES == {"warehouse": 89, "district": 95, "customer": 655, "history": 46, "new_order": 8,
                            "orders": 24, "order_line": 54, "item": 82, "stock": 306}
    assert (tb.ITEMS, tb.CUSTOMERS_PER_DISTRICT, tb.DISTRICTS) == (100_000, 3_000, 10)
    assert (tb.INITIAL_ORDERS_PER_DISTRICT, tb.INITIAL_NEW_ORDERS_PER_DISTRICT) == (3_000, 900)   # TPC-C 4.3.3.1
    assert tb.LINES_PER_ORDER == 10


def _nurand_brute(a, lo, hi):
    """NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x with C = A // 2,
    by enumerating every pair; index k is the key lo + k."""
    n = hi - lo + 1
    v = np.bitwise_or.outer(np.arange(a + 1), np.arange(lo, hi + 1)).ravel()
    pmf = np.bincount((v + a // 2) % n, minlength=n).astype(float)
    return pmf / pmf.sum()


@pytest.mark.parametrize("a, lo, hi", [(63, 5, 64), (255, 3, 200), (7, 0, 7), (7, 8, 15), (1023, 1, 1023)])
def test_nurand_pmf_is_exact_within_one_run(a, lo, hi):
    """TPC-C 2.1.6, keys within parts of runs of A + 1 (the bit patterns counted pair by pair) or
    within one whole run (each value v of the run from 3^popcount(v) pairs)."""
    got = tb.nurand_pmf(a, lo, hi)
    assert got.shape == (hi - lo + 1,)
    assert got.sum() == pytest.approx(1.0)
    assert np.allclose(got, _nurand_brute(a, lo, hi), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("a, lo, hi", [(7, 1, 20), (15, 0, 40), (1023, 1, 3000)])
def test_nurand_pmf_is_exact_across_runs(a, lo, hi):
    """TPC-C 2.1.6: C_ID is NURand(1023, 1, 3000): a part run (1..1023), a whole run (1024..2047)
    and a part run (2048..3000)."""
    assert np.allclose(tb.nurand_pmf(a, lo, hi), _nurand_brute(a, lo, hi), rtol=1e-9, atol=1e-15)


def test_nurand_for_item_ids_is_a_skewed_pmf():
    """A = 8191 over 1..100,000 (OL_I_ID): a proper pmf, some keys far more popular than others,
    none impossible."""
    pmf = tb.nurand_pmf(8191, 1, tb.ITEMS)
    assert pmf.shape == (tb.ITEMS,) and pmf.sum() == pytest.approx(1.0)
    assert pmf.min() > 0.0 and pmf.max() / pmf.min() > 100


def test_packed_blocks_sum_consecutive_keys():
    pmf = np.arange(1.0, 8.0)                       # 7 keys, 3 a block: the last block holds one
    assert tb._packed(pmf, 3).tolist() == [6.0, 15.0, 7.0]
    assert tb._packed(pmf, 7).tolist() == [28.0]
    assert tb._packed(pmf, 1).tolist() == pmf.tolist()


def test_stock_level_alone_reads_stock_as_its_own_touches():
    """No New-Order in the mix: Stock-Level's rows are rows it reads (nothing to re-touch), so they miss as
    stock's own touches do."""
    segs = tb.segments(200, 2048, {"stock_level": 1.0}, tpcc.LOGICAL_READS)
    stock = {s.name: s for s in segs}["stock"]
    assert stock.touches == pytest.approx(200.0) and stock.retouch.per_touch == 0.0
    cache = BufferCache(segs, 51_200)
    assert cache.odds["stock_recent"].miss == pytest.approx(cache.odds["stock"].miss) and cache.odds["stock"].miss > 0.0


def test_cold_touches_follow_the_transaction_profiles():
    """One table block and one index leaf per row looked up; by last name 60% of the time, ~2
    blocks (0.6 x 2 + 0.4 x 1 = 1.6) and one leaf; Delivery: 10 districts x (customer, 3 old-order
    blocks: the new-order entry, the order, the lines), of which the bytes it moves past enter new
    blocks and the rest re-touch the district's current ones; Stock-Level: 200 order lines joined with stock."""
    use = (2048 - 90) * 0.9
    entering = (20 + 24 + 10 * 54) / use
    assert tb.walk_touches(2048) == pytest.approx((entering, 3 - entering))
    assert tb.walk_touches(8192)[0] == pytest.approx(584 / ((8192 - 90) * 0.9))
    assert tb.cold_touches("new_order", 2048) == {"stock": 10.0, "stock_index": 10.0, "customer": 1.0,
                                                  "customer_index": 1.0}
    assert tb.cold_touches("payment", 2048) == {"customer": 0.6 * 2 + 0.4, "customer_index": 1.0}
    assert tb.cold_touches("order_status", 2048) == {"customer": 1.6, "customer_index": 1.0, "old_orders": 4.0}
    assert tb.cold_touches("delivery", 2048) == pytest.approx(
        {"customer": 10.0, "customer_index": 10.0, "old_orders": 10 * entering, "delivery_walk": 30 - 10 * entering})
    # Stock-Level's 200 re-touch what New-Order touched for the district's last 20 orders
    assert tb.cold_touches("stock_level", 2048) == {"stock_recent": 200.0, "stock_index_recent": 200.0}
    assert tb.cold_touches("payment", 2048, True) == {"customer": 1.6, "customer_index": 0.6}
    assert tb.cold_touches("stock_level", 2048, True) == {"stock_recent": 200.0}
    updates = tb.updates(2048)
    assert updates.keys() == {"stock", "customer", "old_orders", "delivery_walk"}
    assert updates["stock"] == {"new_order": 10.0} and updates["customer"] == {"payment": 1.0, "delivery": 10.0}
    # every old-order block Delivery touches is changed (the new-order entry deleted, the order and lines updated)
    assert updates["old_orders"]["delivery"] + updates["delivery_walk"]["delivery"] == pytest.approx(30.0)
    assert tb.WITHIN == {"delivery_walk": "old_orders", "stock_recent": "stock", "stock_index_recent": "stock_index"}
    # New-Order's 10 order lines
    assert tb.INSERTED_BYTES == {"new_order": 24 + 8 + 10 * 54, "payment": 46}


@pytest.mark.parametrize("block_size, warehouses", [(2048, 1), (8192, 3), (2048, 1000)])
def test_segments_hold_the_schema_and_every_get(block_size, warehouses):
    """Per transaction of the mix the segments' touches add up to the logical reads; each large
    object has its rows packed into blocks, one copy per warehouse (per district for customer)."""
    segs = {s.name: s for s in tb.segments(warehouses, block_size, dict(SPEC_MIX), tpcc.LOGICAL_READS)}
    assert list(segs) == ["stock", "stock_index", "customer", "customer_index", "old_orders", "delivery_walk", "hot"]
    reads = sum(SPEC_MIX[t] * tpcc.LOGICAL_READS[t] for t in TYPES)
    assert sum(s.touches for s in segs.values()) == pytest.approx(reads)
    use = (block_size - 90) * 0.9
    leaf = int(use // 20)
    stock = segs["stock"]
    assert len(stock.counts) == math.ceil(100_000 / (use // 306)) and set(stock.counts) == {warehouses}
    assert stock.touches == pytest.approx(0.45 * 10 + 0.04 * 200)
    # New-Order's touches, each changing its row; Stock-Level's re-touch them, 200 per 10 of New-Order's,
    # within the district's next 20 orders (20 x 10 W / 0.45 transactions)
    assert stock.update_share == 1.0
    assert stock.retouch.per_touch == pytest.approx(0.04 * 200 / (0.45 * 10))
    assert stock.retouch.window == pytest.approx(20 * 10 * warehouses / 0.45)
    # the stock index is keyed (item, warehouse): a leaf holds one item's entries, or several items'
    index = segs["stock_index"]
    if leaf <= warehouses:
        assert len(index.counts) == 100_000 and np.allclose(index.counts, warehouses / leaf)
    else:
        assert len(index.counts) == math.ceil(100_000 / (leaf / warehouses)) and set(index.counts) == {1.0}
    assert index.touches == pytest.approx(stock.touches)     # one leaf per stock row
    assert index.update_share == 0.0
    cust = segs["customer"]
    assert len(cust.counts) == math.ceil(3000 / (use // 655)) and set(cust.counts) == {10 * warehouses}
    touches = 0.45 * 1 + 0.43 * 1.6 + 0.04 * 1.6 + 0.04 * 10
    assert cust.touches == pytest.approx(touches)
    assert cust.update_share == pytest.approx((0.43 + 0.04 * 10) / touches)
    assert len(segs["customer_index"].counts) == math.ceil(3000 / leaf)
    assert set(segs["customer_index"].counts) == {10 * warehouses}
    entering, frontier = tb.walk_touches(block_size)
    old = segs["old_orders"]
    old_bytes = warehouses * 10 * (3000 * (24 + 10 * 54) + 900 * 8)
    assert old.blocks == math.ceil(old_bytes / use) and len(old.counts) == 1
    assert old.touches == pytest.approx(0.04 * 4 + 0.04 * 10 * entering)
    assert old.update_share == pytest.approx(10 * entering / (4 + 10 * entering))
    walk = segs["delivery_walk"]     # the current block of 3 objects in each district, all changed
    assert walk.blocks == 30 * warehouses and walk.touches == pytest.approx(0.04 * 10 * frontier)
    assert walk.update_share == 1.0
    hot = segs["hot"]
    leaves = warehouses * (100_000 + 10 * 3000) / leaf
    hot_blocks = (100_000 / (use // 82) + warehouses / (use // 89) + warehouses * 10 / (use // 95)
                  + leaves / leaf + warehouses * 10 * 20 * 10 / (use // 54))
    assert hot.blocks == math.ceil(hot_blocks) and hot.update_share == 0.0
    # the block popularity within stock is NURand(8191, 1, 100000)'s, within customer NURand(1023, 1, 3000)'s
    assert np.allclose(stock.rates * warehouses / (0.45 * 10),
                       tb._packed(tb.nurand_pmf(8191, 1, 100_000), int(use // 306)))
    assert np.allclose(cust.rates * 10 * warehouses / cust.touches,
                       tb._packed(tb.nurand_pmf(1023, 1, 3_000), int(use // 655)))
    assert stock.rates.max() > 10 * stock.rates.min()


def test_hash_clusters_order_rows_key_first():
    """HammerDB's hash expressions: one item's stock rows of all warehouses share blocks (five 306-byte
    rows a 2 KB block: a block is as popular as its item), one customer number's rows of all districts;
    the name index is keyed by last name first. Keyed first, hot keys make hot blocks: fewer misses."""
    hashed = {s.name: s for s in tb.segments(200, 2048, dict(SPEC_MIX), tpcc.LOGICAL_READS, True)}
    item = tb.nurand_pmf(8191, 1, 100_000)
    stock = hashed["stock"]
    assert len(stock.counts) == 100_000 and np.allclose(stock.counts, 200 / 5)
    assert np.allclose(stock.rates * 40 / (0.45 * 10), item)
    assert np.allclose(hashed["customer"].counts, 2000 / 2)
    names = hashed["customer_index"]
    assert len(names.counts) == 1000 and np.allclose(names.counts, 6000 / 88)
    assert np.allclose(names.rates * names.counts / names.touches, tb.nurand_pmf(255, 0, 999))   # C_LAST's NURand
    # a key's blocks lie side by side (pages hold one key's blocks); load order's copies are spread out
    plain = {s.name: s for s in tb.segments(200, 2048, dict(SPEC_MIX), tpcc.LOGICAL_READS)}
    assert [n for n, s in hashed.items() if s.adjacent] == ["stock", "stock_index", "customer", "customer_index"]
    assert [n for n, s in plain.items() if s.adjacent] == ["stock_index"]
    assert tb._major(item, 400, 200)[0] == pytest.approx(tb._packed(item, 2))    # 2 keys a block
    # 1.5 keys a block: 66,667 blocks, each the share of the rows it holds (a key may straddle two)
    pmf = np.array([0.1, 0.2, 0.3, 0.4])
    blocks, copies = tb._major(pmf, 3, 2)
    assert copies == 1.0 and blocks == pytest.approx([0.1 + 0.1, 0.1 + 0.3, 0.4])
    # 2.25 keys a block: a block edge inside the last key
    blocks, _ = tb._major(np.array([0.1, 0.1, 0.2, 0.2, 0.4]), 9, 4)
    assert blocks == pytest.approx([0.1 + 0.1 + 0.25 * 0.2, 0.75 * 0.2 + 0.2 + 0.5 * 0.4, 0.5 * 0.4])
    many, _ = tb._major(item, 300, 200)
    assert len(many) == math.ceil(100_000 / 1.5) and many.sum() == pytest.approx(1.0)
    p, h = BufferCache(list(plain.values()), 51_200), BufferCache(list(hashed.values()), 51_200)
    assert h.odds["stock"].miss < p.odds["stock"].miss


def test_segments_normalise_the_mix_and_hash_clusters_move_gets_to_hot_blocks():
    doubled = tb.segments(2, 2048, {t: 2 * v for t, v in SPEC_MIX.items()}, tpcc.LOGICAL_READS)
    plain = tb.segments(2, 2048, dict(SPEC_MIX), tpcc.LOGICAL_READS)
    assert [s.touches for s in doubled] == pytest.approx([s.touches for s in plain])
    hashed = {s.name: s for s in tb.segments(2, 2048, dict(SPEC_MIX), tpcc.LOGICAL_READS, True)}
    assert hashed["customer_index"].touches == pytest.approx(0.43 * 0.6 + 0.04 * 0.6)
    moved = sum(s.touches for s in plain if s.name != "hot") - sum(
        s.touches for s in hashed.values() if s.name != "hot")
    assert hashed["hot"].touches == pytest.approx({s.name: s for s in plain}["hot"].touches + moved)
    assert hashed["stock_index"].touches == 0.0 and hashed["stock_index"].update_share == 0.0
    # a mix given in part: the types left out run no transactions
    alone = {s.name: s for s in tb.segments(1, 2048, {"new_order": 1.0}, tpcc.LOGICAL_READS)}
    assert alone["stock"].touches == pytest.approx(10.0) and alone["customer"].touches == pytest.approx(1.0)
    assert alone["old_orders"].touches == 0.0 and alone["old_orders"].update_share == 0.0
    assert alone["hot"].touches == pytest.approx(104.0 - 22.0)
    # more cold touches than logical reads: no negative hot touches
    few = tb.segments(1, 2048, {"stock_level": 1.0}, {t: 1.0 for t in TYPES})
    assert few[-1].touches == 0.0


def test_undo_bytes_are_the_documented_record_sizes():
    """Updated row: changed columns + 80; inserted row 64; index entry 20 + 80; + 40 per transaction."""
    new_order = (80 + 4) + 10 * (80 + 14) + 12 * 64 + 12 * (20 + 80) + 40
    payment = (80 + 7) + (80 + 7) + 95 + 50 + 64 + 40
    delivery = 10 * ((80 + 8) + (20 + 80) + (80 + 2) + 10 * (80 + 1) + (80 + 8)) + 40
    assert tb.UNDO_BYTES == {"new_order": new_order, "payment": payment, "delivery": delivery}
    assert (new_order, payment, delivery) == (3032, 423, 11720)


def test_undo_blocks_fill_without_pctfree_and_the_segment_circles():
    u = (0.45 * 3032 + 0.43 * 423 + 0.04 * 11720) / (2048 - 90)
    assert tb.undo_blocks_per_tx(dict(SPEC_MIX), 2048) == pytest.approx(u)
    assert tb.undo_blocks_per_tx({t: 2 * v for t, v in SPEC_MIX.items()}, 2048) == pytest.approx(u)
    assert tb.undo_blocks_per_tx({"order_status": 1.0}, 2048) == 0.0
    seg = tb.undo_segment(dict(SPEC_MIX), 2048, 10 * 2**20 + 1)
    assert seg.name == "undo" and seg.blocks == 5121 and seg.update_share == 1.0 and seg.read_on_miss is False
    assert seg.touches == pytest.approx(u)
    big = tb.undo_segment(dict(SPEC_MIX), 8192, 2**20)           # a quarter of an 8 KB block per transaction
    assert big.update_share == 1.0 and big.blocks == 128 and big.touches == pytest.approx(2015.09 / 8102)
    tiny = tb.undo_segment(dict(SPEC_MIX), 2048, 100.0)
    assert tiny.blocks == 1.0
    idle = tb.undo_segment({"stock_level": 1.0}, 2048, 2**20)
    assert idle.update_share == 0.0 and idle.touches == 0.0


def test_appended_blocks_are_the_inserted_bytes_over_usable_space():
    per_tx = (0.45 * (24 + 8 + 540) + 0.43 * 46) / ((2048 - 90) * 0.9)
    assert tb.appended_blocks_per_tx(dict(SPEC_MIX), 2048) == pytest.approx(per_tx)
    assert tb.appended_blocks_per_tx({t: 3 * v for t, v in SPEC_MIX.items()}, 2048) == pytest.approx(per_tx)
    assert tb.appended_blocks_per_tx({"delivery": 1.0}, 2048) == 0.0


# --------------------------------------------------------------------------- more of the plan's bookkeeping

def test_the_plan_normalises_the_mix():
    """Shares given as 2 x the TPC-C mix are the TPC-C mix."""
    _, std = _cached()
    _, doubled = _cached(mix={t: 2 * v for t, v in SPEC_MIX.items()})
    assert doubled.io.redo_per_tx == pytest.approx(std.io.redo_per_tx)
    assert doubled.io.dirty == pytest.approx(std.io.dirty)
    assert doubled.io.cache.hit_ratio() == pytest.approx(std.io.cache.hit_ratio())
    _, tripled = _build(mix={"new_order": 3.0, "payment": 1.0})
    assert tripled.cum_mix == pytest.approx([0.75, 1.0, 1.0, 1.0, 1.0])


def test_a_segment_no_transaction_of_the_mix_changes_costs_nothing():
    """New-Order alone: customer and old orders have no updater in the mix (no division by zero);
    every evicted stock block and inserted block is New-Order's."""
    _, wl = _cached(mix={"new_order": 1.0})
    io = wl.io
    assert io.redo_per_tx == pytest.approx(6000.0)
    assert io.dirty["new_order"] == pytest.approx(io.cache.odds["stock"].writes_per_tx + 572 / tb.usable(2048))
    assert all(io.dirty[t] == 0.0 for t in TYPES if t != "payment" and t != "new_order")
    # read-only transactions only: nothing written, the write page hit left as it was
    system, ro = _cached(mix={"order_status": 1.0, "stock_level": 1.0})
    assert ro.io.dirty["order_status"] == ro.io.dirty["stock_level"] == 0.0 and ro.io.redo_per_tx == 0.0
    assert ro.io.cache.odds["stock"].writes_per_tx == 0.0
    assert system.datafiles.write_page_hit == System(_load("ue10000", **{
        "users": 6, "warehouses": 200, "database.block_size": "2 KB", "database.db_cache": "1 GB",
        "database.redo_device": "redo", "database.data_device": "data"})).datafiles.write_page_hit


def test_with_datafiles_laid_out_a_transaction_draws_each_segments_dirty_blocks():
    """One tablespace per segment: the draws come per segment (no part of a mean of 0); without
    checkpoint writes none is flagged."""
    _, wl = _cached(**{"database.datafiles": 7, "database.datafile_size": "200 MB"})
    io, rng = wl.io, np.random.default_rng(2)
    assert not io.layout.uniform
    assert not any(ck for parts in io.dirty_parts.values() for *_, ck in parts)
    assert io.dirtied("stock_level", 1.0, rng) == [] and io.dirtied("order_status", 1.0, rng) == []
    n = 3000
    parts = [io.dirtied("payment", 1.0, rng) for _ in range(n)]
    assert all(len(p) == 2 for p in parts)           # the history rows' insert point and customer
    assert {p[0][1] for p in parts} == {io.layout.of("inserts")}
    assert {p[1][1] for p in parts} == {io.layout.of("customer")}
    total = np.array([sum(b for b, _, _ in p) for p in parts])
    assert total.mean() == pytest.approx(io.dirty["payment"], abs=4 * math.sqrt(io.dirty["payment"] / n))
    twice = np.array([sum(b for b, _, _ in io.dirtied("payment", 2.0, rng)) for _ in range(n)])
    assert twice.mean() == pytest.approx(2 * io.dirty["payment"], abs=4 * math.sqrt(2 * io.dirty["payment"] / n))


def test_fixed_constants():
    """PATH_LENGTH is relative to SPARC V9; the database per warehouse is the TPC-C rows (stock
    100k x 306 B, customer 30k x 655 B, orders, order lines, new orders, history) plus block space
    and indexes: between 1.1 and 1.5 times the row bytes."""
    assert tpcc.PATH_LENGTH["sparcv9"] == 1.0
    rows = (100_000 * 306 + 30_000 * 655 + 30_000 * 24 + 300_000 * 54 + 9_000 * 8 + 30_000 * 46)
    assert 1.1 < tpcc.WAREHOUSE_BYTES / rows < 1.5
    assert tpcc.USES == ("redo", "buffer_cache", "datafiles", "undo")


def test_clients_on_the_host_take_their_memory():
    system, _ = _build(users=40, warehouses=4, users_on_host=True)
    n, private, ws = system.vm.kinds["client"]
    assert (n, private, ws) == (40, tpcc.CLIENT_MEMORY, tpcc.CLIENT_WORKING_SET)
    assert tpcc.CLIENT_MEMORY == pytest.approx(0.3 * 2**20) and tpcc.CLIENT_WORKING_SET == 64 * 1024
    plain, _ = _build(users=40, warehouses=4)
    assert "client" not in plain.vm.kinds


def test_the_database_fills_the_cache_and_the_report_is_in_megabytes():
    system, wl = _cached()
    rep = wl.report(10.0)
    assert rep["sga_mb"] * 2**20 == pytest.approx(system.instance.sga_size(200 * tpcc.WAREHOUSE_BYTES))
    assert rep["sga_mb"] > 1024                                   # the 1 GB buffer cache and the pools
    assert rep["page_cache_mb"] * 2**20 == pytest.approx(system.vm.page_cache_size())
    assert rep["buffer_hit_ratio"] == pytest.approx(wl.io.cache.hit_ratio())
    assert system.admit() is None



def test_without_a_db_cache_the_sga_reported_holds_the_whole_database():
    """No database.db_cache: the buffer cache is the database, WAREHOUSE_BYTES (85 MB) a warehouse, so the
    SGA reported is the pools plus 3 x 85 MB for 30 terminals (3 warehouses)."""
    system, wl = _build(users=30)
    spec = system.instance.spec
    assert spec.db_cache is None
    assert wl.report(1.0)["sga_mb"] == pytest.approx((spec.shared_pool + spec.log_buffer) / 2**20 + 3 * 85.0)


def test_report_percentiles_of_queued_responses():
    wl = _run(_build(users=100, warehouses=10, sessions=1)[1], 0.5, 600.0, warm=200.0)
    rep = wl.report(400.0)["response"]
    for t, r in rep.items():
        tl = wl.response[t]
        assert (r["p50"], r["p90"], r["p99"]) == (tl.percentile(50), tl.percentile(90), tl.percentile(99))
        assert r["count"] == tl.n and r["mean"] == tl.mean
    no = rep["new_order"]
    assert no["p50"] < no["p90"] < no["p99"]


def test_too_many_clients_are_out_of_memory_before_the_run():
    """All cached, 2,000 warehouses (~170 GB) are an SGA larger than the T5220's memory."""
    system, wl = _build(users=8, warehouses=2000)
    status, message = system.admit()
    assert status == "out_of_memory" and "exceed physical memory" in message


def test_one_terminal_is_enough():
    assert _load(users=1).params.users == 1
    assert tpcc.warehouses_of(_load(users=1).params) == 1


def test_a_database_larger_than_its_data_device_is_refused():
    """100,000 warehouses (~7 TB) do not fit the T5220's 438 GB array, cached or not (the cache holds a copy of
    what is stored); 1,000 (~70 GB) do."""
    for cache in ({"database.db_cache": "1 GB"}, {}):
        with pytest.raises(ConfigError, match=r"params\.warehouses.*a database that fits on device .array."):
            _load(warehouses=100_000, **cache)
        assert _load(warehouses=1000, **cache).params.warehouses == 1000


def test_a_caching_file_system_is_a_second_level_for_reads_and_written_pages():
    """The page cache (what the memory account leaves, in blocks) holds some misses; a written
    page is found with each segment's write_os_hit, inserts' pages but the first block's, and of each 4 undo
    blocks (8 KB pages over 2 KB blocks) 3 find the page the one before wrote, the first as the
    cache model says."""
    system, wl = _cached(**{"os.filesystem": "ufs_buffered", "database.rollback_size": "4 GB"})   # 4 x the cache
    io, odds = wl.io, wl.io.cache.odds
    assert io.cache.os_blocks == pytest.approx(system.vm.page_cache_size() / 2048) and io.cache.os_blocks > 0.0
    assert odds["stock"].os_hit > 0.0
    assert any(os_hit > 0.0 for _, _, os_hit, _ in io.plan["new_order"])
    evicted = {s: odds[s].writes_per_tx for s in tb.updates(2048)}
    inserts = tb.appended_blocks_per_tx(SPEC_MIX, 2048)
    undo, hu = odds["undo"].writes_per_tx, odds["undo"].write_os_hit
    assert undo > 0.5 and 0.0 < hu < 1.0          # most undo blocks are evicted before the circle returns
    hit = (sum(w * odds[s].write_os_hit for s, w in evicted.items()) + inserts * 3 / 4 + undo * (3 + hu) / 4) / (
        sum(evicted.values()) + inserts + undo)
    assert system.datafiles.write_page_hit == pytest.approx(hit)


def test_a_tp_monitor_terminal_without_keying_or_think_resubmits_at_once():
    """As a dedicated terminal: a first request within 10 ms, then 0.5-s transactions resubmitted with no
    gap and never queued (one terminal, one session): 199 done by 100 s, each response exactly 0.5 s."""
    wl = _run(_build(users=1, sessions=1, think_time="0 s", keying_time="0 s")[1], 0.5, 100.0)
    assert wl.completed == 199
    assert all(r["mean"] == pytest.approx(0.5) for r in wl.report(100.0)["response"].values())


def test_without_keying_the_think_under_way_is_length_biased():
    """No keying, the TPC-C mean think times per type: a user seen at a random moment is thinking
    after type j with odds mix_j x think_j, so the rest of its think has mean
    sum mix_j think_j^2 / sum mix_j think_j = 132.72 / 11.36 = 11.68 s (not the mix's 11.36 s)."""
    _, wl = _build(keying_time="0 s")
    n = 100_000
    waits = np.array([wl._first_transaction(wl.streams.draws)[1] for _ in range(n)])
    mean = sum(SPEC_MIX[t] * SPEC_THINK[t] ** 2 for t in TYPES) / sum(SPEC_MIX[t] * SPEC_THINK[t] for t in TYPES)
    assert mean == pytest.approx(11.683, abs=0.001)
    assert waits.mean() == pytest.approx(mean, abs=4 * waits.std() / math.sqrt(n))


# --------------------------------------------------------------------------- common random numbers

def _kinds_by_terminal(think: str, seed: int = 1, until: float = 3.0) -> list[list[str]]:
    """Each terminal's transaction types, in order, over `until` simulated seconds of a real run."""
    system, wl = _build(users=8, think_time=think, keying_time="0 s", **{"run.seed": seed})
    terminal = {id(s): i for i, s in enumerate(wl.sessions)}
    kinds: list[list[str]] = [[] for _ in wl.sessions]
    run_one = wl._transaction

    def logged(session, kind, streams=None):
        kinds[terminal[id(session)]].append(kind)
        return run_one(session, kind, streams)

    wl._transaction = logged
    wl.start()
    system.env.run(until=until)
    return kinds


def test_a_terminal_runs_the_same_work_whatever_the_timing_of_the_others():
    """Common random numbers synchronised per terminal: a what-if that changes every terminal's timing
    (here its think time, 1 ms against 20 ms, so the eight interleave differently) leaves each terminal's
    own sequence of transaction types as it was, one a prefix of the other. With one stream for the
    whole workload, whose turn a draw is would follow the interleaving and the sequences would part."""
    fast, slow = _kinds_by_terminal("1 ms"), _kinds_by_terminal("20 ms")
    assert all(len(s) >= 20 for s in slow)
    for f, s in zip(fast, slow):
        assert len(f) > len(s) and f[:len(s)] == s
    assert len({tuple(s[:20]) for s in slow}) == len(slow)      # and the terminals' sequences differ
    assert _kinds_by_terminal("20 ms", seed=2) != slow          # as do the seeds'


def _reads_by_terminal(clock: str) -> list[list]:
    """Each terminal's physical reads (page-cache hit?, datafiles), transaction by transaction, over a real
    run of Table 1's VxFS buffered 500 MB configuration, with Oracle 8i's checkpoint timeout, whose pace sets the
    dirty blocks."""
    from sim.run import run
    sc = _load("ue10000", users=12, think_time="29 ms", keying_time="0 s", warehouses=200,
               **{"database.block_size": "2 KB", "database.redo_device": "redo", "database.data_device": "data",
                  "database.datafiles": 59, "database.datafile_size": "868 MB", "database.oracle_bits": 32,
                  "database.db_cache": "500 MB", "database.dbwr_max_writes": 18,
                  "database.log_checkpoint_timeout": "1800 s", "os.bits": 32, "os.page_replacement": "fifo",
                  "os.filesystem": "vxfs_buffered", "hardware.cpu.clock": clock,
                  "run.warmup": "4 s", "run.max_time": "5 s"})
    logs: dict[int, list] = {}
    reads, of_terminal = tpcc._IoPlan.reads, tpcc._Streams.of_terminal
    order: list[int] = []

    def logged_reads(self, kind, scale, rng):
        out = reads(self, kind, scale, rng)
        logs.setdefault(id(rng), []).append(out)
        return out

    def recorded(system, index, with_io):
        streams = of_terminal(system, index, with_io)
        order.append(id(streams.io))
        return streams

    tpcc._IoPlan.reads = logged_reads
    tpcc._Streams.of_terminal = recorded
    try:
        paced = []
        set_dirty = tpcc._IoPlan.set_dirty
        tpcc._IoPlan.set_dirty = lambda self, checkpoint: (paced.append(1), set_dirty(self, checkpoint))[1]
        try:
            run(sc)
        finally:
            tpcc._IoPlan.set_dirty = set_dirty
    finally:
        tpcc._IoPlan.reads, tpcc._Streams.of_terminal = reads, of_terminal
    assert len(paced) > 1   # the checkpoint pace set the dirty blocks again mid-run
    return [logs.get(i, []) for i in order]


def test_a_terminal_finds_the_same_blocks_whatever_the_checkpoint_pace():
    """A clock what-if changes the checkpoint pace, and with it how many of a transaction's dirty blocks the
    timeout writes, so how many draws the dirty blocks take. On the terminal's I/O stream they shifted its
    later misses (at 400 vs 300 MHz, 9 of 12 terminals' reads parted after 10-30 transactions); on a stream of their own every
    terminal's reads, transaction by transaction, are the same (one run's a prefix of the other's)."""
    fast, slow = _reads_by_terminal("400 MHz"), _reads_by_terminal("300 MHz")
    assert len(slow) == 12 and all(len(s) >= 20 for s in slow)
    for f, s in zip(fast, slow):
        n = min(len(f), len(s))
        assert f[:n] == s[:n]
