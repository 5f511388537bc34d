"""The timeline (run.interval): watching a run changes none of its figures, and its intervals add up to them."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from sim import cli, report, scenario
from sim.config import OltpsimError
from sim.engine import Environment
from sim.run import run
from sim.timeline import Timeline, plot

TPCC = {"users": "24", "think_time": "0 s", "keying_time": "0 s", "database.db_cache": "60 MB",
        "run.max_time": "7 s", "run.min_batches": "1000"}   # 7 s of 2.5-s intervals: a part one at the end
# 96 users that never think on the T5220's 64 strands, the database cached: ~17 runnable all along
CPU_BOUND = {**{k: v for k, v in TPCC.items() if k != "database.db_cache"}, "users": "96", "run.max_time": "1 s"}
RMAN = {"channels": "2", "datafiles_mb": [300.0, 120.0, 60.0], "run.max_time": "10000 s"}


def _runs(workload: str, params: dict, interval: str):
    plain = run(scenario.load(None, params, profile="t5220", workload=workload))
    watched = run(scenario.load(None, {**params, "run.interval": interval}, profile="t5220", workload=workload))
    return plain, watched


@pytest.fixture(scope="module")
def tpcc():
    return _runs("tpcc", TPCC, "2.5 s")


@pytest.fixture(scope="module")
def cpu_bound():
    return _runs("tpcc", CPU_BOUND, "0.25 s")


@pytest.fixture(scope="module")
def rman():
    return _runs("rman", RMAN, "2 s")


@pytest.mark.parametrize("runs", ["tpcc", "rman", "cpu_bound"])
def test_watching_a_run_changes_none_of_its_figures(runs, request):
    """The timeline reads its counters without bringing them up to date (a processor-sharing group brought up to
    date mid-step would move its next finish by a rounding, and every event after it; the run queue's area brought
    up to date would be summed in other steps), so every figure of the run, to the last bit, is what the same run
    without a timeline gives; only its own wake-ups add events. (cpu_bound: a run queue, which the others lack.)"""
    plain, watched = request.getfixturevalue(runs)
    assert watched.timeline and not plain.timeline
    a, b = plain.to_dict(), watched.to_dict()
    for k in ("timeline", "wall_time", "events", "inputs"):
        a.pop(k), b.pop(k)
    assert a == b
    assert 0 < watched.events - plain.events <= len(watched.timeline) + 2   # (+ a warm-up's stale one, the last)


def _weighted(rows: list[dict], key: str) -> float:
    return sum(r[key] * r["span_s"] for r in rows) / sum(r["span_s"] for r in rows)


@pytest.mark.parametrize("runs", ["tpcc", "rman"])
def test_the_intervals_tile_the_measured_time_and_add_up_to_the_runs_figures(runs, request):
    """Whole intervals from the measured start, then the part one to the end; their time-weighted means are the
    run's own vmstat, corestat and iostat figures, and the waits that ended in them are the run's waits."""
    _plain, r = request.getfixturevalue(runs)
    rows, interval = [row for row in r.timeline if not row["warmup"]], r.inputs["run.interval"]
    assert [row["span_s"] for row in rows[:-1]] == pytest.approx([interval] * (len(rows) - 1))
    assert 0.0 < rows[-1]["span_s"] <= interval + 1e-9
    assert rows[-1]["time_s"] == pytest.approx(r.measured_time) == pytest.approx(sum(x["span_s"] for x in rows))
    for key, whole in (("cpu_usr", r.cpu_usr), ("cpu_sys", r.cpu_sys), ("cpu_idle", r.cpu_idle),
                       ("run_queue", r.run_queue),
                       ("core_utilisation_mean", sum(r.core_utilisation) / len(r.core_utilisation))):
        assert _weighted(rows, key) == pytest.approx(whole, rel=1e-9, abs=1e-9), key
    for name, d in r.devices.items():
        for stat in ("iops", "mb_per_s", "util_pct"):
            assert _weighted(rows, f"device.{name}.{stat}") == pytest.approx(d[stat], rel=1e-9, abs=1e-9)
    for e in r.top_events:
        if e["event"] == "DB CPU":
            assert sum(row["db_cpu_s"] for row in rows) == pytest.approx(e["time_s"], rel=1e-9)
        else:
            assert sum(row.get(f"wait.{e['event']}.waits", 0) for row in rows) == e["waits"]
            assert sum(row.get(f"wait.{e['event']}.time_s", 0.0) for row in rows) == pytest.approx(e["time_s"])


def test_a_steady_runs_warm_up_is_in_its_timeline_before_0_and_a_batch_job_has_none(tpcc, rman):
    """The warm-up's intervals (2 s, then the writers' settling: TPC-C with a 60 MB cache has a DBWR) are kept,
    flagged, at times up to 0, the measured start, and tile the simulated time before it; a batch job is measured
    from its start."""
    _p, r = tpcc
    warm = [row for row in r.timeline if row["warmup"]]
    assert warm and all(row["time_s"] <= 1e-9 for row in warm) and warm[-1]["time_s"] == pytest.approx(0.0)
    assert sum(row["span_s"] for row in warm) == pytest.approx(r.simulated_time - r.measured_time)
    assert warm[0]["time_s"] == pytest.approx(warm[0]["span_s"] - (r.simulated_time - r.measured_time))
    assert all(row["time_s"] > 0 for row in r.timeline[len(warm):])
    assert r.timeline[:len(warm)] == warm   # (first, in time order)
    assert not any(row["warmup"] for row in rman[1].timeline)


def test_a_steady_runs_intervals_give_its_throughput_and_a_batch_jobs_its_progress(tpcc, rman):
    """TPC-C's intervals' TPM, weighted by their length, is the run's; RMAN's progress rises to 100% at its end."""
    _p, steady = tpcc
    measured = [row for row in steady.timeline if not row["warmup"]]
    assert _weighted(measured, "tpm") == pytest.approx(steady.tpm, rel=1e-9)
    assert "done_pct" not in steady.timeline[0]
    _p, job = rman
    done = [row["done_pct"] for row in job.timeline]
    assert done == sorted(done) and done[-1] == 100.0 and done[0] < 100.0
    assert "tpm" not in job.timeline[0]


def test_the_frame_is_indexed_by_time_with_no_gaps_for_an_event_an_interval_lacks(tpcc):
    """timeline_frame(): one row per interval, by its end; a wait event that ended no wait in an interval is 0
    there (not NaN), so sums over a column are the run's."""
    _p, r = tpcc
    frame = r.timeline_frame()
    assert list(frame.index) == [row["time_s"] for row in r.timeline]
    waits = [c for c in frame if c.startswith("wait.")]
    assert waits and not frame[waits].isna().any().any()
    assert "timeline" not in r.flat()   # (a list: the flat row's columns are the run's figures)


