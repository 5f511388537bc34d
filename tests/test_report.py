"""The text report and the data (to_frame / JSON) say the same things, in the users' language."""

from __future__ import annotations

import json
import math
import re

import pytest

from sim import report, scenario
from sim.result import Result
from sim.run import run

SHORT = {"run.warmup": "0.5 s", "run.batch": "0.5 s", "run.min_batches": "4", "run.max_time": "3 s"}
UE10000_VXFS = {"users": 6, "think_time": "6 ms", "keying_time": "0 s", "warehouses": 200, "hash_clusters": True,
                "database.block_size": "2 KB", "database.data_device": "data", "database.redo_device": "redo",
                "database.db_cache": "1 GB", "os.filesystem": "vxfs_buffered", **SHORT}


@pytest.fixture(scope="module")
def ue10000():
    r = run(scenario.load(None, UE10000_VXFS, profile="ue10000", workload="tpcc"))
    return r, report.full(r), r.to_frame().iloc[0]


@pytest.fixture(scope="module")
def create_index():
    sc = scenario.load(None, {"table_size": "200 MB", "table_device": "array", "index_device": "array",
                              "database.redo_device": "array"}, profile="t5220", workload="create_index")
    r = run(sc)
    return r, report.full(r), r.to_frame().iloc[0]


def test_every_device_line_of_the_text_is_a_column_of_the_frame(ue10000):
    r, text, row = ue10000
    for name in ("data", "redo"):
        line = re.search(rf"^{name}\s+([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$",
                         text, re.M)
        assert line, text
        iops, reads, writes, mb, util, svc, resp = line.groups()
        assert iops == report.figure(row[f"device.{name}.iops"]) and mb == f"{row[f'device.{name}.mb_per_s']:.1f}"
        assert reads == report.figure(row[f"device.{name}.reads_per_s"])
        assert writes == report.figure(row[f"device.{name}.writes_per_s"])
        # iostat's r/s and w/s add up to the I/Os; the redo drive only takes LGWR's writes
        assert row[f"device.{name}.reads_per_s"] + row[f"device.{name}.writes_per_s"] == pytest.approx(row[f"device.{name}.iops"])
        assert util == f"{row[f'device.{name}.util_pct']:.0f}"
        assert svc == f"{row[f'device.{name}.avg_service_ms']:.2f}" and resp == f"{row[f'device.{name}.avg_response_ms']:.2f}"
    assert row["device.redo.reads_per_s"] == 0.0 < row["device.redo.writes_per_s"]


def test_top_events_and_response_percentiles_are_columns(ue10000):
    r, text, row = ue10000
    for e in r.top_events[:5]:
        assert row[f"wait.{e['event']}.time_s"] == e["time_s"]
        assert row[f"wait.{e['event']}.pct_call_time"] == e["pct_call_time"]
        assert f"{e['time_s']:,.1f}" in text
    assert sum(row[f"wait.{e['event']}.pct_call_time"] for e in r.top_events) == pytest.approx(100.0)
    for t, v in r.response.items():
        assert row[f"rt.{t}.p90"] == v["p90"] and row[f"rt.{t}.count"] == v["count"]


def test_the_file_system_run_shows_its_cache_lock_and_memory_account(ue10000):
    r, text, row = ue10000
    x = r.extra
    assert f"buffer hit {100 * x['buffer_hit_ratio']:.2f}%" in text
    assert f"OS page-cache hits/s {x['os_cache_hits_per_s']:,.1f}" in text
    assert f"write-held {x['file_lock_write_held_pct']:.1f}% of the time" in text
    assert f"page cache {x['memory']['page_cache_mb']:,.0f}" in text
    assert row["extra.memory.page_cache_mb"] == x["memory"]["page_cache_mb"]
    # the account adds up to RAM: what is committed, the scanner's free reserve and the page cache (no overcommit)
    m = x["memory"]
    assert m["committed_mb"] + m["free_reserve_mb"] + m["page_cache_mb"] == pytest.approx(m["ram_mb"], rel=1e-12)
    assert f"free reserve {m['free_reserve_mb']:,.0f}" in text


def test_inputs_record_the_database_and_os_settings(ue10000):
    r, _text, row = ue10000
    assert row["in.database.db_cache"] == 2**30 and row["in.os.filesystem"] == "vxfs_buffered"
    assert row["in.params.mix.new_order"] == pytest.approx(0.45)
    assert json.loads(r.to_json())["inputs"]["database.block_size"] == 2048


def test_corestat_is_named_only_on_multithreaded_cores(ue10000, create_index):
    assert "(corestat)" in create_index[1] and "corestat" not in ue10000[1]
    assert "cpustat-like" in ue10000[1]


def test_a_parallel_batch_job_shows_its_degree_and_servers(create_index):
    r, text, row = create_index
    assert r.extra["dop"] >= 1 and f"Parallel: DOP {r.extra['dop']}" in text
    assert f"PX servers started {r.extra['px_servers_started']:,}" in text and row["extra.dop"] == r.extra["dop"]
    assert f"elapsed: 0:00:{r.elapsed:05.2f}" in text


def test_no_transaction_in_the_measured_time_is_said_not_printed_as_0_plus_minus_0():
    # one terminal keying and thinking a minute each: a transaction in the 3.5 s has odds of ~3%
    sc = scenario.load(None, {"users": 1, "think_time": "60 s", "keying_time": "60 s", **SHORT},
                       profile="t5220", workload="tpcc")
    r = run(sc)
    assert r.tpm == 0 and "± 0" not in report.summary(r)
    assert "no transaction completed in the measured 3 s" in report.summary(r)
    assert "a longer run.max_time" in report.summary(r) and "swap" not in report.summary(r)


def test_no_transaction_while_thrashing_says_paging_not_a_longer_run():
    """opteron-2way, 5,000 users whose 1.5 MB are all working set: 16.5% of each on swap, every session queued on
    the one swap drive (~120 I/Os/s) for minutes. The report had advised a longer run or shorter think times."""
    from sim.result import Result
    r = Result(label="x", profile="opteron-2way", workload="tpcc", inputs={}, tpm=0.0, measured_time=60.0,
               cpu_idle=100.0, cpu_usr=0.0, cpu_sys=0.0, run_queue=0.0,
               extra={"memory": {"overcommit_mb": 2485.0, "working_set_paged_out_pct": 16.5}})
    text = report.summary(r)
    assert "overcommitted by 2,485 MB and 16.5% of every working set is on swap" in text
    assert "a longer run.max_time" not in text and "hardware.memory.size" in text


def test_json_is_standard_json_with_null_for_what_is_not_a_number(ue10000):
    r = ue10000[0]
    r2 = type(r)(**{**r.to_dict(), "tpm_half_width": float("inf"), "extra": {**r.extra, "x": float("nan")}})
    def refuse(token):
        raise AssertionError(f"{token} is not JSON")
    d = json.loads(r2.to_json(), parse_constant=refuse)
    assert d["tpm_half_width"] is None and d["extra"]["x"] is None and d["tpm"] == r.tpm


