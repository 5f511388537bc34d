"""Whole runs: reproducibility, Little's law, bounds of the closed system, monotonicity."""

from __future__ import annotations

import dataclasses
import json
import math

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


def test_a_zero_warm_up_measures_from_the_start():
    """run.warmup 0 s is valid: nothing is discarded, the whole simulated time is measured (SimPy
    refuses to run to a time that is not ahead, which a zero warm-up had hit)."""
    r = run(t5220(4, **{"run.warmup": "0 s"}))
    assert r.tpm > 0 and r.simulated_time == pytest.approx(r.measured_time)


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


def test_involuntary_switches_need_a_run_queue_and_come_at_most_once_a_quantum_per_strand():
    """mpstat's icsw: a burst leaves its strand at the end of a time slice only for someone
    waiting; so none without a run queue, and at most one per strand per quantum with one."""
    idle, saturated = run(t5220(16)), run(t5220(96))
    assert idle.run_queue < 0.05 and idle.extra["involuntary_switches_per_s"] == 0.0
    rate = saturated.extra["involuntary_switches_per_s"]
    assert saturated.run_queue > 5 and 0.0 < rate <= 64 / 0.010
    shorter = run(t5220(96, **{"os.quantum": "1 ms"}))   # ten times the slices: more of them end mid-burst
    assert shorter.extra["involuntary_switches_per_s"] > 3 * rate


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
    firsts = [wl._first_transaction(wl.streams.draws) for _ in range(40_000)]
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

    original = gc.get_threshold()
    before = (1234, 11, 12)     # the caller's own, unlike anything run() sets (and unlike what an earlier run left)
    gc.set_threshold(*before)
    try:
        a = run(t5220(8))
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0
        with run_module._collector_spared():
            assert gc.get_threshold() == (run_module.GEN0_THRESHOLD, 11, 12)
            with run_module._collector_spared():
                pass
            assert gc.get_threshold()[0] == run_module.GEN0_THRESHOLD and gc.get_freeze_count() > 0
            b = run(t5220(8))
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0
        assert without_wall_time(a) == without_wall_time(b)
    finally:
        gc.set_threshold(*original)


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
    law = r.extra["response_time_law"]   # the run's own check of the same law: steady
    assert law["steady"] is True and law["users"] == users and law["think_keying_s"] == pytest.approx(think)
    assert law["response_ms"] == pytest.approx(1000.0 * mean_r)


def _tallies(*responses):
    from sim.metrics import Tally

    t = Tally()
    for x in responses:
        t.add(x)
    return [t, Tally()]   # (a type that never completed counts for nothing)


@pytest.mark.parametrize("throughput, halfwidth, responses, steady", [
    (4.0, 0.1, (4.0, 6.0), True),       # R = 5 s = 100 / 4 - 20: the law's own
    (4.0, 0.1, (1.0, 1.0), False),      # 1 s, outside 3.81..6.32 s (X = 4 +- 2 x 0.1) and 80% off
    (4.0, 0.001, (5.4,), True),         # outside 4.99..5.01 s, but within 10% (0.4 <= 0.54)
    (4.0, 0.001, (5.54,), True),        # within 10% of the larger, the measured (0.54 <= 0.554; not 0.5, the law's)
    (4.0, 0.001, (5.75,), False),       # 15% off (0.75 > 0.575)
    (4.0, 0.5, (1.0,), True),           # 80% off, but inside 0..13.3 s: the throughput is too uncertain to say
    (4.0, 2.5, (90.0,), True),          # X - 2 hw < 0: no upper bound
    (4.0, float("inf"), (1.0,), None),  # no interval (one batch): no verdict
])
def test_the_response_time_law_judges_a_window(throughput, halfwidth, responses, steady):
    """100 users keying and thinking 20 s a transaction at 4 tx/s wait 100 / 4 - 20 = 5 s for a response in
    steady state; a window is judged not steady only off that by both twice the throughput's interval and 10%."""
    from sim.run import response_time_law

    law = response_time_law(100, 20.0, throughput, halfwidth, _tallies(*responses))
    assert law["steady"] is steady
    assert law["law_response_ms"] == pytest.approx(1000.0 * (100 / throughput - 20.0))
    assert law["response_ms"] == pytest.approx(1000.0 * sum(responses) / len(responses))


