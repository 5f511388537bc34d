"""Whole runs: reproducibility, Little's law, bounds of the closed system, monotonicity."""

from __future__ import annotations

import dataclasses

import pytest

from sim import scenario
from sim.run import run

SHORT = {"run.warmup": "0.5 s", "run.batch": "0.5 s", "run.min_batches": "4", "run.max_time": "3 s"}


def t5220(users: int, **extra):
    overrides = {"users": users, "think_time": "0 s", "keying_time": "0 s", **SHORT, **extra}
    return scenario.load(None, overrides, profile="t5220", workload="tpcc")


def without_wall_time(r):
    d = r.to_dict()
    d.pop("wall_time")
    return d


def test_same_seed_same_numbers_bit_for_bit():
    a, b = run(t5220(16)), run(t5220(16))
    assert without_wall_time(a) == without_wall_time(b)


def test_another_seed_other_numbers():
    a, b = run(t5220(16)), run(t5220(16, **{"run.seed": "2"}))
    assert a.tpm != b.tpm


@pytest.mark.parametrize("users", [4, 32])
def test_littles_law_for_the_closed_system(users):
    """N = X (R + Z): with zero think and keying time every user is always in a transaction."""
    r = run(t5220(users))
    n_resp = sum(v["count"] for v in r.response.values())
    mean_r = sum(v["count"] * v["mean"] for v in r.response.values()) / n_resp
    x = n_resp / r.measured_time
    # A transaction in flight at the start or end of the window is not counted: the error is
    # at most users / completions, about 0.5% here.
    assert x * mean_r == pytest.approx(users, rel=0.02)


def test_cpu_figures_add_up_and_stay_in_range():
    r = run(t5220(64))
    assert r.cpu_idle + r.cpu_usr + r.cpu_sys == pytest.approx(100.0, abs=1e-6)
    assert all(0.0 <= u <= 100.0 + 1e-9 for u in r.core_utilisation + r.strand_utilisation)
    # corestat shows less than mpstat on CMT: a busy strand does not keep a pipeline busy.
    assert sum(r.core_utilisation) / len(r.core_utilisation) < sum(r.strand_utilisation) / len(r.strand_utilisation)


def test_throughput_respects_the_bounds_of_a_closed_system():
    """X <= N / (D + Z) and X <= capacity: with think time, no faster than the users allow."""
    users, think = 32, 0.05
    r = run(t5220(users, think_time=f"{think} s"))
    demand = min(v["mean"] for v in r.response.values())  # a lower bound on any transaction's time
    assert r.throughput_per_s <= users / (demand + think) * 1.02


def test_throughput_never_rises_when_memory_gets_slower():
    base = t5220(32)
    slow_mem = dataclasses.replace(base.profile.memory, latency=base.profile.memory.latency * 1.5)
    slower = dataclasses.replace(base, profile=dataclasses.replace(base.profile, memory=slow_mem))
    assert run(slower).tpm < run(base).tpm


def test_more_users_than_strands_queue_in_the_run_queue():
    """Every user is on a strand, in the run queue, or waiting for its commit (Little's law on
    each state); LGWR adds at most one process to the count."""
    users = 96
    r = run(t5220(users))
    busy = (100.0 - r.cpu_idle) / 100.0 * 64
    syncing = next(e["time_s"] for e in r.top_events if e["event"] == "log file sync") / r.measured_time
    assert r.run_queue == pytest.approx(users - busy - syncing, abs=1.5)
    assert r.run_queue > 5 and r.cpu_idle < 2.0


def test_tpcc_users_start_where_steady_state_has_them():
    """With TPC-C's fixed keying times, a user starts keying transaction k with odds
    mix_k x keying_k, else thinking: so a New-Order can come before its 18 s keying time, and the
    first transactions' mix is the steady state's (mix_k (keying_k + mean think) / mean cycle)."""
    from collections import Counter

    import workloads
    from sim.system import System
    from workloads.tpcc import STANDARD_KEYING, STANDARD_MIX, STANDARD_THINK

    sc = scenario.load(None, {"users": 10, "warehouses": 1}, profile="t5220", workload="tpcc")
    wl = workloads.get("tpcc").Workload(System(sc), sc.params)
    firsts = [wl._first_transaction() for _ in range(40_000)]
    total = sum(STANDARD_MIX.values())
    mix = {t: v / total for t, v in STANDARD_MIX.items()}
    think = sum(mix[t] * STANDARD_THINK[t] for t in mix)
    cycle = sum(mix[t] * (STANDARD_KEYING[t] + STANDARD_THINK[t]) for t in mix)
    seen = Counter(k for k, _ in firsts)
    for t in mix:
        assert seen[t] / len(firsts) == pytest.approx(mix[t] * (STANDARD_KEYING[t] + think) / cycle, abs=0.01)
    early = [w for k, w in firsts if k == "new_order" and w < STANDARD_KEYING["new_order"]]
    assert len(early) / seen["new_order"] == pytest.approx(STANDARD_KEYING["new_order"] / (STANDARD_KEYING["new_order"] + think), abs=0.02)


def test_a_run_puts_the_garbage_collector_back_as_it_found_it():
    """run() freezes the model out of the cycle collector's walks and collects the youngest generation
    less often while it simulates (sim/run.py); afterwards the thresholds and the frozen set are the
    caller's again, also when runs nest (a thread of a Dask worker), and results do not depend on it."""
    import gc

    from sim import run as run_module

    before = gc.get_threshold()
    a = run(t5220(8))
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    with run_module._collector_spared():
        assert gc.get_threshold()[0] == run_module.GEN0_THRESHOLD
        with run_module._collector_spared():
            pass
        assert gc.get_threshold()[0] == run_module.GEN0_THRESHOLD and gc.get_freeze_count() > 0
        b = run(t5220(8))
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    assert without_wall_time(a) == without_wall_time(b)


def test_tp_monitor_loses_no_terminal_and_obeys_littles_law():
    """200 terminals behind a TP monitor with 8 server sessions (T5220), exponential think 0.2 s: at
    any moment every terminal is thinking (its next request scheduled), queued for a session, or in
    one; and over the run N = X (R + Z), R counted from submission (queueing for a session included)."""
    import workloads
    from sim.system import System

    users, think = 200, 0.2
    sc = scenario.load(None, {"users": users, "sessions": 8, "think_time": f"{think} s", "keying_time": "0 s"},
                       profile="t5220", workload="tpcc")
    wl = workloads.get("tpcc").Workload(System(sc), sc.params)
    env = wl.env
    wl.start()
    for t in (0.5, 1.0, 2.0, 3.0):
        env.run(until=t)
        thinking = sum(1 for *_, ev in env._queue if ev.callbacks and wl._submit in ev.callbacks)
        serving = len(wl.sessions) - len(wl.idle)
        assert thinking + len(wl.requests) + serving == users
        assert not (wl.requests and wl.idle)          # a queued request never waits beside an idle session
    r = run(scenario.load(None, {"users": users, "sessions": 8, "think_time": f"{think} s", "keying_time": "0 s",
                                 **SHORT}, profile="t5220", workload="tpcc"))
    n_resp = sum(v["count"] for v in r.response.values())
    mean_r = sum(v["count"] * v["mean"] for v in r.response.values()) / n_resp
    assert n_resp / r.measured_time * (mean_r + think) == pytest.approx(users, rel=0.03)