def test_the_title_lists_the_settings_off_their_defaults_as_set_writes_them(ue10000):
    line = report.summary(ue10000[0]).split("throughput")[0]
    for text in ("users 6", "think_time 6 ms", "keying_time 0 s", "warehouses 200", "hash_clusters true",
                 "database.block_size 2 KB", "database.db_cache 1 GB", "os.filesystem vxfs_buffered", "run.max_time 3 s"):
        assert text in line, text
    for default in ("database.shared_pool", "os.quantum", "users_on_host", "run.seed", "mix"):
        assert default not in line


def test_sweep_metric_check_knows_every_figure_a_run_flattens():
    """`sweep --metric` is checked up front against result.FIGURES and FIGURE_PREFIXES: every
    column flat() gives (but the inputs, labels and seed) must pass known_figure, or a figure a
    run has would be refused before the sweep, and every name in FIGURES must be a column."""
    from sim.result import FIGURES, Result, known_figure

    r = Result("l", "p", "tpcc", {"users": 8}, tpm=1.0, elapsed=2.0, core_utilisation=[0.5],
               strand_utilisation=[0.25], top_events=[{"event": "log file sync", "waits": 1, "time_s": 0.1,
                                                       "avg_ms": 100.0, "pct_call_time": 5.0}],
               response={"new_order": {"mean": 0.1}}, devices={"array": {"iops": 9.0}}, extra={"iops": 5.0})
    row = r.flat()
    assert all(f in row for f in FIGURES), [f for f in FIGURES if f not in row]
    not_figures = {"label", "profile", "workload", "status", "message", "seed", "busiest"}   # (busiest: a name)
    unknown = [k for k in row if not k.startswith("in.") and k not in not_figures and not known_figure(k)]
    assert not unknown, unknown
    assert not known_figure("extra.") and not known_figure("tmp") and known_figure("wait.log file sync.time_s")


def test_a_run_stopped_short_of_its_precision_target_says_so():
    sc = scenario.load(None, {"users": 8, "think_time": "0 s", "keying_time": "0 s", **SHORT}, profile="t5220",
                       workload="tpcc")
    loose = run(scenario.load(None, {"users": 8, "think_time": "0 s", "keying_time": "0 s", **SHORT,
                                     "run.target_half_width": "50%"}, profile="t5220", workload="tpcc"))
    r = run(sc)
    assert r.tpm_half_width / r.tpm > 0.01   # 3 s are not enough for 1%
    line = report.summary(r).splitlines()
    said = [x for x in line if x.startswith("throughput:")][0]
    assert f"[stopped at run.max_time 3 s: ±{100 * r.tpm_half_width / r.tpm:.1f}%, not the 1% target]" in said
    assert loose.tpm_half_width / loose.tpm <= 0.5 and "stopped at" not in report.summary(loose)


def test_a_run_started_at_dbwrs_free_buffer_limit_says_so_with_the_backlog_in_minutes(ue10000):
    """UFS buffered at 100 MB: DBWR (8 writes over the file locks) falls behind, so the run starts at its
    free-buffer limit (sim/db/dbwr.py catch_up); the report gives how far behind, the buffers added and
    what they are in minutes of DBWR's measured writes. A run whose DBWR kept up says nothing of it."""
    r = run(scenario.load(None, {**UE10000_VXFS, "database.db_cache": "100 MB", "database.datafiles": 59,
                                 "database.datafile_size": "868 MB", "database.dbwr_max_writes": 8,
                                 "database.disk_asynch_io": False, "database.dbwr_io_slaves": 20,
                                 "os.filesystem": "ufs_buffered", "run.warmup": "20 s", "run.max_time": "2 s"},
                      profile="ue10000", workload="tpcc"))
    x = r.extra
    assert x["dbwr_backlog_skipped"] > 0 and x["dbwr_net_fill_per_s"] > 0
    assert r.simulated_time == pytest.approx(2 * 20 + r.measured_time)   # warmed up again at the limit
    minutes = x["dbwr_backlog_skipped"] / x["physical_writes_per_s"] / 60
    text = report.full(r)
    assert (f"DBWR: {x['dbwr_net_fill_per_s']:,.1f} buffers/s behind in the warm-up, so started at its free-buffer "
            f"limit\n  ({x['dbwr_backlog_skipped']:,} dirty buffers added, ~{minutes:.0f} min of its writes)") in text
    _, kept_up, _ = ue10000
    assert "dbwr_backlog_skipped" not in ue10000[0].extra and "\nDBWR:" not in kept_up
    assert "checkpoint_timeout_held" not in x and "Checkpoint:" not in text   # no timeout set
    held = run(scenario.load(None, {**UE10000_VXFS, "database.db_cache": "100 MB", "database.datafiles": 59,
                                    "database.datafile_size": "868 MB", "database.dbwr_max_writes": 8,
                                    "database.disk_asynch_io": False, "database.dbwr_io_slaves": 20,
                                    "database.log_checkpoint_timeout": "1800 s",
                                    "os.filesystem": "ufs_buffered", "run.warmup": "20 s", "run.max_time": "2 s"},
                         profile="ue10000", workload="tpcc"))
    assert held.extra["checkpoint_timeout_held"] is True
    assert "Checkpoint: log_checkpoint_timeout's writes held (DBWR is behind on the LRU" in report.full(held)
    assert held.to_frame().iloc[0]["extra.checkpoint_timeout_held"] == True   # noqa: E712 (a frame's bool)
    # a DBWR that keeps up (raw, async I/O) gets the timeout: the report says nothing of a hold
    released = run(scenario.load(None, {**UE10000_VXFS, "os.filesystem": "raw",
                                        "database.log_checkpoint_timeout": "1800 s"}, profile="ue10000", workload="tpcc"))
    assert released.extra["checkpoint_timeout_held"] is False and "Checkpoint:" not in report.full(released)
    assert released.to_frame().iloc[0]["extra.checkpoint_timeout_held"] == False   # noqa: E712


def _calibrate(disks: int, device: str):
    sc = scenario.load(None, {"num_physical_disks": disks, "database_size": "5 GB", "device": device,
                              "level_time": "0.2 s"}, profile="ue10000", workload="calibrate_io")
    r = run(sc)
    return r, report.full(r)


def test_calibrate_io_shows_its_levels_and_which_gave_max_iops():
    r, text = _calibrate(36, "data")
    rows = re.findall(r"^([\d,]+)\s+([\d,]+)\s+([\d.]+)\s*(max_iops|over max_latency)?\s*$", text, re.M)
    assert [int(n.replace(",", "")) for n, *_ in rows] == [lv["in_flight"] for lv in r.extra["level_table"]]
    best = [iops for _, iops, _, mark in rows if mark == "max_iops"]
    assert best == [f"{r.extra['iops']:,.0f}"] and r.extra["iops"] > 0