def test_a_tp_monitor_still_filling_is_reported_not_steady():
    """5,000 terminals with TPC-C times behind one session of a T5220 (~160 tx/s) offer 5,000 / 20.99 = 238 a
    second: the queue fills for ~20 s towards 5,000 - 160 x 21 requests, so a 3-s window right after a 0.5-s
    warm-up sees responses of under a second where the law, N / X - Z, says ~10 s."""
    from sim import report

    r = run(scenario.load(None, {"users": 5000, "sessions": 1, **SHORT}, profile="t5220", workload="tpcc"))
    law = r.extra["response_time_law"]
    assert law["steady"] is False and law["response_ms"] < 0.2 * law["law_response_ms"]
    assert law["law_response_ms"] == pytest.approx(1000.0 * (5000 / r.throughput_per_s - 20.99), rel=1e-3)
    text = report.summary(r)
    assert "NOT STEADY: 5,000 users" in text and "still filling" in text


@pytest.mark.parametrize("measured, law, says", [
    (1.0, 10.0, "wait 10 s for a response by the response time law (N = X (R + Z)), not the 1 s measured: "
                "the queues were still filling"),
    (10.0, 1.0, "wait 1 s for a response by the response time law (N = X (R + Z)), not the 10 s measured: "
                "the queues were draining"),
    (0.5, -1.0, "complete more than keying and thinking alone allows (N / X = 20 s): the queues were draining"),
])
def test_a_window_not_steady_says_which_way_the_queues_went(measured, law, says):
    from sim.report import _not_steady

    text = _not_steady({"users": 100, "think_keying_s": 21.0, "response_ms": 1e3 * measured,
                        "law_response_ms": 1e3 * law}, 5.0)
    assert text.startswith("NOT STEADY: 100 users at 5.0 tx/s, keying and thinking 21 s a transaction,")
    assert says in text


def test_a_steady_run_accounts_its_time_events_batches_and_cpu():
    """Simulated = warm-up + measured (a cached database: no DBWR to re-warm), one batch per 0.5 s
    measured, at least an event per transaction, DB CPU = the busy strand time, and CPI x instructions =
    busy cycles (the CPI stack is what the strands' busy time divides into)."""
    r = run(t5220(16))
    assert r.simulated_time == pytest.approx(0.5 + r.measured_time)
    assert r.extra["batches"] == round(r.measured_time / 0.5) >= 4
    assert r.events > sum(v["count"] for v in r.response.values()) > 0 and 0 < r.wall_time < 600
    busy = (100.0 - r.cpu_idle) / 100.0 * 64 * r.measured_time
    db_cpu = next(e for e in r.top_events if e["event"] == "DB CPU")
    assert db_cpu["time_s"] == pytest.approx(busy) and db_cpu["waits"] is None
    assert sum(e["pct_call_time"] for e in r.top_events) == pytest.approx(100.0)
    times = [e["time_s"] for e in r.top_events]
    assert times == sorted(times, reverse=True)          # AWR's order: the most time first
    for e in r.top_events:
        if e["waits"]:
            assert e["avg_ms"] == pytest.approx(1000.0 * e["time_s"] / e["waits"])
    cycles_per_s = busy / r.measured_time * 1.4e9
    assert r.extra["instructions_per_s"] * r.extra["cpi"] == pytest.approx(cycles_per_s)
    # mpstat's mean is vmstat's us + sy; corestat's is the issue cycles over the 16 pipelines' cycles
    assert sum(r.strand_utilisation) / 64 == pytest.approx(r.cpu_usr + r.cpu_sys, rel=1e-3)
    issuing = r.extra["instructions_per_s"] * r.extra["cpi_issue"] / (1.4e9 * 16)
    assert sum(r.core_utilisation) / 8 == pytest.approx(100.0 * issuing, rel=1e-6)
    assert 1.0 <= r.extra["commits_per_log_write"] <= 16     # a log write carries at most one commit a user
    assert "paging" not in r.extra                            # nothing paged in: no vmstat paging line of zeros