def test_the_report_prints_a_line_per_interval_with_the_busiest_device_and_top_event(tpcc, rman):
    """The report's timeline: every interval's end, TPM (or done %), vmstat's r/us/sy/id, corestat's pipelines
    on the T5220, IOPS, the busiest device and the interval's top timed event (DB CPU included, as AWR ranks it)."""
    for (_p, r), first in ((tpcc, "TPM"), (rman, "done")):
        text = report.full(r).split("\n\nTimeline (every ")[1]
        lines = text.splitlines()
        assert lines[1].split()[:3] == ["t", "(s)", first] and "pipe %" in lines[1]
        body = lines[3:]
        assert len(body) == len(r.timeline)
        assert all(line == line.rstrip() for line in lines)
    last = report.timeline(rman[1]).splitlines()[-1]
    assert last.split()[0] == report.figure(rman[1].elapsed) and " 100.0 " in last
    top = [line for line in report.timeline(tpcc[1]).splitlines()[3:]]
    assert all(("db file sequential read" in line or "log file sync" in line or "DB CPU" in line) for line in top)


def test_the_reports_columns_for_hand_made_intervals(tpcc):
    """Three intervals set by hand, each column checked: a warm-up's (t 0, so the header says t up to 0 is the
    warm-up), 30.4% us and 9.6% sy, r 1.3, IOPS and MB/s summed over the devices (100 + 50, 1.5 + 0.5), the busiest
    device (internal's 70%, not array's 20%) and DB CPU's 0.5 s above log file sync's 0.02 s; then 10 reads that took
    0.05 s, 5 ms each, with no DB CPU; then nothing, which has no top event."""
    import dataclasses

    base = {"span_s": 2.5, "warmup": False, "tpm": 600.0, "run_queue": 1.3, "cpu_usr": 30.4, "cpu_sys": 9.6,
            "cpu_idle": 60.0, "core_utilisation_mean": 40.0, "db_cpu_s": 0.0, "device.array.iops": 100.0,
            "device.array.mb_per_s": 1.5, "device.array.util_pct": 20.0, "device.internal.iops": 50.0,
            "device.internal.mb_per_s": 0.5, "device.internal.util_pct": 70.0}
    rows = [{**base, "time_s": 0.0, "warmup": True, "db_cpu_s": 0.5, "wait.log file sync.waits": 4,
             "wait.log file sync.time_s": 0.02},
            {**base, "time_s": 2.5, "wait.db file sequential read.waits": 10,
             "wait.db file sequential read.time_s": 0.05},
            {**base, "time_s": 5.0}]
    text = report.timeline(dataclasses.replace(tpcc[1], timeline=rows)).splitlines()
    assert "t up to 0: the warm-up" in text[0]
    cells = [line.split(None, 10) for line in text[3:]]
    assert [c[0] for c in cells] == ["0", "2.5", "5"]
    assert [c[1:10] for c in cells] == [["600", "1.3", "30", "10", "60", "40", "150", "2.0", "internal"]] * 3
    assert [c[10].split(None, 1) for c in cells] == [["70%", "DB CPU"], ["70%", "db file sequential read 5.00 ms"],
                                                     ["70%"]]