def test_calibrate_io_with_no_level_within_max_latency_says_why_max_iops_is_0():
    """One 7,200 rpm drive with 4 reads in flight answers in ~50 ms, over the 20 ms default."""
    r, text = _calibrate(4, "redo")
    assert r.extra["iops"] == 0.0
    assert "no level was within max_latency, so max_iops is 0" in text
    assert "max_iops\n" not in text and "over max_latency" in text
    # the summary says the same, with the job's reads instead of a level's figures (an 'actual_latency' of none)
    assert (f"I/O: max_iops 0: no load level was within max_latency 20 ms (the job's reads: "
            f"{r.extra['mean_iops']:,.0f} IOPS)") in text and "actual_latency" not in text


def test_on_a_buffered_file_system_each_physical_read_is_a_page_cache_hit_or_a_disk_read(ue10000):
    x = ue10000[0].extra
    assert x["os_cache_hits_per_s"] > 0 and x["disk_reads_per_s"] > 0
    assert x["os_cache_hits_per_s"] + x["disk_reads_per_s"] == pytest.approx(x["physical_reads_per_s"], rel=0.01)


def test_slob_reports_logical_reads_a_second_and_its_iops_apart():
    """SLOB's operation is a block read: its throughput is logical reads a second (LIOPS), its IOPS the
    share of them the cache missed (hit ratio cache/schema for uniform access); a schema the cache holds
    is SLOB's LIO test: reads at CPU speed and no I/O, not 'no transaction completed'."""
    out = {}
    for schema, cache in (("10 GB", "2 GB"), ("1 GB", "2 GB")):
        sets = {"sessions": 4, "schema_size": schema, "database.db_cache": cache, **SHORT}
        r = out[schema] = run(scenario.load(None, sets, profile="opteron-2way", workload="slob"))
        said = [x for x in report.summary(r).splitlines() if x.startswith("throughput:")][0]
        assert said.startswith(f"throughput: {r.throughput_per_s:,.0f} logical reads/s ± "
                               f"{r.tpm_half_width / 60:,.0f} (95% CI)") and "TPM" not in said
    missed = out["10 GB"].extra["iops"] / out["10 GB"].throughput_per_s
    assert missed == pytest.approx(1 - 2 / 10, abs=0.03)   # ~1,450 reads: 0.8 +- 0.011 (1 sd)
    cached = out["1 GB"]
    assert cached.extra["iops"] == 0 and cached.throughput_per_s > 50 * out["10 GB"].throughput_per_s
    assert cached.cpu_idle < 1.0      # four sessions on two CPUs, never waiting


def test_slob_with_no_read_completed_says_so_not_nan_nor_a_cached_schema():
    """A 2-ms window on the T5220's drives (a read takes ~5 ms): on the direct path no read completes. The
    report printed 'nan IOPS per DB CPU s' and 'no physical read (the buffer cache holds the schema)' for a
    path that has no buffer cache, and 'no transaction completed ... (or shorter think/keying times)'."""
    sets = {"sessions": 8, "schema_size": "1 GB", "read_path": "direct", "run.max_time": "2 ms", "run.batch": "1 ms",
            "run.warmup": "0 s", "run.min_batches": 2}
    r = run(scenario.load(None, sets, profile="t5220", workload="slob"))
    text = report.full(r)
    assert r.tpm == 0 and r.extra["iops"] == 0 and "nan" not in text and "holds the schema" not in text
    assert "throughput: no block read completed in the measured 0.002 s; a longer run.max_time gives a figure" in text
    (io,) = [x for x in text.splitlines() if x.startswith("I/O:")]
    assert "   — IOPS per DB CPU s   " in io and io.endswith("   no read completed")


def test_slob_direct_reads_that_never_wait_say_so_not_avg_nan():
    """One session with 64 direct-path slots on flash is CPU-bound: every read has completed when it takes it,
    so 'direct path read' has no wait to average (the report printed 'avg nan ms'): the reads waited 0 ms each, which
    a capacity limit on the figure meets (its NaN broke 'extra.avg_read_wait_ms <= 5 ms')."""
    sets = {"sessions": 1, "schema_size": "100 GB", "read_path": "direct", "direct_io_slots": 64,
            "run.max_time": "0.2 s", "run.warmup": "0.05 s", "run.batch": "0.02 s", "run.min_batches": 2}
    r = run(scenario.load(None, sets, profile="xeon-e5-2643v3-2s", workload="slob"))
    (io,) = [x for x in report.summary(r).splitlines() if x.startswith("I/O:")]
    assert r.extra["iops"] > 0 and io.endswith("direct path read: no waits (every read had completed when the "
                                               "session took it)") and "nan" not in report.full(r)
    assert r.extra["avg_read_wait_ms"] == 0.0 and "direct path read" not in {e["event"] for e in r.top_events}


# A hand-made result of every section, and its text in full: each figure in its place, unit and rounding
# (37.5% of strands busy prints 38, 8,794.5 s prints 2:26:34.50, 140,620 buffers at 234.4 writes/s ~10 min).
def _steady_result() -> Result:
    return Result(
        label="demo", profile="t5220", workload="tpcc", inputs={"params.users": 16, "run.target_half_width": 0.01},
        tpm=123456.0, throughput_per_s=2057.6, tpm_half_width=2469.1, cpu_idle=62.5, cpu_usr=30.0, cpu_sys=7.5,
        run_queue=0.25, core_utilisation=[50.0, 30.0], strand_utilisation=[100.0, 50.0, 25.0, 0.0, 75.0, 25.0, 25.0, 0.0],
        top_events=[{"event": "DB CPU", "waits": None, "time_s": 30.0, "avg_ms": None, "pct_call_time": 60.0},
                    {"event": "log file sync", "waits": 10000, "time_s": 20.0, "avg_ms": 2.0, "pct_call_time": 40.0}]
        + [{"event": f"minor {i}", "waits": 1, "time_s": 0.0, "avg_ms": 0.0, "pct_call_time": 0.0} for i in range(4)],
        response={"new_order": {"count": 1000, "mean": 0.0123, "mean_ci95": 0.00042, "p50": 0.011, "p90": 0.02,
                                "p99": 0.031}},
        devices={"array": {"iops": 1234.4, "reads_per_s": 1000.0, "writes_per_s": 234.4, "mb_per_s": 9.64, "util_pct": 41.6, "avg_service_ms": 0.337,
                           "avg_response_ms": 1.254},
                 "internal": {"iops": 0.0, "reads_per_s": 0.0, "writes_per_s": 0.0, "mb_per_s": 0.0, "util_pct": 0.0,
                              "avg_service_ms": 0.0, "avg_response_ms": 0.0}},
        extra={"new_order_tpm": 55555.4, "buffer_hit_ratio": 0.98765, "physical_reads_per_s": 1000.04, "physical_writes_per_s": 234.36,
               "commits_per_log_write": 1.5, "dbwr_backlog_skipped": 140620, "dbwr_net_fill_per_s": 12.34,
               "memory": {"ram_mb": 65536.0, "sga_buffer_cache_mb": 1024.4, "working_set_paged_out_pct": 1.25},
               "paging": {"page_ins_per_s": 123.4, "swap_in_kb_per_s": 493.6, "swap_out_kb_per_s": 493.6,
                          "swap_reads_per_s": 15.44},
               "cpi": 4.5, "cpi_issue": 1.0, "cpi_data_stall": 3.0, "cpi_other": 0.5, "memory_latency_ns": 105.2,
               "memory_latency_cycles": 147.3, "memory_bandwidth_util_pct": 12.34, "involuntary_switches_per_s": 1234.5},
        seed=1, simulated_time=12.0, measured_time=10.0, wall_time=1.5, events=123456)