def test_a_batch_job_cut_at_run_max_time_is_a_timeout_and_one_that_ends_is_timed_to_its_end():
    settings = {"channels": 1, "datafiles_mb": [50.0], "compressed": False, "datafile_device": "array",
                "backup_device": "array"}
    done = run(scenario.load(None, settings, profile="t5220", workload="rman"))
    assert done.status == "ok" and not done.message
    assert done.elapsed == done.measured_time == done.simulated_time < 120.0
    cut = run(scenario.load(None, {**settings, "run.max_time": f"{done.elapsed / 2} s"}, profile="t5220",
                            workload="rman"))
    assert cut.status == "timeout" and "run.max_time" in cut.message
    assert cut.elapsed == cut.measured_time == pytest.approx(done.elapsed / 2)


def test_a_batch_job_runs_to_its_end_unless_run_max_time_is_set():
    # the steady runs' 120-s cap is not a batch job's: a backup longer than that finishes by default
    settings = {"channels": 1, "datafiles_mb": [20000.0], "compressed": False}
    done = run(scenario.load(None, settings, profile="t5220", workload="rman"))
    assert done.status == "ok" and done.elapsed > 1.5 * 120.0
    cut = run(scenario.load(None, {**settings, "run.max_time": "120 s"}, profile="t5220", workload="rman"))
    assert cut.status == "timeout" and cut.elapsed == pytest.approx(120.0)


def test_an_out_of_memory_run_reports_its_outcome_and_no_figures():
    sc = scenario.load(None, {"users": 8, "database.db_cache": "2 GB", "hardware.memory.size": "1 GB",
                              "hardware.memory.kernel": "128 MB"}, profile="t5220", workload="tpcc")
    r = run(sc)
    assert r.status == "out_of_memory" and "exceed physical memory" in r.message
    assert r.tpm is None and r.elapsed is None and r.top_events == [] and r.events == 0 and r.simulated_time == 0
    assert 0 < r.wall_time < 60


def test_progress_is_reported_as_a_rising_fraction_to_the_end():
    steady, batch = [], []
    r = run(t5220(16, **{"run.target_half_width": "0.001%"}), progress=steady.append)   # runs to run.max_time
    assert len(steady) == r.extra["batches"] and steady == sorted(steady) and steady[-1] == pytest.approx(1.0)
    assert steady[0] == pytest.approx(1 / len(steady))
    run(scenario.load(None, {"channels": 1, "datafiles_mb": [6000.0], "compressed": False}, profile="t5220",
                      workload="rman"), progress=batch.append)   # ~64 s: several of the 10-s progress steps
    assert len(batch) >= 2 and batch == sorted(batch) and 0.0 < batch[0] < 1.0 and batch[-1] == 1.0   # it moves


def test_a_run_stops_at_its_precision_target_but_not_before_min_batches():
    loose = run(t5220(16, **{"run.target_half_width": "50%", "run.min_batches": "6", "run.max_time": "10 s"}))
    assert loose.measured_time == pytest.approx(6 * 0.5) and loose.extra["batches"] == 6
    tight = run(t5220(16, **{"run.target_half_width": "0.001%", "run.min_batches": "6", "run.max_time": "4 s"}))
    assert tight.measured_time == pytest.approx(4.0) and tight.extra["batches"] == 8     # to run.max_time


def test_equal_batches_by_chance_do_not_stop_a_run_but_ten_do():
    """Two 50-ms batches of a short SLOB run once counted the same reads: a zero half-width from two batches
    stopped the run at 0.1 s. Equal counts stop it only from 10 batches (a run that does not vary)."""
    from sim.metrics import BatchMeans
    from sim.run import precise_enough

    def precise(values, min_batches, target):
        batches = BatchMeans()
        for v in values:
            batches.add(v)
        return precise_enough(batches, min_batches, target)
    assert not precise([640.0, 640.0], 2, 0.01)
    assert not precise([640.0] * 9, 2, 0.01)
    assert precise([640.0] * 10, 2, 0.01)
    assert precise([640.0, 641.0, 640.5], 2, 0.01)            # a real interval, narrow enough
    assert not precise([640.0, 641.0, 640.5], 4, 0.01)        # ... before min_batches
    assert not precise([0.0] * 12, 2, 0.01)                   # nothing done is no estimate


