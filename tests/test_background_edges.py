"""Edges of a background job beside a steady workload (scenario background:) that tests/test_background.py leaves
open, found by a mutation round on its code: each test here fails on a change to it that the others let pass."""

from __future__ import annotations

import dataclasses
import math
import threading
from types import SimpleNamespace

import pytest

import sim.run
from sim import report, scenario
from sim.config import ConfigError
from sim.result import Result
from sim.run import run
from sim.system import System
from sim.timeline import plot

# 4 users that never think, in batches of 1/8 s (exact in binary): the window alone ends at 1.25 s, half into the
# 0.5-s timeline's third interval; CALIBRATE_IO then runs its load levels of 0.3 s each beside them (~1.1 s)
TPCC = {"users": "4", "think_time": "0 s", "keying_time": "0 s", "run.max_time": "1.25 s", "run.batch": "0.125 s",
        "run.interval": "0.5 s"}
CALIBRATE = {"background.workload": "calibrate_io", "background.params.database_size": "10 GB",
             "background.params.level_time": "0.3 s", "background.params.num_physical_disks": 4}


def _load(settings: dict, workload: str = "tpcc"):
    return scenario.load(None, settings, profile="t5220", workload=workload)


def _run_keeping_the_system(sc, progress=None):
    """run(sc), and the System it ran on (for the instance's counts)."""
    kept = []

    class Kept(System):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            kept.append(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sim.run, "System", Kept)
        r = run(sc, progress)
    return r, kept[0]


@pytest.fixture(scope="module")
def plain():
    return run(_load(TPCC))


@pytest.fixture(scope="module")
def calibrate():
    """The run beside CALIBRATE_IO, its System, and what it reported as its progress."""
    progress = []
    r, system = _run_keeping_the_system(_load({**TPCC, **CALIBRATE}), progress.append)
    assert r.status == "ok" and r.extra["background"]["started_s"] == 1.25
    return r, system, progress


def test_the_figures_alone_are_the_plain_runs(plain, calibrate):
    """What the summary compares with: the plain run's throughput and CPU, measured over the same 1.25 s."""
    x = calibrate[0].extra
    assert x["tpm_alone"] == plain.tpm and x["alone_measured_s"] == plain.measured_time == 1.25
    assert x["cpu_busy_alone_pct"] == pytest.approx(100.0 - plain.cpu_idle, rel=1e-12)


def test_the_timeline_closes_an_interval_at_the_jobs_start_and_counts_the_next_from_there(calibrate):
    """The window alone ends at 1.25 s, mid-interval: a part row ends there (closed before the counters reset),
    and the rows beside the job end 0.5 s, 1 s ... after it (not on the run's 0.5-s grid), the last at the job's
    end."""
    r = calibrate[0]
    ends = [row["time_s"] for row in r.timeline if not row["warmup"]]
    assert r.elapsed > 1.0   # (so that two whole intervals beside the job end before it)
    whole = [1.25 + 0.5 * k for k in range(1, math.ceil(r.elapsed / 0.5))]
    assert ends == pytest.approx([0.5, 1.0, 1.25, *whole, 1.25 + r.elapsed])


def test_the_resource_figures_are_the_window_beside_the_jobs(calibrate):
    """The counters restart at the job's start: the run's CPU and device figures are the rows' beside the job,
    weighed by their spans (nothing of the window alone, nor over its span)."""
    r = calibrate[0]
    rows = [row for row in r.timeline if row["time_s"] > 1.25]
    assert sum(row["span_s"] for row in rows) == pytest.approx(r.elapsed)
    figures = {"cpu_usr": r.cpu_usr, "cpu_sys": r.cpu_sys, "device.array.iops": r.devices["array"]["iops"]}
    for key, figure in figures.items():
        assert sum(row[key] * row["span_s"] for row in rows) / r.elapsed == pytest.approx(figure), key


def test_progress_runs_to_half_alone_and_to_one_with_the_job(calibrate):
    """The window alone is the first half of the progress bar, the job's own progress the second."""
    progress = calibrate[2]
    assert progress == sorted(progress) and 0.0 <= progress[0] and progress[-1] == 1.0
    assert 0.5 in progress and max(p for p in progress if p <= 0.5) == 0.5


def test_each_workloads_sessions_run_their_own_code(calibrate):
    """The workload's sessions, made before the job, run tpcc's code (0) and count under it; the job's
    calibrate_io's (1): the cores' miss rate for each, and their DB CPU."""
    _r, system, _p = calibrate
    inst = system.instance
    assert inst.codes == {"tpcc": 0, "calibrate_io": 1} and set(inst.cpu_by) == set(inst.codes)
    assert min(inst.cpu_by.values()) > 0 and system.cpu.codes == 2