def _batch_result() -> Result:
    return Result(
        label="job", profile="t5220", workload="rman", inputs={"params.channels": 25}, status="timeout",
        message="not finished", elapsed=8794.5, cpu_idle=84.0, cpu_usr=16.0, cpu_sys=0.0, run_queue=0.0,
        extra={"dop": 32, "px_servers_started": 64, "px_peak_busy": 60, "px_queued": 1, "px_downgraded": 0,
               "channels_used": 25, "pieces": 16384, "largest_channel_mb": 1311.7,
               "level_table": [{"in_flight": 2, "iops": 400.0, "latency_ms": 5.0, "db_cpu_per_s": 0.1},
                               {"in_flight": 8, "iops": 900.0, "latency_ms": 9.0, "db_cpu_per_s": 0.3},
                               {"in_flight": 32, "iops": 1000.0, "latency_ms": 31.0, "db_cpu_per_s": 0.35}],
               "iops": 900.0, "max_latency_ms": 20.0, "actual_latency_ms": 9.0, "db_cpu_per_s": 0.3,
               "iops_per_db_cpu": 3000.0, "iops_per_core": 112.5, "mean_iops": 700.0, "file_lock_write_held_pct": 12.5, "file_lock_readers_waiting": 0.25,
               "file_lock_read_wait_ms": 1.5, "file_lock_write_wait_ms": 0.75},
        seed=2, simulated_time=8794.5, measured_time=8794.5, wall_time=3.0, events=1000)


STEADY_TEXT = """\
== demo  (t5220, tpcc, seed 1)
settings: users 16
throughput: 123,456 TPM (all types) ± 2,469 (95% CI)   (2,057.6 tx/s)   tpmC (New-Order) 55,555   [stopped at run.max_time 10 s: ±2.0%, not the 1% target]
cpu (vmstat): r 0.2  us 30  sy 8  id 62
pipeline utilisation per core (corestat) mean 40% (min 30%, max 50%);  mpstat: strands busy mean 38% (min 0%, max 100%), icsw 1,234/s
busiest: array %b 42%   pipelines (corestat) 40%   strands (mpstat) 38%   memory bandwidth 12%
simulated 12.0 s (measured 10.0 s) in 1.50 s wall, 123,456 events

Response time (ms)
transaction  count   mean  ± 95%    p50    p90    p99
-----------  -----  -----  -----  -----  -----  -----
new_order    1,000  12.30   0.42  11.00  20.00  31.00

Top 5 timed events (AWR-like; % of DB CPU + wait time, as AWR's % Total Call Time)
event           waits  time (s)  avg wait (ms)  % call time
-------------  ------  --------  -------------  -----------
DB CPU                     30.0                        60.0
log file sync  10,000      20.0           2.00         40.0
minor 0             1       0.0           0.00          0.0
minor 1             1       0.0           0.00          0.0
minor 2             1       0.0           0.00          0.0

Devices (iostat-like)
device   IOPS    r/s  w/s  MB/s  %b  svc_t (ms)  wait+svc (ms)
------  -----  -----  ---  ----  --  ----------  -------------
array   1,234  1,000  234   9.6  42        0.34           1.25

Load profile: buffer hit 98.77%   physical reads/s 1,000.0   physical writes/s 234.4
  commits per log write 1.50
DBWR: 12.3 buffers/s behind in the warm-up, so started at its free-buffer limit
  (140,620 dirty buffers added, ~10 min of its writes)

Memory (MB): ram 65,536   sga buffer cache 1,024   working set paged out 1.2%
Paging (vmstat): page-ins/s 123   si 494 KB/s   so 494 KB/s   swap reads/s 15.4
Memory stalls: latency 105 ns (147 cycles)   bandwidth used 12.3%
  CPI 4.50 = issue 1.00 + data stalls 3.00 + other 0.50

Pipeline utilisation (corestat)
core    % pipeline busy
------  ---------------
core 0               50
core 1               30
"""

BATCH_TEXT = """\
== job  (t5220, rman, seed 2)
settings: channels 25
outcome: TIMEOUT  not finished
elapsed: 2:26:34.50  (8,794.5 s)
I/O: max_iops 900   actual_latency 9.000 ms   at that level 3,000 IOPS per DB CPU s, 112 IOPS per core, DB CPU 0.3 s/s
cpu (vmstat): r 0.0  us 16  sy 0  id 84
simulated 8,794.5 s (measured 8,794.5 s) in 3.00 s wall, 1,000 events

CALIBRATE_IO load levels (max_latency 20 ms)
reads in flight   IOPS  latency (ms)
---------------  -----  ------------  ----------------
2                  400          5.00
8                  900          9.00          max_iops
32               1,000         31.00  over max_latency

File lock (inode rwlock): write-held 12.5% of the time   readers waiting 0.25   read wait 1.50 ms
  write wait 0.75 ms

Parallel: DOP 32   PX servers started 64   peak busy 60   statements queued 1   downgraded 0
  RMAN channels 25   backup pieces 16,384   largest channel 1,312 MB
"""


@pytest.mark.parametrize("make, expected", [(_steady_result, STEADY_TEXT), (_batch_result, BATCH_TEXT)])
def test_the_full_report_of_a_known_result_reads_exactly_so(make, expected):
    said = [line.rstrip() for line in report.full(make()).splitlines()]
    assert said == expected.splitlines()