def test_the_reported_interval_is_as_wide_as_the_spread_between_seeds():
    """The ± a run reports (batch means, Student t over 6 batches) against what it claims to bound: 12 seeds
    of the same run. An honest 95% half-width covers the seeds' mean in most runs, and is about t(5) = 2.6
    standard deviations of one run's TPM, not a fraction of one nor many (measured over 60 seeds: 2.5-2.8;
    over 12, 1.7-3.7 as the seeds' spread is itself estimated from 12: 10-11 of 12 covered)."""
    import numpy as np
    rs = [run(t5220(16, **{"run.seed": str(s), "run.target_half_width": "0.001%"})) for s in range(1, 13)]
    tpm = np.array([r.tpm for r in rs])
    hw = np.array([r.tpm_half_width for r in rs])
    assert int((np.abs(tpm - tpm.mean()) <= hw).sum()) >= 8
    assert 0.8 < hw.mean() / tpm.std(ddof=1) < 4.5


def test_device_figures_obey_the_utilisation_law_and_add_up_to_the_databases_io():
    """iostat's columns of the UE10000's 36-drive raw stripe (2 KB blocks, 100 MB cache): U = X S per drive
    (the utilisation law), MB/s = IOPS x 2 KB, and the stripe's IOPS are the database's physical reads and
    writes (raw: no file-system page fills or read-ahead in between)."""
    sc = scenario.load(None, {"users": 6, "think_time": "6 ms", "keying_time": "0 s", "warehouses": 200,
                              "database.block_size": "2 KB", "database.redo_device": "redo",
                              "database.db_cache": "100 MB", **SHORT}, profile="ue10000", workload="tpcc")
    r = run(sc)
    d = r.devices["data"]
    assert d["iops"] > 100
    # (to 1.5%: an I/O in service at the window's start or end counts its busy time in part, its completion whole
    # or not at all)
    assert d["util_pct"] == pytest.approx(d["iops"] / 36 * d["avg_service_ms"] / 1000 * 100, rel=0.015)
    assert d["mb_per_s"] == pytest.approx(d["iops"] * 2048 / 2**20, rel=1e-6)
    # r/s + w/s = IOPS, both of them some (the cache misses' reads, DBWR's writes)
    assert d["reads_per_s"] + d["writes_per_s"] == pytest.approx(d["iops"]) and min(d["reads_per_s"], d["writes_per_s"]) > 0
    assert d["iops"] == pytest.approx(r.extra["physical_reads_per_s"] + r.extra["physical_writes_per_s"], rel=0.02)
    # Little's law: what is at the drives is at most the 6 users' reads and DBWR's 256 async writes
    assert d["avg_service_ms"] <= d["avg_response_ms"] and d["iops"] * d["avg_response_ms"] / 1000 <= 6 + 256


def test_a_half_width_of_exactly_the_target_is_precise_enough():
    """The stopping rule is 'within the target': a half-width over the mean equal to it stops the run (the target
    taken as the batches' own ratio, to the last bit), a hair less than it does not."""
    from sim.metrics import BatchMeans, batch_means_halfwidth
    from sim.run import precise_enough

    batches = BatchMeans()
    for v in (640.0, 641.0, 640.5, 639.0):
        batches.add(v)
    ratio = batch_means_halfwidth(batches.batches()[0]) / batches.mean
    assert precise_enough(batches, 4, ratio) and not precise_enough(batches, 4, ratio * (1 - 1e-12))