def test_the_window_beside_the_job_is_in_its_whole_batches(calibrate):
    """The batch means beside the job are its whole 1/8-s batches (the part one at its end counts in the mean
    only): floor(elapsed / 0.125) of them, too few for the pairs to merge."""
    r = calibrate[0]
    assert r.extra["batch_s"] == 0.125
    assert r.extra["batches"] == math.floor(r.elapsed / 0.125)
    assert math.isfinite(r.tpm_half_width)


def test_a_window_takes_each_batchs_own_completions_and_response_times():
    """Batch by batch (1/8 s each, from the window's start), what completed and the responses summed in that batch
    alone: 8 completions (64 tx/s), then 4 (32 tx/s); 2 s of response over 8, then 6 s over 4."""
    system = System(_load(TPCC))
    tally = SimpleNamespace(total=0.0, n=0)
    workload = SimpleNamespace(completed=0, response={"a": tally})
    window = sim.run._Window(system, workload)
    assert window.next_end() == 0.125
    workload.completed, tally.total, tally.n = 8, 2.0, 8
    window.add()
    workload.completed, tally.total, tally.n = 12, 8.0, 12
    window.add()
    assert window.next_end() == 0.375 and window.batches.kept == [64.0, 32.0]
    assert window.responses["a"].num.kept == [2.0, 6.0] and window.responses["a"].den.kept == [8, 4]


def test_the_report_of_a_job_beside_the_workload(calibrate):
    """The job's own section (CALIBRATE_IO's load levels), each type's mean alone in ms beside the mean with the
    job, and a timeline with the workload's TPM column through the job (a steady run's, though it has an elapsed)."""
    r = calibrate[0]
    text = report.full(r)
    assert "CALIBRATE_IO load levels" in text
    assert "(its first 1.25 s measured, before the job started" in text
    head = next(line for line in text.splitlines() if line.startswith("transaction"))
    assert head.split()[:4] == ["transaction", "count", "mean", "±"] and "mean alone" in head
    for t, ms in r.extra["response_alone_ms"].items():
        row = next(line for line in text.splitlines() if line.startswith(t + " "))
        assert report._ms(ms / 1e3) in row.split()
    head = next(line for line in report.timeline(r).splitlines() if line.startswith("t (s)"))
    assert head.split()[:3] == ["t", "(s)", "TPM"]


def test_full_strands_are_a_bound_of_a_job_alone_not_beside_a_workload():
    """Four of 64 strands full, the mean 6.25%: a batch job alone is bound by its processes (4 strands full at
    100%), but beside a load of users (a throughput) the full strands are the users' too, as in any steady run."""
    strands = [100.0] * 4 + [0.0] * 60
    alone = Result(label="x", profile="t5220", workload="ctas", inputs={}, elapsed=10.0, strand_utilisation=strands)
    assert ("4 strands full", 100.0) in alone.busiest()
    beside = dataclasses.replace(alone, workload="tpcc", tpm=1000.0)
    assert [name for name, _u in beside.busiest()] == ["strands (mpstat)"]


def test_the_plot_shades_the_jobs_span(calibrate):
    r = calibrate[0]
    fig = plot(r)
    spans = [p.get_extents() for p in fig.axes[0].patches]
    x0, x1 = 1.25, 1.25 + r.elapsed
    data = fig.axes[0].transData
    assert any(e.x0 == pytest.approx(data.transform((x0, 0))[0]) and e.x1 == pytest.approx(data.transform((x1, 0))[0])
               for e in spans)


def test_a_job_cut_at_the_guard_is_a_timeout_with_the_windows_figures(monkeypatch):
    """A job still running at the guard (30 days; 0.3 s here) ends the run as a timeout that says so, with the
    workload's figures over the window up to the guard and the timeline closed there. The window beside the job
    starts 3.25 s into the simulation (after the warm-up), so the guard is at 3.55 s, where now - start is
    0.2999999999999998: a loop that compared that span with 0.3 spun there forever."""
    monkeypatch.setattr(sim.run, "BATCH_MAX_TIME", 0.3)
    r = run(_load({**TPCC, **CALIBRATE}))
    assert r.status == "timeout"
    assert r.message == "the background job calibrate_io had not finished after 0.3 s simulated"
    assert r.elapsed == pytest.approx(0.3) and r.measured_time == pytest.approx(0.3) and r.tpm > 0
    assert r.timeline[-1]["time_s"] == pytest.approx(1.55)
    assert r.extra["background"]["workload"] == "calibrate_io"