def test_a_mirrored_device_reports_drive_operations_that_make_its_busy_share():
    """ASM normal redundancy writes every block to two drives: the device's I/Os are fewer than its drive
    operations, and it is the drive operations times their service time that make %b (utilisation law)."""
    sc = scenario.load(None, {"users": 64, "think_time": "0 s", "keying_time": "0 s", "database.db_cache": "100 MB",
                              "run.warmup": "1 s", "run.batch": "0.5 s", "run.min_batches": "2", "run.max_time": "2 s"},
                       profile="t5220", workload="tpcc")
    r = run(sc)
    d = r.devices["array"]
    drives = sc.profile.storage.disk_groups["array"].count
    assert d["drive_ops_per_s"] > 1.2 * d["iops"]                       # mirrored writes
    assert d["drive_ops_per_s"] * d["avg_service_ms"] / 1000.0 / drives == pytest.approx(d["util_pct"] / 100.0, rel=0.05)
    assert f"array: {report.figure(d['iops'])} I/Os/s to the device are {report.figure(d['drive_ops_per_s'])} drive " \
           "operations/s" in report.full(r)


def test_a_light_device_s_drive_operations_note_shows_the_ratio_it_is_about():
    """Rounded to whole numbers, 0.6 I/Os/s as 1.2 drive operations/s read '1 I/Os/s ... are 1 drive operations/s'
    (a ue10000 at 12 users): the note exists because the two differ, so it shows them to three digits."""
    r = _steady_result()
    r.devices = {"data": {"iops": 0.6, "reads_per_s": 0.0, "writes_per_s": 0.6, "mb_per_s": 0.0, "util_pct": 0.0,
                          "avg_service_ms": 3.4, "avg_response_ms": 3.67, "drive_ops_per_s": 1.2}}
    assert "  data: 0.6 I/Os/s to the device are 1.2 drive operations/s;" in report.full(r)


def test_the_write_back_cache_note_is_for_devices_whose_writes_it_took():
    r = _steady_result()
    r.devices = {"array": {"iops": 100.0, "reads_per_s": 80.0, "writes_per_s": 20.0, "mb_per_s": 1.0, "util_pct": 10.0, "avg_service_ms": 6.0,
                           "avg_response_ms": 3.0, "drive_ops_per_s": 100.0, "write_cache": True},
                 "redo": {"iops": 50.0, "reads_per_s": 0.0, "writes_per_s": 50.0, "mb_per_s": 1.0, "util_pct": 5.0, "avg_service_ms": 1.0,
                          "avg_response_ms": 1.0, "drive_ops_per_s": 50.0}}
    text = report.full(r)
    assert "array: writes are acknowledged by the controller's write-back cache" in text
    assert "redo: writes are acknowledged" not in text


def test_the_figures_of_every_event_type_and_device_are_those_limits_and_metrics_are_checked_against(ue10000):
    """capacity --limit and sweep --metric refuse wait.NAME.STAT, rt.NAME.STAT and device.NAME.STAT with a STAT
    not in result.STATS before any run: a figure a run gives that it lacks would be refused, one it lists that
    no run gives would be read as never waited on (met) or fail after the first run."""
    from sim.result import STATS

    r, _, row = ue10000
    given: dict[str, set] = {p: set() for p in STATS}
    for k in row.index:
        prefix = k.partition(".")[0]
        if prefix in STATS:
            given[prefix].add(k.rpartition(".")[2])
    assert r.top_events and r.response and r.devices
    assert given == {p: set(stats) for p, stats in STATS.items()}


def test_a_type_without_an_interval_is_explained_beside_one_with_an_interval():
    """New-Order's mean has an interval, Payment's has none ('—'): the table still says why it has none."""
    r = _steady_result()
    r.response = {"new_order": {**r.response["new_order"]},
                  "payment": {**r.response["new_order"], "mean_ci95": float("inf")}}
    text = report.full(r)
    assert re.search(r"^new_order\s+[\d,]+\s+12\.30\s+0\.42\s", text, re.M)
    assert re.search(r"^payment\s+[\d,]+\s+12\.30\s+—\s", text, re.M) and "—: no interval for the mean" in text


def test_a_latchs_line_gives_its_gets_miss_share_and_sleeps():
    """AWR's Latch Activity: gets/s, the share of gets that found the latch held, and the sleeps."""
    r = _steady_result()
    r.extra.update({"latch.cache buffers chains.gets_per_s": 123456.7, "latch.cache buffers chains.miss_pct": 1.234,
                    "latch.cache buffers chains.sleeps": 5678})
    assert "Latch cache buffers chains: gets/s 123,457   miss 1.23%   sleeps 5,678" in report.full(r)


def test_a_mean_response_time_shows_its_interval_or_says_why_it_has_none(ue10000):
    """The response table's `± 95%` column: the interval of the mean from batch means (RatioBatchMeans), or '—'
    and why, where the run has too few batches to judge whether they are correlated (ue10000's: 6)."""
    r, text, row = ue10000
    assert r.extra["batches"] < 20 and all(v["mean_ci95"] == float("inf") for v in r.response.values())
    assert re.search(r"^new_order\s+[\d,]+\s+[\d.]+\s+—\s", text, re.M) and "—: no interval for the mean" in text
    many = run(scenario.load(None, {"users": 8, "think_time": "0 s", "keying_time": "0 s", "run.warmup": "0.5 s",
                                    "run.batch": "0.1 s", "run.min_batches": "40", "run.max_time": "4 s"},
                             profile="t5220", workload="tpcc"))
    no = many.response["new_order"]
    assert 0.0 < no["mean_ci95"] < 0.1 * no["mean"], no
    line = re.search(r"^new_order\s+[\d,]+\s+([\d.]+)\s+([\d.]+)\s", report.full(many), re.M)
    assert line and line.groups() == (f"{1000 * no['mean']:.2f}", f"{1000 * no['mean_ci95']:.2f}")
    assert many.flat()["rt.new_order.mean_ci95"] == no["mean_ci95"]
    # a result saved before the interval (JSON without mean_ci95) shows no column, not '—' with a reason it lacks
    for v in many.response.values():
        del v["mean_ci95"]
    assert "± 95%" not in report.full(many) and "no interval" not in report.full(many)


def test_a_tp_monitors_line_splits_the_response_into_its_queue_wait():
    """Behind a TP monitor: sessions busy of how many, requests waiting (mean, and at the end: a queue still
    filling shows a larger end than mean) and the wait each response includes; none for dedicated servers."""
    r = _steady_result()
    assert "TP monitor" not in report.full(r)
    r.extra["tp_monitor"] = {"sessions": 256, "sessions_busy": 250.04, "queued": 1234.56, "queue_wait_ms": 406.123,
                             "queued_at_end": 1310}
    assert ("TP monitor: sessions busy 250.0 of 256   requests queued 1,234.6 (at the end 1,310)\n"
            "  queue wait 406.12 ms, in every response time") in report.full(r)