def test_sessions_past_ram_and_swap_are_out_of_memory_before_anything_is_simulated():
    """64 dedicated servers of 12 MB on a 1 GB T5220 without swap: the kernel (128 MB) and SGA (133 MB) fit, the
    servers do not (128 + 33 + 100 + 50 + 64 x 12 = 1,079 MB against 1,024): out of memory before the first
    transaction, not at the first batch's end, and the account the message adds up is kept in the result."""
    r = run(scenario.load(None, {"users": 64, "database.db_cache": "100 MB", "database.server_memory": "12 MB",
                                 "hardware.memory.size": "1 GB", "hardware.memory.kernel": "128 MB",
                                 "hardware.memory.swap": "0 GB"}, profile="t5220", workload="tpcc"))
    assert r.status == "out_of_memory" and r.message.startswith("committed memory 1,079.0 MB exceeds RAM + swap 1,024.0")
    assert r.simulated_time == 0 and r.events == 0 and r.tpm is None and " s in)" not in r.message
    assert (r.extra["memory"]["committed_mb"], r.extra["memory"]["ram_mb"]) == (1079.0, 1024.0)


def test_batches_end_on_the_batch_grid_and_progress_never_passes_one():
    """300 batches of 10 ms after a 0.5-s warm-up end at 0.5 + 300 x 0.01 = 3.5 s to the bit (0.01 added 300 times
    is 3.4999999999999694: each batch's end is taken from the start, not from the last end); run.max_time 2.995 s
    is reached in the 300th batch, at 3 s measured, and the progress reported stops at 1.0, not 3 / 2.995."""
    seen = []
    r = run(t5220(4, **{"run.batch": "10 ms", "run.max_time": "2.995 s", "run.target_half_width": "0.001%"}),
            progress=seen.append)
    assert (r.simulated_time, r.measured_time, len(seen)) == (3.5, 3.0, 300)
    assert seen[-1] == max(seen) == 1.0
    # the batches as merged (correlated neighbours in pairs): so many of so long cover the window
    assert r.extra["batch_s"] > 0.01 and r.extra["batches"] * r.extra["batch_s"] == pytest.approx(3.0)


def test_a_batch_job_cut_short_reports_progress_every_hundredth_and_stops_at_run_max_time_to_the_bit():
    """A 50 MB backup (1.12 s) cut at run.max_time 1.1 s: under 1,000 s the progress step is a hundredth of it
    (11 ms, not the 10-s step of long jobs), so the bar moves 101 times (100 steps of 0.011 s add up to
    1.0999999999999996, and the last step is only what is left); elapsed is 1.1 s exactly, not 1.111 s, one
    step past it."""
    seen = []
    r = run(scenario.load(None, {"channels": 1, "datafiles_mb": [50.0], "compressed": False, "datafile_device": "array",
                                 "backup_device": "array", "run.max_time": "1.1 s"}, profile="t5220", workload="rman"),
            progress=seen.append)
    assert r.status == "timeout" and r.elapsed == r.measured_time == 1.1
    assert len(seen) == 101 and seen == sorted(seen) and 0.9 < seen[-1] < 1.0


def test_slob_sessions_past_ram_and_swap_stop_the_run_before_anything_is_simulated():
    """SLOB's sessions are started by the workload's start(), after the instance was admitted: 300 of 1 GB are past
    any RAM + swap of the Xeon, and are refused as they start, before the first read (not found at the first
    batch's end, some simulated time in)."""
    r = run(scenario.load(None, {"sessions": "300", "database.server_memory": "1 GB", "database.db_cache": "1 GB",
                                 "run.max_time": "0.1 s", "run.batch": "0.05 s"}, profile="xeon-e5-2699v3-2s",
                          workload="slob"))
    assert r.status == "out_of_memory" and "exceeds RAM + swap" in r.message and " s in)" not in r.message
    assert r.simulated_time == 0 and r.events == 0


class _Cache:
    """A write-back cache as _fill_caches sees it: what settle() fills, whether it stays full, the watches."""

    def __init__(self, fills: float, stays_full: bool = True):
        self.fills, self.full, self.watched, self.unfilled = fills, stays_full, [], False
        self.fill_rate = 3 * 2**20

    def settle(self):
        return self.fills

    def watch(self, since):
        self.watched.append(since)

    def stays_full(self):
        return self.full

    def unfill(self):
        self.unfilled = True