def test_every_user_is_on_a_strand_runnable_or_waiting_in_every_interval(tpcc):
    """The sessions the plot stacks: 24 users that never think are each on a strand (DB CPU), in the run queue (r)
    or in a timed wait, so DB CPU + wait time per second + r is 24 in every interval, but for waits that straddle
    an interval's edge (counted where they end, as AWR's snapshots count them: ms here against 2.5-s intervals)."""
    _p, r = tpcc
    for row in r.timeline:
        waits = sum(v for k, v in row.items() if k.startswith("wait.") and k.endswith(".time_s"))
        assert (row["db_cpu_s"] + waits) / row["span_s"] + row["run_queue"] == pytest.approx(24, rel=0.03)


def test_plot_draws_four_panels_and_refuses_a_run_without_a_timeline(tpcc, tmp_path):
    """plot(): throughput, CPU with the run queue, devices, sessions; a run with no run.interval is refused."""
    plain, r = tpcc
    fig = plot(r, tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 10_000 and len(fig.axes) == 5   # (4 panels + the run queue's axis)
    with pytest.raises(OltpsimError, match="run.interval"):
        plot(plain)


def test_the_plots_panels_hold_each_interval_from_its_start_to_its_end(tpcc):
    """The data drawn, not only that it draws: TPC-C's rows end at 0 (the 2-s warm-up), 2.5, 5 and 7 s, so each line
    and stack runs from the intervals' starts -2, 0, 2.5, 5 to the last's end, 7, its last value held to it; the
    panels are 0-100% (the run queue's from 0 to 1 at least); the devices with any %b (the internal disk has none);
    DB CPU and the top wait event by time (events=1), in sessions: their time per second of the interval; the
    warm-up shaded from -2 s to 0."""
    _p, r = tpcc
    frame = r.timeline_frame()
    fig = plot(r, events=1)
    tput, cpu, devices, sessions, queue = fig.axes
    starts = [-2.0, 0.0, 2.5, 5.0, 7.0]
    assert list(tput.lines[0].get_xdata()) == pytest.approx(starts)
    assert list(tput.lines[0].get_ydata()) == pytest.approx([*frame["tpm"], frame["tpm"].iloc[-1]])
    assert tput.get_ylim()[0] == 0.0 and cpu.get_ylim() == (0.0, 100.0) and devices.get_ylim() == (0.0, 100.0)
    assert queue.get_ylim() == (0.0, max(1.0, 1.1 * frame["run_queue"].max()))
    assert [line.get_label() for line in devices.lines] == ["array"]
    assert list(devices.lines[0].get_xdata()) == pytest.approx(starts)
    waits = {c[5:-7]: frame[c].sum() for c in frame if c.startswith("wait.") and c.endswith(".time_s")}
    top = max(waits, key=waits.get)
    assert sessions.get_legend_handles_labels()[1] == ["DB CPU", top] and len(waits) > 1
    stacked = (frame["db_cpu_s"] + frame[f"wait.{top}.time_s"]) / frame["span_s"]
    heights = sessions.collections[-1].get_paths()[0].vertices[:, 1]
    assert all(any(h == pytest.approx(v) for h in heights) for v in stacked)
    (shade,) = tput.patches
    assert (shade.get_x(), shade.get_width()) == pytest.approx((-2.0, 2.0))


def test_the_plots_title_gives_run_interval_not_the_first_rows_span(tpcc):
    """TPC-C's 2-s warm-up is one part interval of the 2.5-s run.interval: the title says every 2.5 s (it said every
    2 s, the first row's span)."""
    _p, r = tpcc
    assert r.timeline[0]["span_s"] == pytest.approx(2.0)
    assert plot(r).axes[0].get_title().endswith(": every 2.5 s")


def test_cli_plot_needs_a_timeline_and_refuses_before_running(tmp_path, monkeypatch):
    """--plot without run.interval exits 2 before anything runs and writes nothing; an interval under 1 ms is bad
    input too, as is a file matplotlib cannot draw (a .txt had failed with its traceback after the run)."""
    import sim.run

    monkeypatch.setattr(sim.run, "run", lambda *a, **k: pytest.fail("ran"))
    base = ["run", "--profile", "t5220", "--workload", "tpcc", "--set", "users=8"]
    got = CliRunner().invoke(cli.main, [*base, "--plot", str(tmp_path / "t.png")])
    assert got.exit_code == 2 and "run.interval" in got.stderr and not (tmp_path / "t.png").exists()
    got = CliRunner().invoke(cli.main, [*base, "--set", "run.interval=0.5 ms"])
    assert got.exit_code == 2 and "run.interval" in got.stderr and "at least 1 ms" in got.stderr
    same = str(tmp_path / "x")
    got = CliRunner().invoke(cli.main, [*base, "--set", "run.interval=1 s", "--plot", same, "--json", same])
    assert got.exit_code == 2 and "the same file" in got.stderr
    got = CliRunner().invoke(cli.main, [*base, "--set", "run.interval=1 s", "--plot", str(tmp_path / "t.txt")])
    assert got.exit_code == 2 and "expected a picture, e.g. t.png" in got.stderr   # (matplotlib's traceback, after)


def test_cli_plot_writes_the_png(tmp_path, tpcc, monkeypatch):
    import sim.run

    monkeypatch.setattr(sim.run, "run", lambda *a, **k: tpcc[1])
    got = CliRunner().invoke(cli.main, ["run", "--profile", "t5220", "--workload", "tpcc", "--set", "users=8",
                                        "--set", "run.interval=2.5 s", "--plot", str(tmp_path / "t.png")])
    assert got.exit_code == 0, got.output
    assert (tmp_path / "t.png").stat().st_size > 10_000 and "timeline drawn in" in got.stdout
    assert not math.isnan(tpcc[1].timeline[0]["tpm"])


def test_slobs_timeline_gives_logical_reads_per_second_as_its_summary_does():
    """SLOB's operations are logical reads, which its summary gives per second, not per minute as TPM: its timeline
    too (8 sessions through a 1 GB cache on the Haswell-EP, every 2 s)."""
    r = run(scenario.load(None, {"sessions": 8, "database.db_cache": "1 GB", "run.interval": "2 s",
                                 "run.max_time": "4 s"}, profile="xeon-e5-2643v3-2s", workload="slob"))
    lines = report.timeline(r).splitlines()
    assert lines[1].split()[2:4] == ["logical", "reads/s"]
    last = r.timeline[-1]
    assert lines[-1].split()[1] == report.figure(last["tpm"] / 60.0)


def _bare(interval: float, strands: int = 2, busy=0.0, runq=0.0):
    """A Timeline over hand-set counters: `busy` busy strands and `runq` runnable processes all along, one wait event
    (its waits and time set by the test), no devices; a steady workload with no completions."""
    env = Environment()
    waits = {"log file sync": SimpleNamespace(waits=0, time=0.0)}
    cpu = SimpleNamespace(cpu_count=strands, spec=SimpleNamespace(cores=strands, pipelines_per_core=1),
                          areas_now=lambda: (busy * env.now, 0.0, busy * env.now))
    system = SimpleNamespace(env=env, cpu=cpu, devices={},
                             dispatcher=SimpleNamespace(run_queue_area_now=lambda: runq * env.now),
                             instance=SimpleNamespace(waits=SimpleNamespace(events=waits)))
    return Timeline(system, SimpleNamespace(kind="steady", completed=0), interval), env, waits


def test_ten_thousand_1_ms_intervals_end_where_their_count_says_not_where_their_sum_drifts():
    """Each wake-up is timed from the start (t0 + n x interval), not from the last one (now + interval): 10,000
    additions of 0.001 (not a binary fraction) drift ~1e-12 s; timed from the start, each ends within an ulp of
    n x 0.001."""
    tl, env, _waits = _bare(0.001)
    tl.start()
    env.run(until=10.0005)
    ends = [row["time_s"] for row in tl.rows]
    assert len(ends) == 10_000
    assert max(abs(end - (n + 1) * 0.001) for n, end in enumerate(ends)) < 1e-14


def test_an_interval_ending_at_the_close_gives_no_empty_row_and_a_part_one_its_own_span():
    """close() right after an interval's row adds nothing (a 0-s row would divide by 0); 0.1 s later it adds a 0.1-s
    row."""
    tl, env, _waits = _bare(0.25)
    tl.start()
    while env.peek() <= 0.5:   # (the wake-up at 0.5 too, which run(until=0.5) leaves)
        env.step()
    assert [row["time_s"] for row in tl.rows] == [0.25, 0.5]
    tl.close()
    assert len(tl.rows) == 2
    env.run(until=0.6)
    tl.close()
    assert tl.rows[-1]["span_s"] == pytest.approx(0.1)


def test_the_run_queue_is_per_interval_idle_never_below_0_and_an_event_only_where_a_wait_ended():
    """3 processes runnable all along: r is 3 in every interval, not the run's total so far over the interval; a
    saturated CPU's busy time an ulp past its strands' time (as a processor-sharing group's sums come out) is 0% idle,
    not -2e-14%; an event shows in the interval where its waits ended, with only those, and in no other."""
    tl, env, waits = _bare(0.25, strands=2, busy=2.0 * (1 + 4e-16), runq=3.0)
    tl.start()
    env.run(until=0.3)
    waits["log file sync"] = SimpleNamespace(waits=2, time=0.01)
    env.run(until=0.8)
    tl.close()
    assert [row["run_queue"] for row in tl.rows] == pytest.approx([3.0] * 4)
    assert all(row["cpu_idle"] == 0.0 for row in tl.rows) and tl.rows[0]["cpu_usr"] > 100.0
    assert [(row.get("wait.log file sync.waits"), row.get("wait.log file sync.time_s")) for row in tl.rows] == [
        (None, None), (2, 0.01), (None, None), (None, None)]


@pytest.mark.parametrize("workload, params, interval", [("tpcc", TPCC, "2.5 s"), ("rman", RMAN, "2 s")])
def test_a_run_out_of_memory_keeps_its_timeline_up_to_the_end(workload, params, interval, monkeypatch):
    """Processes past RAM + swap 5 s in (memory exhausted, as by hand) end the run out_of_memory: its timeline is
    the intervals that led there, tiling the simulated time from 0 to the end, not dropped."""
    import sim.run

    watch = sim.run._watch

    def watch_then_exhaust(system, w):
        system.env.timeout(5.0).callbacks.append(lambda _e: system.vm.exhausted.succeed())
        return watch(system, w)

    monkeypatch.setattr(sim.run, "_watch", watch_then_exhaust)
    r = run(scenario.load(None, {**params, "run.interval": interval}, profile="t5220", workload=workload))
    assert r.status == "out_of_memory" and r.timeline
    assert sum(row["span_s"] for row in r.timeline) == pytest.approx(r.simulated_time) and r.simulated_time >= 5.0


def test_the_read_only_peeks_are_what_bringing_the_counters_up_to_date_gives(monkeypatch):
    """At each reading (CPU_BOUND, every 10 ms so that some readings find a write in flight), every pipeline group's
    busy, sys and issuing strand-seconds, the run queue's process-seconds and each disk's busy seconds read without
    bringing them up to date are what bringing them up to date then gives, the time since each one's last change
    (busy, queued, I/O in flight) included. A row's figures rest on it: their sum over the run
    telescopes to the last reading less the first, and would hide an interval's missing part found in the next."""
    import sim.timeline

    seen = {"busy": 0.0, "runq": 0.0, "util": 0.0}

    def check(tl):
        s = tl.system
        peeks = [g.areas_now() for g in s.cpu.groups]
        runq = s.dispatcher.run_queue_area_now()
        disks = [d for dev in s.devices.values() for d in getattr(dev, "disks", [dev])]
        utils = [d.util.area_now() for d in disks]
        for g, peek in zip(s.cpu.groups, peeks):
            seen["busy"] += g.busy * (s.env.now - g.t_last)
            g._advance()
            assert (g.area_busy, g.area_sys, g.area_issue) == pytest.approx(peek, rel=1e-12, abs=1e-15)
        seen["runq"] += runq - s.dispatcher.area_runq
        s.dispatcher._account()
        assert s.dispatcher.area_runq == pytest.approx(runq, rel=1e-12)
        for d, util in zip(disks, utils):
            seen["util"] += util - d.util.area
            d.util.set(d.util.value)
            assert d.util.area == pytest.approx(util, rel=1e-12)
        return reading(tl)

    reading = sim.timeline.Timeline._reading
    monkeypatch.setattr(sim.timeline.Timeline, "_reading", check)
    run(scenario.load(None, {**CPU_BOUND, "run.interval": "10 ms"}, profile="t5220", workload="tpcc"))
    assert seen["busy"] > 0.0 and seen["runq"] > 0.0 and seen["util"] > 0.0   # (each peek had something to add)