def test_a_tp_monitor_with_no_request_taken_up_in_the_window_prints_no_nan_queue_wait():
    """One terminal behind one session, 1.24-s transactions: the one response measured was taken up in the
    warm-up, so no queue wait falls in the window (NaN; the report printed 'queue wait nan ms')."""
    sets = {"users": 1, "sessions": 1, "think_time": "500 ms", "keying_time": "0 s", "database.db_cache": "32 KB",
            "database.disk_asynch_io": False, "database.log_checkpoint_timeout": "1 s",
            "run.max_time": "1 s", "run.warmup": "0.3 s", "run.batch": "0.2 s", "run.min_batches": 2}
    r = run(scenario.load(None, sets, profile="opteron-2way", workload="tpcc"))
    assert r.response["new_order"]["count"] == 1 and math.isnan(r.extra["tp_monitor"]["queue_wait_ms"])
    text = report.full(r)
    assert "  queue wait — (no request was taken up by a session in the measured time)" in text and "nan" not in text


def test_working_sets_on_swap_that_no_process_paged_in_are_said_to_cost_nothing():
    """A batch job's processes run without idling, and only a process that wakes after idling pages in (sim/os/vm.py):
    its figures carry no paging cost though the account has working sets on swap, and the report says so."""
    r = _batch_result()
    r.extra["memory"] = {"ram_mb": 1024.0, "overcommit_mb": 300.0, "working_set_paged_out_pct": 23.6}
    assert "23.6% of every working set is on swap, yet no process faulted a page back" in report.full(r)
    r.extra["paging"] = {"page_ins_per_s": 1.0, "swap_in_kb_per_s": 4.0, "swap_out_kb_per_s": 4.0,
                         "swap_reads_per_s": 1.0}
    assert "yet no process" not in report.full(r) and "page-ins/s 1 " in report.full(r)