def _cache_system():
    import types

    import simpy

    watched = []
    return types.SimpleNamespace(env=simpy.Environment(), instance=types.SimpleNamespace(watch_writer=watched.append)), \
        watched, types.SimpleNamespace(extra={})


def test_caches_that_keep_up_fill_nothing_and_add_no_warm_up():
    """settle() 0: the cache is not filling, so nothing is filled, watched or warmed up again (a cache counted as
    filled at 0 would add a warm-up to every run with a write cache that keeps up: a mutant doing so passed the
    suite, mutation round U57)."""
    from sim.run import _fill_caches

    system, watched, result = _cache_system()
    caches = [("a", _Cache(0.0)), ("b", _Cache(0.0))]
    assert _fill_caches(system, result, caches, 2.0) == []
    assert system.env.now == 0.0 and watched == [] and all(c.watched == [] for _n, c in caches)
    assert result.extra == {}


def test_a_filled_cache_that_drains_is_unfilled_and_dbwr_watched_over_one_more_warm_up():
    """Two caches filled; over a warm-up (2 s) one stays full (its fill rate reported, 3 MB/s) and one drains
    (unfilled): DBWR, watched from 0 with the caches, is watched afresh from half the next warm-up (3 s) and the
    run warms up once more (to 4 s). With both full, one warm-up only (a mutant never warming up again passed the
    suite, mutation round U46)."""
    from sim.run import _fill_caches

    system, watched, result = _cache_system()
    full, drains = _Cache(5.0), _Cache(5.0, stays_full=False)
    assert _fill_caches(system, result, [("a", full), ("b", drains)], 2.0) == [("a", full)]
    assert full.watched == drains.watched == [0.0] and drains.unfilled and not full.unfilled
    assert watched == [0.0, 3.0] and system.env.now == 4.0
    assert result.extra == {"write_cache_fill_mb_per_s.a": 3.0}
    system, watched, result = _cache_system()
    _fill_caches(system, result, [("a", _Cache(5.0)), ("b", _Cache(5.0))], 2.0)
    assert watched == [0.0] and system.env.now == 2.0


def test_a_saturated_run_reports_no_idle_below_zero():
    """Every strand busy all the measured time: idle is 0, though the busy strand-seconds, summed over the run's
    events (dt x busy strands each), come out an ulp or two above cpu_count x span (128 users on the UE10000's 64
    CPUs, 2.1 s measured: 1 - busy / capacity = -2.2e-16, an idle of -2.2e-14%, which prints as -0). The clamp at 0
    is what keeps it 0 (a mutant without it passed the suite, mutation round U28)."""
    sc = scenario.load(None, {"users": 128, "think_time": "0 s", "keying_time": "0 s", "run.warmup": "0.1 s",
                              "run.batch": "0.1 s", "run.min_batches": "4", "run.max_time": "2.1 s"},
                       profile="ue10000", workload="tpcc")
    r = run(sc)
    assert r.run_queue > 60 and r.cpu_idle == 0.0
    assert r.cpu_usr + r.cpu_sys == pytest.approx(100.0, abs=1e-9)


def _collected(system):
    """What _collect reports of a system as it stands (the time since its start measured)."""
    from sim.result import Result
    from sim.run import _collect

    result = Result(label="t", profile="p", workload="w", inputs={})
    _collect(system, result, system.env.now)
    return result


def _opteron_4way():
    """A System on the Opteron 4-way, whose external RAID 5 group sits behind a 512 MB write-back cache, nothing run."""
    from sim.system import System

    system = System(scenario.load(None, {"users": 10, "database.db_cache": "1 GB"}, profile="opteron-4way",
                                  workload="tpcc"))
    system.set_memory_behaviour(0.002)   # as a workload would: LGWR's CPU runs on strands
    return system