def test_a_window_beside_the_job_keeps_none_of_the_window_alones_own_figures(monkeypatch):
    """Cut 0.5 ms after the job starts, before any transaction completes beside it: no response-time law (the
    window alone had one, from its transactions; it is not the window beside's)."""
    monkeypatch.setattr(sim.run, "BATCH_MAX_TIME", 5e-4)
    r = run(_load({**TPCC, **CALIBRATE}))
    assert r.status == "timeout" and r.tpm == 0.0 and r.extra["tpm_alone"] > 0
    assert "response_time_law" not in r.extra


def test_a_job_out_of_memory_leaves_none_of_the_window_alones_figures():
    """The window alone's figures are kept as figures alone only: out of memory once the job's PX servers start,
    the run reports no throughput, CPU, waits, devices or measured time as though of the window beside it."""
    r = run(_load({**TPCC, "run.max_time": "0.25 s", "background.workload": "ctas",
                   "background.params.table_size": "512 MB", "hardware.memory.size": "2.5 GB",
                   "hardware.memory.swap": "0 GB"}))
    assert r.status == "out_of_memory"
    blank = Result(label="", profile="", workload="", inputs={})
    for name in ("tpm", "throughput_per_s", "tpm_half_width", "cpu_idle", "cpu_usr", "cpu_sys", "run_queue",
                 "core_utilisation", "strand_utilisation", "top_events", "response", "devices", "measured_time"):
        assert getattr(r, name) == getattr(blank, name), name


# ------------------------------------------------------------ the code's miss rate of two workloads


def _two_codes():
    """A server built for a workload and a job beside it: its cores tell the two codes apart."""
    return System(_load({**TPCC, "background.workload": "ctas", "background.params.table_size": "64 MB"}))


def test_the_jobs_code_starts_at_its_own_rate_and_the_workloads_keeps_its():
    """A job that starts after the workload ran alone: from its first burst the cores run each code at its own
    miss rate, the workload's unchanged by it (a mean field had started from the workload's)."""
    system = _two_codes()
    inst = system.instance
    inst.serve("a")
    system.set_memory_behaviour(0.010)
    assert system.cpu.groups[0].mpis == (0.010, 0.0)   # (code 1 not yet run: no misses of its own)
    inst.new_session().cpu(5e6)
    system.env.run()
    inst.serve("b")
    system.set_memory_behaviour(0.030)
    assert system.memory.mpi == 0.010 and system.memory.codes == [0.010, 0.030]
    assert all(g.mpis == (0.010, 0.030) for g in system.cpu.groups)


def test_a_counted_session_runs_its_sys_share_and_keeps_its_count_across_serves():
    """A counted burst reaches the dispatcher whole: 2e6 instructions a quarter in the kernel are a quarter sys
    time (vmstat's sy); serving a workload again keeps what its sessions ran."""
    system = _two_codes()
    system.set_memory_behaviour(0.001)
    inst = system.instance
    inst.serve("a")
    inst.new_session().cpu(2e6, 0.25)
    system.env.run()
    busy, sys = system.cpu.strand_time()
    assert busy > 0 and sys == pytest.approx(0.25 * busy)
    inst.serve("b")
    inst.serve("a")
    assert inst.codes == {"a": 0, "b": 1} and inst.db_cpu("a") == pytest.approx(busy) and inst.db_cpu("b") == 0.0


def test_the_buffer_cache_holds_both_workloads_databases():
    """One SGA: without database.db_cache, Solaris's ISM locks a buffer cache the size of every workload's
    database together (1 GB + 2 GB), not the last one's."""
    system = _two_codes()
    inst = system.instance
    inst.serve("a")
    inst.attach_database(2**30)
    inst.serve("b")
    inst.attach_database(2 * 2**30)
    assert system.vm.shared["sga_buffer_cache"] == 3 * 2**30


# ------------------------------------------------------------ the summary's line, the scenario's checks


def _with(extra: dict) -> Result:
    return Result(label="x", profile="t5220", workload="slob", inputs={}, tpm=60_000.0, extra=extra)


def test_the_line_alone_is_in_the_workloads_own_unit():
    """SLOB's throughput is logical reads/s (TPM / 60); an interval that could not be estimated prints no '±'."""
    alone = {"tpm_alone": 120_000.0, "tpm_alone_half_width": math.nan, "alone_measured_s": 2.5,
             "iops_per_db_cpu": 1.0}
    assert report._alone(_with(alone), "rman") == ("beside rman: against 2,000 logical reads/s alone (its first "
                                                   "2.5 s measured, before the job started)")
    tpcc = {"tpm_alone": 120_000.0, "tpm_alone_half_width": 600.0, "alone_measured_s": 2.5, "tpm_change_pct": -12.34}
    assert report._alone(_with(tpcc), "ctas").startswith("beside ctas: -12.3% against 120,000 ± 600 TPM alone")