def test_busiest_ranks_the_shared_resources_and_counts_pipelines_only_on_cmt_chips():
    """Strands (and in a batch job those nearly full, far above the mean: its processes each on a strand), CMT pipelines (4+ strands a core:
    corestat; elsewhere the per-core figure is cycles issuing, no capacity), memory bandwidth, LGWR, TP monitor sessions and each device's %b and controller, busiest first,
    under 0.5% left out."""
    def result(strands_per_core):
        return Result("x", "p", "tpcc", {}, strand_utilisation=[80.0] * 8,
                      core_utilisation=[90.0] * (8 // strands_per_core),
                      extra={"memory_bandwidth_util_pct": 30.0, "lgwr_busy_pct": 99.0,
                             "tp_monitor": {"sessions": 64, "sessions_busy": 16.0}},
                      devices={"array": {"util_pct": 12.0, "controller_util_pct": 95.0},
                               "redo": {"util_pct": 0.2, "controller_util_pct": 0.0}})
    assert result(4).busiest() == [("LGWR", 99.0), ("array controller", 95.0), ("pipelines (corestat)", 90.0),
                                   ("strands (mpstat)", 80.0), ("memory bandwidth", 30.0),
                                   ("TP monitor sessions", 25.0), ("array %b", 12.0)]
    assert "pipelines (corestat)" not in dict(result(1).busiest())
    assert "pipelines (corestat)" not in dict(result(2).busiest())   # two hyper-threads a core: not CMT
    def job(strands, elapsed=60.0):
        return Result("x", "p", "rman", {}, elapsed=elapsed, strand_utilisation=strands)
    # a batch job: mean 28, one strand nearly full and far above: one process always on a strand
    assert job([100.0, 10.0, 0.0, 2.0]).busiest() == [("1 strand full", 100.0), ("strands (mpstat)", 28.0)]
    # three channels each on a strand (mean 98 against 36.75 for the eight): its parallelism bounds it
    assert job([100.0, 96.0, 98.0, 0.0, 0.0, 0.0, 0.0, 0.0]).busiest()[0] == ("3 strands full", 98.0)
    assert job([45.0, 25.0, 25.0, 25.0]).busiest() == [("strands (mpstat)", 30.0)]    # none nearly full
    assert job([95.0, 95.0, 95.0, 75.0]).busiest() == [("strands (mpstat)", 90.0)]    # 95 is within 20 of 90
    # the strand the dispatcher fills first is far above a light load's mean, but not full: not bound by processes
    assert [k for k, _ in job([64.0] + [0.0] * 127).busiest()] == ["strands (mpstat)"]
    # under users (no elapsed: a steady run) that strand is busy whenever anyone runs, which says nothing of
    # serial work (T5220, 32 users that never think: 97% against a 48% mean)
    assert [k for k, _ in job([97.0] + [47.2] * 63, elapsed=None).busiest()] == ["strands (mpstat)"]
    assert report.busiest(result(4), shown=2) == "busiest: LGWR 99%   array controller 95%"
    # a row's busiest is the first of the ranking, by name and figure; none at all: an empty name and 0
    assert (result(4).flat()["busiest"], result(4).flat()["busiest_pct"]) == ("LGWR", 99.0)
    assert (Result("x", "p", "tpcc", {}).flat()["busiest"], Result("x", "p", "tpcc", {}).flat()["busiest_pct"]) == ("", 0.0)
    # five shown unless told: LGWR, the controller, pipelines, strands, memory bandwidth (not TP monitor, %b),
    # wrapped before 100 columns
    assert report.busiest(result(4)) == ("busiest: LGWR 99%   array controller 95%   pipelines (corestat) 90%   "
                                         "strands (mpstat) 80%\n  memory bandwidth 30%")


def test_busiest_full_strands_and_cut_off_at_their_bounds():
    """A batch job's full strands are named when both hold: a strand is full at SERIAL_BUSY (90%) or more, and the
    full ones' mean is more than SERIAL_SKEW (20) points above the mean of all; each bound taken exactly. A resource
    at 0.5% is shown, below it is not. A TP monitor of no sessions, or a device saved without a controller figure,
    adds nothing (no division by zero, no missing key)."""
    def job(strands):
        return Result("x", "p", "rman", {}, elapsed=60.0, strand_utilisation=strands)
    assert job([90.0, 10.0, 10.0, 10.0]).busiest() == [("1 strand full", 90.0), ("strands (mpstat)", 30.0)]  # 90: full
    assert job([85.0, 5.0, 5.0, 5.0]).busiest() == [("strands (mpstat)", 25.0)]         # 60 above, but under 90
    assert job([100.0, 100.0, 100.0, 20.0]).busiest() == [("strands (mpstat)", 80.0)]   # full at 100: exactly 20 above
    assert job([95.0, 75.0, 75.0, 75.0]).busiest() == [("strands (mpstat)", 80.0)]      # 15 above
    cut = Result("x", "p", "tpcc", {}, extra={"tp_monitor": {"sessions": 0, "sessions_busy": 0.0}},
                 devices={"a": {"util_pct": 0.5, "controller_util_pct": 0.49}, "b": {"util_pct": 3.0}})
    assert cut.busiest() == [("b %b", 3.0), ("a %b", 0.5)]


def test_paging_bound_needs_no_transaction_and_working_sets_on_swap():
    """Paging-bound: a steady run that completed nothing (tpm 0, not a batch job's None) while some of every working
    set was on swap (more than 0%)."""
    def r(tpm, paged, elapsed=None):
        return Result("x", "p", "tpcc", {}, tpm=tpm, elapsed=elapsed,
                      extra={"memory": {"working_set_paged_out_pct": paged}})
    assert r(0.0, 16.5).paging_bound
    assert not r(0.0, 0.0).paging_bound                        # nothing on swap: a short run, not thrashing
    assert not r(None, 23.6, elapsed=100.0).paging_bound       # a batch job has no tpm
    assert not r(10.0, 16.5).paging_bound
    assert not Result("x", "p", "tpcc", {}, tpm=0.0).paging_bound   # no memory figures


def test_a_controller_busier_than_its_drives_from_half_busy_is_noted_and_no_busiest_line_when_all_idle():
    """The device notes name a controller at 50% or more and busier than its drives (strictly), for a device that
    did I/O: 'array' at exactly 50% against 41.6% is named; 'b' at 60% against drives at 60% is not (no busier);
    'internal' (no I/O) is not, whatever its figure. With every shared resource under 0.5% the summary has no
    busiest line, nor an empty line in its place."""
    import dataclasses
    r = _steady_result()
    devices = {"array": {**r.devices["array"], "controller_util_pct": 50.0},
               "b": {**r.devices["array"], "util_pct": 60.0, "controller_util_pct": 60.0},
               "internal": {**r.devices["internal"], "controller_util_pct": 80.0}}
    text = report.full(dataclasses.replace(r, devices=devices))
    assert "  array: its busiest controller is 50% busy, more than the drives" in text
    assert "  b: its busiest controller" not in text and "  internal: its busiest controller" not in text
    idle = dataclasses.replace(r, strand_utilisation=[0.0] * 8, core_utilisation=[0.0, 0.0],
                               devices={n: {**d, "util_pct": 0.2} for n, d in r.devices.items()},
                               extra={k: v for k, v in r.extra.items() if k != "memory_bandwidth_util_pct"})
    assert idle.busiest() == []
    summary = report.summary(idle)
    assert "busiest" not in summary and "\n\n" not in summary


def test_lgwr_full_behind_other_io_on_its_log_device_is_noted():
    """LGWR at 90% or more, on a device at least half busy whose I/Os are a tenth or more not LGWR's: its writes
    queue behind them (T5220, 64 users, 100 MB cache: LGWR 100% on the array, 93% busy with 1,930 other I/Os/s;
    log file sync 61 ms, 9 ms with the log on the internal drives). Any bound short of it: no note."""
    import dataclasses
    r = _steady_result()
    array = {**r.devices["array"], "util_pct": 93.0}   # 1,234.4 I/Os/s

    def note(lgwr=100.0, device="array", util=93.0, log_writes=234.4):
        x = {**r.extra, "lgwr_busy_pct": lgwr, "log_writes_per_s": log_writes, "redo_device": device}
        devices = {**r.devices, "array": {**array, "util_pct": util}}
        return [line for line in report.full(dataclasses.replace(r, extra=x, devices=devices)).splitlines()
                if "writing the log here" in line]
    assert note() == ["  array: LGWR is 100% busy writing the log here, behind 1,000 other I/Os/s (93% busy): a log "
                      "device of its own would take that queue off every commit"]
    assert note(lgwr=89.9) == [] and note(util=49.9) == [] and note(device="internal") == []
    assert note(log_writes=1234.4 - 123.0) == []   # other I/O under a tenth of the device's: the log is its own
    assert len(note(lgwr=90.0, util=50.0, log_writes=1234.4 - 123.44)) == 1   # each bound taken exactly


def test_a_figure_has_thousands_separated_from_100_either_side_of_zero():
    """figure(): whole numbers with commas from |x| = 100 up, negative ones too (-1,234, not -1.23e+03, which
    three significant digits would print), and three significant digits below (99.94 -> 99.9, -0.5 -> -0.5)."""
    assert [report.figure(x) for x in (1234.5, -1234.5, 100.0, -100.0, 99.94, -0.5)] == \
        ["1,234", "-1,234", "100", "-100", "99.9", "-0.5"]


def test_the_settings_line_has_hardware_what_ifs_but_not_the_seed_the_title_gives():
    """The settings off their defaults: a hardware what-if (inputs under hardware., as given) is one of them; the
    seed is not, whatever it is, since the title line ends 'seed N' already."""
    r = _steady_result()
    r.inputs = {**r.inputs, "hardware.memory.size": "16 GB", "run.seed": 7}
    r.seed = 7
    title, settings = report.summary(r).splitlines()[:2]
    assert title.endswith("seed 7)") and settings == "settings: hardware.memory.size 16 GB   users 16"


def test_a_throughput_interval_is_printed_only_when_finite_and_a_target_met_exactly_is_met():
    """One batch gives an infinite half-width: no '± inf' (a SLOB run's logical reads neither); a half-width of
    exactly the target (1,000 of 100,000 TPM against 1%) met it: no 'stopped at run.max_time' note."""
    import dataclasses
    r = dataclasses.replace(_steady_result(), tpm=100000.0, tpm_half_width=1000.0)
    line = next(x for x in report.summary(r).splitlines() if x.startswith("throughput:"))
    assert "± 1,000 (95% CI)" in line and "stopped" not in line
    one = dataclasses.replace(r, tpm_half_width=math.inf)
    line = next(x for x in report.summary(one).splitlines() if x.startswith("throughput:"))
    assert "±" not in line and line.endswith("[stopped at run.max_time 10 s after one batch: no interval; run longer "
                                             "for one]")
    slob = dataclasses.replace(one, extra={**one.extra, "iops_per_db_cpu": 1.0, "iops": 0.0,
                                                             "iops_per_core": 0.0, "db_cpu_per_s": 1.0})
    line = next(x for x in report.summary(slob).splitlines() if x.startswith("throughput:"))
    assert line.startswith("throughput: 2,058 logical reads/s   [stopped") and "±" not in line


def test_an_out_of_memory_result_prints_its_outcome_and_nothing_else():
    """Out of memory is an outcome with no figure measured: the summary (and the full report) is the title, the
    settings and the outcome, whatever figures the Result holds (none is the run's)."""
    import dataclasses
    r = dataclasses.replace(_steady_result(), status="out_of_memory", message="SGA exceeds RAM")
    assert report.summary(r).splitlines() == ["== demo  (t5220, tpcc, seed 1)", "settings: users 16",
                                              "outcome: OUT OF MEMORY  SGA exceeds RAM"] and report.full(r) == report.summary(r)


def test_only_a_window_the_law_found_not_steady_is_called_so():
    """The response time law's verdict None (one batch: no interval to judge by) is no verdict: only False prints
    NOT STEADY (True, None: nothing)."""
    import dataclasses
    r = _steady_result()

    def text(steady):
        law = {"users": 16, "think_keying_s": 0.0, "response_ms": 1.0, "law_response_ms": 7.8, "steady": steady}
        return report.summary(dataclasses.replace(r, extra={**r.extra, "response_time_law": law}))
    assert "NOT STEADY" in text(False) and "NOT STEADY" not in text(None) and "NOT STEADY" not in text(True)


def test_the_log_device_note_counts_other_io_of_exactly_a_tenth():
    """Other I/O of exactly a tenth of the device's (100 of 1,000 I/Os/s, exact in binary) is enough for the note
    (the bound is 'a tenth or more')."""
    import dataclasses
    r = _steady_result()
    x = {**r.extra, "lgwr_busy_pct": 95.0, "log_writes_per_s": 900.0, "redo_device": "array"}
    devices = {"array": {**r.devices["array"], "iops": 1000.0, "util_pct": 60.0}}
    assert "  array: LGWR is 95% busy writing the log here, behind 100 other I/Os/s (60% busy)" in \
        report.full(dataclasses.replace(r, extra=x, devices=devices))


def test_a_device_note_is_for_drive_operations_off_its_ios_by_over_1_percent_either_way_and_for_devices_with_io():
    """The drive-operations note: 105 drive operations/s for 100 I/Os/s (5% more: mirrored writes of a few) and 50
    for 100 (fewer: a write-back cache holding writes not yet destaged) are noted, 100.5 for 100 (0.5%) is not.
    A device that did no I/O in the window has no note at all, though its cache took writes before it (another
    device's I/O prints the table)."""
    def notes(drive_ops, iops=100.0, cache=False):
        r = _steady_result()
        r.devices = {"array": {**r.devices["array"], "iops": iops, "drive_ops_per_s": drive_ops, "write_cache": cache},
                     "b": {**r.devices["array"], "iops": 10.0, "drive_ops_per_s": 10.0}}   # (a device table to note)
        return [line for line in report.full(r).splitlines() if line.startswith("  array: ")]
    assert notes(105.0) == ["  array: 100 I/Os/s to the device are 105 drive operations/s; svc_t and %b are the "
                            "drives', wait+svc the device's I/Os'"]
    assert len(notes(50.0)) == 1 and notes(100.5) == [] and notes(0.0, iops=0.0, cache=True) == []


def test_a_line_of_items_wraps_only_past_100_columns_counting_the_gap():
    """_line: 'title: a 1   b ccc...' of exactly 100 columns (6 + the 3-blank gap + 'b ' + 89) stays one line;
    one more column wraps the item to the next line, indented by two, and so does the gap's (90 c's fit only
    without counting the 3 blanks)."""
    first = "t: a 1"
    assert report._line("t", [("a", "1"), ("b", "c" * 89)]) == first + "   b " + "c" * 89
    assert len(first + "   b " + "c" * 89) == 100
    assert report._line("t", [("a", "1"), ("b", "c" * 90)]) == first + "\n  b " + "c" * 90


def test_the_per_core_table_is_for_up_to_16_cores():
    """The pipeline table has a row a core up to 16 (a T5440's 32 cores would be a page of it: the summary's mean,
    min and max say enough)."""
    import dataclasses
    r = _steady_result()

    def rows(cores):
        text = report.full(dataclasses.replace(r, core_utilisation=[10.0] * cores))
        return len(re.findall(r"^core \d+ ", text, re.M))
    assert (rows(16), rows(17)) == (16, 0)


def test_an_elapsed_time_that_rounds_up_to_the_minute_carries_into_it():
    """elapsed prints h:mm:ss.ss: 119.996 s is 0:02:00.00, not 0:01:60.00 (the seconds rounded to hundredths
    after the minutes were taken off), and 3,599.999 s is 1:00:00.00; 59.994 s stays 0:00:59.99."""
    import dataclasses

    def elapsed(s):
        text = report.summary(dataclasses.replace(_batch_result(), elapsed=s))
        return next(line for line in text.splitlines() if line.startswith("elapsed: ")).split()[1]
    assert [elapsed(s) for s in (119.996, 3599.999, 59.994, 8794.5)] == ["0:02:00.00", "1:00:00.00", "0:00:59.99",
                                                                         "2:26:34.50"]


def test_a_level_over_max_latency_is_not_marked_max_iops_though_its_iops_equal_it():
    """CALIBRATE_IO's max_iops is the best level within max_latency: a level over it that happened to give the same
    IOPS (900 at 25 ms against 20) is marked over max_latency, not max_iops; one exactly at 20 ms is within."""
    r = _batch_result()
    r.extra["level_table"] = [{"in_flight": 8, "iops": 900.0, "latency_ms": 20.0},
                              {"in_flight": 16, "iops": 900.0, "latency_ms": 25.0}]
    rows = [line.split() for line in report.full(r).splitlines() if line.startswith(("8 ", "16 "))]
    assert rows == [["8", "900", "20.00", "max_iops"], ["16", "900", "25.00", "over", "max_latency"]]


def test_rman_compressors_are_shown_only_when_some_compressed():
    """The Parallel line's 'compressing at once (mean)' is for a backup that compressed: a mean of 0 (an
    uncompressed backup's, reported all the same) adds nothing, 2.5 is shown to a tenth."""
    def parallel(mean):
        r = _batch_result()
        r.extra["compressors_mean"] = mean
        return report.full(r).split("Parallel: ")[1]
    assert "compressing" not in parallel(0.0) and parallel(2.5).endswith("\n  compressing at once (mean) 2.5")


def test_a_cpi_remainder_rounding_to_zero_prints_as_zero_not_minus_zero():
    """CPI's 'other' is what is left of the CPI after issue and data stalls: a remainder of -0.001 (float error) is
    0.00 to two places, printed '+ other 0.00', never '+ other -0.00'."""
    r = _steady_result()
    r.extra.update(cpi=4.0, cpi_issue=1.0, cpi_data_stall=3.001, cpi_other=-0.001)
    assert "CPI 4.00 = issue 1.00 + data stalls 3.00 + other 0.00" in report.full(r) and "-0.00" not in report.full(r)


def test_a_devices_io_rates_below_100_per_s_keep_a_decimal_so_reads_and_writes_add_up():
    """12.4 I/Os/s of which 3.6 reads and 8.8 writes printed '12  4  9' (RMAN's one channel): three significant digits
    below 100/s, as the report's figures have."""
    r = _steady_result()
    r.devices = {"array": {**r.devices["array"], "iops": 12.4, "reads_per_s": 3.6, "writes_per_s": 8.8}}
    (line,) = [x for x in report.full(r).splitlines() if x.startswith("array ")]
    assert line.split()[1:4] == ["12.4", "3.6", "8.8"]