def test_only_a_device_whose_cache_took_writes_is_flagged_write_cache():
    """iostat's note that a write-back cache acknowledged writes: not for the cached RAID 5 group before it took any,
    nor after reads alone (they do not go through the cache), and for it alone once one write landed there (a
    mutant flagging every device with a cache passed the suite, mutation round U42)."""
    system = _opteron_4way()
    external = system.devices["external"]
    assert external.cache is not None and [n for n, d in system.devices.items() if getattr(d, "cache", None)] == [
        "external"]
    system.env.run(until=0.001)
    assert not any("write_cache" in d for d in _collected(system).devices.values())
    done = external.submit("read", 8192)
    system.env.run(until=done)
    devices = _collected(system).devices
    assert devices["external"]["reads_per_s"] > 0 and not any("write_cache" in d for d in devices.values())
    done = external.submit("write", 8192)
    system.env.run(until=done)
    devices = _collected(system).devices
    assert devices["external"]["write_cache"] is True
    assert [n for n, d in devices.items() if "write_cache" in d] == ["external"]


def test_lgwr_with_a_write_in_hand_and_none_completed_reports_its_busy_time_and_no_writes():
    """LGWR's figures come with its time working, not its completed writes: idle it reports none, with its first
    write at the device and none done its busy share (its CPU, then the write so far) and 0 log writes/s, and its
    redo device (a mutant asking for a completed write, 'lg.writes', passed the suite, mutation round U40)."""
    system = _opteron_4way()
    lg = system.instance.lgwr
    system.env.run(until=0.001)
    assert not {"lgwr_busy_pct", "log_writes_per_s", "redo_device"} & set(_collected(system).extra)
    lg.commit(512.0)
    while lg.started is None:
        system.env.step()
    system.env.run(until=lg.started + 1e-4)   # into the write, which takes milliseconds
    assert lg.started is not None and lg.writes == 0
    extra = _collected(system).extra
    assert extra["log_writes_per_s"] == 0.0 and extra["redo_device"] == "external"
    assert extra["lgwr_busy_pct"] == pytest.approx(100.0 * lg.utilisation()) and 0.0 < extra["lgwr_busy_pct"] < 100.0


def test_the_write_caches_are_first_watched_half_way_through_the_warm_up():
    """With run.settle_writer a cache's fill rate is judged over the warm-up's second half, as DBWR's is: watched
    from 11 s in a 2-s warm-up begun at 10 s, not from its start (the first half is the caches' and the buffer
    cache's own filling), nor from its end (no time watched). A mutant watching from the start passed the suite
    (mutation round U47)."""
    import types

    import simpy

    from sim.run import _warm_up

    watched = []
    caches = [_Cache(0.0), _Cache(0.0)]
    instance = types.SimpleNamespace(watch_writer=watched.append, writer_unjudged=lambda: False,
                                     settle_writer=lambda: 0, writer_behind=lambda: False,
                                     release_checkpoints=lambda writer_behind: False)
    run_spec = types.SimpleNamespace(warmup=2.0, settle_writer=True)
    system = types.SimpleNamespace(env=simpy.Environment(initial_time=10.0), instance=instance,
                                   scenario=types.SimpleNamespace(spec=types.SimpleNamespace(run=run_spec)),
                                   devices={"a": types.SimpleNamespace(cache=caches[0]),
                                            "b": types.SimpleNamespace(cache=caches[1]), "c": types.SimpleNamespace()})
    _warm_up(system, types.SimpleNamespace(extra={}))
    assert [c.watched for c in caches] == [[11.0], [11.0]] and watched == [11.0] and system.env.now == 12.0


def test_a_run_in_which_nothing_completed_has_no_interval_not_plus_or_minus_0():
    """4 users keying and thinking ~21 s a transaction, measured for 1 s: none completes. 0 TPM with a 95% interval
    of ± 0 read as a measured zero in the data (JSON, sweeps, compare); it has no interval (NaN, null in JSON)."""
    r = run(scenario.load(None, {"users": 4, "run.max_time": "1 s"}, profile="t5220", workload="tpcc"))
    assert r.status == "ok" and r.tpm == 0.0 and math.isnan(r.tpm_half_width)
    assert json.loads(r.to_json())["tpm_half_width"] is None