def test_the_buffer_cache_must_hold_both_workloads_data_in_a_32_bit_sga():
    """32-bit Oracle maps 3,840 MB: CTAS's 3.7 GB table scanned in memory (3,789 MB) fits it with the 32-MB shared
    pool, but not beside tpcc's warehouse (85 MB): refused, naming both, the job's under background."""
    settings = {**TPCC, "database.oracle_bits": 32, "os.bits": 32, "database.parallel.parallel_degree_policy": "auto",
                "background.workload": "ctas", "background.params.table_size": "3.7 GB"}
    _load({"table_size": "3.7 GB", **{k: v for k, v in settings.items() if k.startswith(("database", "os"))}}, "ctas")
    with pytest.raises(ConfigError) as exc:
        _load(settings)
    assert exc.value.path == "database.db_cache"
    assert "params.users / 10: 1 warehouse of 85 MB + background.params.table_size" in str(exc.value)
    assert "+ background.params.table_size, scanned in memory" in str(exc.value)


def test_a_part_one_workload_reads_takes_its_settings_though_the_job_leaves_it_idle():
    """sqlldr's direct path commits nothing, but tpcc beside it does: LGWR's settings are taken."""
    sc = _load({**TPCC, "database.lgwr_sys_share": 0.3, "background.workload": "sqlldr",
                "background.params.direct": True, "background.params.data_size": "1 GB"})
    assert sc.spec.database.lgwr_sys_share == 0.3


def test_a_part_both_workloads_leave_idle_is_refused_naming_the_workloads_parameter():
    """SLOB without updates and a direct-path load both commit nothing: LGWR's setting is refused, naming the
    workload's own parameter (under params, as it would alone)."""
    with pytest.raises(ConfigError) as exc:
        _load({"sessions": 4, "database.lgwr_sys_share": 0.3, "background.workload": "sqlldr",
               "background.params.direct": True, "background.params.data_size": "1 GB"}, "slob")
    assert exc.value.path == "database.lgwr_sys_share"
    assert "for workload slob with params.update_pct: 0" in str(exc.value)


def test_a_setting_neither_workload_reads_lists_what_both_read():
    """The settings listed are the two workloads' together: rman's control file device beside tpcc's."""
    with pytest.raises(ConfigError) as exc:
        _load({**TPCC, "background.workload": "rman", "background.params.channels": 2,
               "database.parallel.parallel_degree_policy": "auto"})
    says = str(exc.value)
    assert "The database settings tpcc and rman read (oltpsim settings --workload tpcc and --workload rman, " \
           "together): " in says
    assert "database.lgwr_sys_share" in says and "database.control_file_device" in says


def test_background_is_a_section_of_the_scenario():
    with pytest.raises(ConfigError) as exc:
        _load({**TPCC, "background": "rman"})
    assert exc.value.path == "background" and "e.g. background.workload=rman" in str(exc.value)


def test_a_jobs_size_past_its_device_says_whether_it_was_the_default():
    """The job's checks read its own parameters: CALIBRATE_IO's default 1 TB is past the 438-GB array and the
    message says it was the default; CTAS's table_size given as 2 TB was not (tpcc's parameters say nothing of it)."""
    with pytest.raises(ConfigError) as exc:
        _load({**TPCC, "background.workload": "calibrate_io"})
    assert exc.value.path == "background.params.database_size"
    assert str(exc.value).endswith("(the default: give a smaller database_size)")
    with pytest.raises(ConfigError) as exc:
        _load({**TPCC, "background.workload": "ctas", "background.params.table_size": "2 TB"})
    assert exc.value.path == "background.params.table_size" and "the default" not in str(exc.value)


def test_the_memory_loop_of_two_codes_stops_when_nothing_else_will_happen():
    """With two codes the memory's loop counts the cores' misses, and stops once nothing else is scheduled (a batch
    job driven by env.run() to its end), having counted each code's at its rate."""
    system = _two_codes()
    inst = system.instance
    inst.serve("a")
    system.set_memory_behaviour(0.010)
    inst.new_session().cpu(1e6)
    inst.serve("b")
    system.set_memory_behaviour(0.030)
    inst.new_session().cpu(1e6)
    runs = threading.Thread(target=system.env.run, daemon=True)   # (to its end: a hang is a failure, not a stuck suite)
    runs.start()
    runs.join(timeout=20.0)
    assert not runs.is_alive() and system.env.peek() == float("inf")
    assert system.memory.misses == pytest.approx(1e6 * 0.010 + 1e6 * 0.030, rel=1e-9)
