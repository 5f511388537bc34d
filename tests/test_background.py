"""A batch job beside a steady workload (scenario background:): what the job does to the throughput and
response times, and how long it takes on a busy system."""

from __future__ import annotations

import copy
import dataclasses

import pytest
from click.testing import CliRunner

from sim import cli, report, scenario
from sim.config import ConfigError
from sim.run import run
from sim.system import System

# 24 users that never think on the T5220: ~197,000 TPM, a 4-s window alone
TPCC = {"users": "24", "think_time": "0 s", "keying_time": "0 s", "run.max_time": "4 s", "run.interval": "1 s"}
CTAS = {"background.workload": "ctas", "background.params.table_size": "512 MB"}
RMAN = {"background.workload": "rman", "background.params.channels": 2, "background.params.datafiles_mb": [40.0, 20.0]}


def _load(settings: dict, workload: str = "tpcc"):
    return scenario.load(None, settings, profile="t5220", workload=workload)


def _job_alone(settings: dict) -> dict:
    """A background job's settings as the job's own scenario's."""
    return {k.removeprefix("background.params."): v for k, v in settings.items() if k != "background.workload"}


@pytest.fixture(scope="module")
def plain():
    return run(_load(TPCC))


@pytest.fixture(scope="module")
def ctas():
    return run(_load({**TPCC, **CTAS})), run(_load(_job_alone(CTAS), "ctas"))


@pytest.fixture(scope="module")
def rman():
    return run(_load({**TPCC, **RMAN})), run(_load(_job_alone(RMAN), "rman"))


def test_the_window_alone_is_the_run_without_the_job(plain, ctas):
    """The job starts only once the workload alone is measured, and nothing of it exists before: the figures
    alone are the plain run's to the last bit (its sessions count their instructions, which changes no event)."""
    beside, _ = ctas
    x = beside.extra
    assert x["tpm_alone"] == plain.tpm and x["tpm_alone_half_width"] == plain.tpm_half_width
    assert x["alone_measured_s"] == plain.measured_time == x["background"]["started_s"]
    assert x["response_alone_ms"] == {t: 1000.0 * v["mean"] for t, v in plain.response.items()}
    assert x["tpm_change_pct"] == pytest.approx(100.0 * (beside.tpm / plain.tpm - 1.0))


def test_a_parallel_ctas_floods_the_array_and_every_commit_waits_behind_it(plain, ctas):
    """CTAS at the T5220's default DOP 128 reads and writes the array the redo log is on: LGWR's writes queue
    behind its direct-path I/O, so log file sync grows and the throughput falls by a quarter (measured -27%);
    the users' CPU slows the job too (9.7 s alone, 13.5 s beside)."""
    beside, alone = ctas
    assert beside.status == alone.status == "ok"
    assert beside.extra["background"]["dop"] == alone.extra["dop"] == 128
    assert beside.extra["tpm_change_pct"] < -15.0
    sync = {r.label: next(e["avg_ms"] for e in r.top_events if e["event"] == "log file sync") for r in (plain, beside)}
    assert sync[beside.label] > 3 * sync[plain.label]
    assert beside.elapsed > 1.2 * alone.elapsed
    assert beside.elapsed == pytest.approx(beside.extra["background"]["elapsed_s"])


def test_rman_channels_share_the_pipelines_with_the_users(rman):
    """Two compressing channels beside 24 users: each shares a core's pipelines with the users' sessions, so the
    backup takes longer than alone, but not much (measured 11.8 s -> 13.2 s): the compressors stall on a quarter
    as many misses per instruction as the users' code, so they are ready to issue more often and get more of the
    pipeline (a mean field of the two codes' miss rates had them stall as the users: 22.1 s). The array stays
    near idle."""
    beside, alone = rman
    assert 1.05 * alone.elapsed < beside.elapsed < 1.3 * alone.elapsed
    assert beside.extra["background"]["channels_used"] == 2
    assert max(d["util_pct"] for d in beside.devices.values()) < 20.0


def test_the_timeline_runs_on_through_the_job(ctas):
    """Its rows go on from the window alone into the job's without a gap or a row across the reset (the counters
    restart at the job's start), and the rows beside the job add up to the run's TPM."""
    beside, _ = ctas
    rows = [r for r in beside.timeline if not r["warmup"]]
    ends = [r["time_s"] for r in rows]
    assert ends == sorted(ends) and all(r["span_s"] > 0 and r["tpm"] >= 0 for r in rows)
    started = beside.extra["background"]["started_s"]
    assert started in ends   # an interval ends at the job's start
    assert ends[-1] == pytest.approx(started + beside.elapsed)
    during = [r for r in rows if r["time_s"] > started]
    assert [r["beside_job"] for r in beside.timeline] == [r["time_s"] > started for r in beside.timeline]
    assert sum(r["span_s"] for r in during) == pytest.approx(beside.elapsed)
    assert sum(r["tpm"] * r["span_s"] for r in during) / beside.elapsed == pytest.approx(beside.tpm, rel=1e-9)


def test_a_job_whose_servers_do_not_fit_runs_out_of_memory_when_it_starts_them():
    """2.5 GB and no swap hold the users and the SGA, not CTAS's 256 PX servers: out of memory once they start,
    reported as that outcome (with the account), not a figure."""
    r = run(_load({**TPCC, **CTAS, "hardware.memory.size": "2.5 GB", "hardware.memory.swap": "0 GB"}))
    assert r.status == "out_of_memory"
    assert "oracle server" in r.message and r.extra["memory"]["overcommit_mb"] > 0
    assert r.tpm is None
    # the job started, and when (the run's record says so), and the figures alone stay
    assert r.extra["background"] == {"workload": "ctas", "started_s": r.extra["alone_measured_s"]}
    assert r.extra["tpm_alone"] > 0


def test_same_seed_same_run():
    small = {**RMAN, "background.params.datafiles_mb": [8.0, 4.0]}
    a, b = (run(_load({**TPCC, **small, "run.max_time": "1 s"})) for _ in range(2))
    da, db = a.to_dict(), b.to_dict()
    da.pop("wall_time"), db.pop("wall_time")
    assert da == db


def test_the_report_says_what_the_job_did(ctas):
    beside, _ = ctas
    text = report.full(beside)
    x = beside.extra
    assert f"beside ctas: {x['tpm_change_pct']:+.1f}% against {x['tpm_alone']:,.0f}" in text
    assert f"elapsed of ctas, beside tpcc from {x['alone_measured_s']:g} s" in text
    assert "mean alone" in text and "Parallel: DOP 128" in text
    assert "background.workload ctas" in text and "background.params.table_size 512 MB" in text
    assert "not the 1% target" not in text   # (the window beside the job ends with it, not at a precision)
    # its interval spans the spawning phase and the scan's (measured ± 36% of the TPM): said to be the phases'
    assert beside.tpm_half_width > report.PHASES_WIDE * beside.tpm and "differ phase to phase" in text


# ------------------------------------------------------------ the code's miss rate of two workloads


def _two_codes():
    """A server built for a workload and a job beside it: its cores tell the two codes apart."""
    return System(_load({**TPCC, **CTAS}))


def _sessions_of_two(rate_a: float, rate_b: float):
    """A two-code server and a session of workload a's and one of b's, each code at its misses per instruction."""
    system = _two_codes()
    inst, sessions = system.instance, []
    for name, rate in (("a", rate_a), ("b", rate_b)):
        inst.serve(name)
        system.set_memory_behaviour(rate)
        sessions.append(inst.new_session())
    return (system, *sessions)


def test_each_workloads_code_runs_at_its_own_miss_rate():
    """Each workload's sessions run its own code: on idle cores a burst of n instructions takes n / (a strand's
    rate at its own code's miss rate) s, whoever the instance serves when the rate is set or changed (rman's
    compressors change rman's, named), and the memory counts each one's misses at its rate."""
    system, a, b = _sessions_of_two(0.010, 0.030)
    inst = system.instance
    system.set_memory_behaviour(0.020, "b")
    system.set_memory_behaviour(0.005, "a")   # (while serving b)
    group = system.cpu.groups[0]
    assert group.mpis == (0.005, 0.020) and system.memory.codes == [0.005, 0.020]
    a.cpu(3e6)
    b.cpu(1e6)
    system.env.run()
    alone = {code: group.table[group.strides[code]][0][code] for code in (0, 1)}   # one strand of the code busy
    assert alone[0] > alone[1]
    assert inst.db_cpu("a") == pytest.approx(3e6 / alone[0], rel=1e-9)
    assert inst.db_cpu("b") == pytest.approx(1e6 / alone[1], rel=1e-9)
    assert system.cpu.misses() == pytest.approx(3e6 * 0.005 + 1e6 * 0.020, rel=1e-9)


def test_a_third_workload_is_refused_where_the_cores_tell_two_apart():
    system = _two_codes()
    system.instance.serve("a")
    system.instance.serve("b")
    system.instance.serve("a")   # (again: its own code still)
    with pytest.raises(ValueError, match=r"serve\('c'\): the cores tell 2 workloads' code apart \(a, b\)"):
        system.instance.serve("c")


def test_sessions_count_their_cpu_only_where_workloads_share_the_instance():
    """One workload: a session's cpu() is the dispatcher's own (nothing between, the run unchanged). Beside
    another: it counts the strand-seconds its bursts took, its DB CPU."""
    system = _two_codes()
    system.set_memory_behaviour(0.001)
    inst = system.instance
    alone = inst.new_session()
    assert alone.cpu == system.dispatcher.run   # (one workload: the dispatcher's own method, nothing between)
    inst.serve("tpcc")
    counted = inst.new_session()
    counted.cpu(2e6)
    counted.cpu(1e6, 0.5)
    system.env.run()
    assert inst.db_cpu("tpcc") == pytest.approx(system.cpu.strand_time()[0])   # (both on strands at once)
    assert system.cpu.instructions_retired() == pytest.approx(3e6)


# ------------------------------------------------------------ bad input


@pytest.mark.parametrize("settings, path, says", [
    ({"background.workload": "slob"}, "background.workload", "a batch job that runs to its end"),
    ({"background.workload": "rmn"}, "background.workload", "did you mean 'rman'"),
    ({"background.params.channels": 4}, "background.params", "a background.workload whose parameters"),
    ({"background.workload": "rman", "background.params.channels": 0}, "background.params.channels", "at least 1"),
    ({"background.workload": "rman", "background.params.channels": 2, "background.params.datafile_device": "tape"},
     "background.params.datafile_device", "one of the profile's devices"),
    ({"background.workload": "ctas", "background.params.table_size": "2 TB"}, "background.params.table_size",
     "at most the capacity"),
    ({"background.workload": "rman", "background.params.channels": 2,
      "database.parallel.parallel_degree_policy": "auto"}, "database.parallel.parallel_degree_policy",
     "for workloads tpcc and rman, each runs no parallel statement"),
])
def test_a_bad_background_is_refused_at_its_key(settings, path, says):
    with pytest.raises(ConfigError) as exc:
        _load({**TPCC, **settings})
    assert exc.value.path == path and says in str(exc.value)


def test_a_background_job_beside_a_batch_job_is_refused():
    with pytest.raises(ConfigError) as exc:
        _load({"channels": 2, **CTAS}, "rman")
    assert exc.value.path == "workload" and "a steady-state workload (slob, tpcc)" in str(exc.value)


def test_a_setting_only_the_job_reads_is_taken_beside_it():
    """The instance's parts are the two workloads' together: a parallel setting for CTAS beside tpcc."""
    sc = _load({**TPCC, **CTAS, "database.parallel.parallel_degree_policy": "auto"})
    assert sc.label == "t5220/tpcc+ctas"
    d = sc.describe()
    assert d["background.workload"] == "ctas" and d["background.params.table_size"] == 512 * 2**20
    assert d["database.parallel.parallel_degree_policy"] == "auto"


def test_the_command_line_refuses_a_bad_job_before_running():
    res = CliRunner().invoke(cli.main, ["run", "--profile", "t5220", "--workload", "tpcc", "--set", "users=4",
                                        "--set", "background.workload=slob"])
    assert res.exit_code == 2
    assert "background.workload" in res.output and "a batch job" in res.output
    assert "throughput" not in res.output


def test_a_type_that_completed_nothing_alone_has_a_dash_for_its_mean_alone(ctas):
    """One user alone may complete no delivery in a short window, and then some beside the job (a random scenario
    found the report failing on it)."""
    r = copy.deepcopy(ctas[0])
    del r.extra["response_alone_ms"]["delivery"]
    row = next(line for line in report.full(r).splitlines() if line.startswith("delivery "))
    cells = row.split()   # type, count, mean, ± 95%, mean alone, p50, ...
    assert cells[4] == "—" and float(cells[2]) > 0


# ------------------------------------------------------------ each workload's own DB CPU

# CALIBRATE_IO's ramp over 10 GB of the T5220's array, 100 ms a level: about 0.7 s beside TPCC's 2 s alone
CALIBRATE = {"background.workload": "calibrate_io", "background.params.level_time": "100 ms",
             "background.params.database_size": "10 GB"}


@pytest.fixture(scope="module")
def calibrate():
    return run(_load({**TPCC, "run.max_time": "2 s", **CALIBRATE})), run(_load(_job_alone(CALIBRATE), "calibrate_io"))


def test_a_session_counts_the_strand_seconds_it_ran_for_its_workload():
    """Where workloads share the instance, each one's DB CPU is its sessions' strand time: on an idle machine a
    burst of n instructions of codes that miss alike takes n / (one strand's rate) s, whichever workload ran it;
    the two add up to every strand's time, and a reset clears them."""
    system, a, b = _sessions_of_two(0.001, 0.001)
    inst = system.instance
    a.cpu(3e6)
    b.cpu(1e6)
    system.env.run()
    rate = system.single_strand_rate()
    assert inst.db_cpu("a") == pytest.approx(3e6 / rate) and inst.db_cpu("b") == pytest.approx(1e6 / rate)
    assert inst.db_cpu("a") + inst.db_cpu("b") == pytest.approx(system.cpu.strand_time()[0])
    system.reset_stats()
    assert inst.db_cpu("a") == inst.db_cpu("b") == 0.0


def test_calibrate_io_beside_a_workload_counts_only_its_own_cpu(calibrate):
    """CALIBRATE_IO's DB CPU per level is its slaves' strand time, not the users' beside it: a read costs about
    what it costs alone (27 us; measured within 8%, a T2 strand slowed by the users on its pipeline), where every
    strand's time had put the users' ~15 CPU s/s beside 190 IOPS (a thousand times the cost)."""
    beside, alone = calibrate
    job = beside.extra["background"]
    for b, a in zip(job["level_table"], alone.extra["level_table"]):
        assert b["db_cpu_per_s"] / b["iops"] == pytest.approx(a["db_cpu_per_s"] / a["iops"], rel=0.15)
    assert job["iops_per_db_cpu"] == pytest.approx(alone.extra["iops_per_db_cpu"], rel=0.15)


def test_the_summary_gives_calibrate_ios_max_iops_beside_a_workload(calibrate):
    """CALIBRATE_IO's answer is its max_iops at a latency: beside a workload the summary (--brief) gives it from the
    job's own figures, named as the job's (it had given the elapsed time alone, the answer only in the level table)."""
    beside, _ = calibrate
    job = beside.extra["background"]
    assert job["iops"] > 0
    assert (f"I/O of calibrate_io: max_iops {job['iops']:,.0f}   actual_latency {job['actual_latency_ms']:.3f} ms"
            in report.summary(beside))


def test_out_of_memory_names_the_jobs_settings_too():
    """The users and CTAS's PX servers share the memory (the out-of-memory test above: 256 servers past 2.5 GB): the
    settings that decide it name the job's under background. beside the workload's (they named tpcc's alone)."""
    keys = cli._out_of_memory_keys("tpcc", _load({**TPCC, **CTAS}))
    assert "(without it, params.warehouses and background.params.table_size (in memory))" in keys
    assert "per session x params.users / params.sessions" in keys and "+ background.params.dop," in keys
    assert "background." not in cli._out_of_memory_keys("tpcc", _load(TPCC))


def test_a_change_that_rounds_to_nothing_prints_no_sign_of_loss(plain):
    """SLOB beside CALIBRATE_IO on flash lost 0.05% of its reads, printed '-0.0%' (a loss to the eye); a change
    that rounds to 0.0 prints +0.0%, the rest keep their sign."""
    for pct, says in ((-0.04, "+0.0%"), (0.04, "+0.0%"), (-0.05001, "-0.1%")):
        x = {"tpm_alone": 1000.0, "tpm_alone_half_width": 10.0, "alone_measured_s": 2.0, "tpm_change_pct": pct}
        assert report._alone(dataclasses.replace(plain, extra=x), "rman").startswith(f"beside rman: {says} ")


def test_the_settings_command_lists_the_background_job_for_a_steady_workload():
    """`oltpsim settings` is where --set's keys are listed (run --help sends the user there): background.workload
    and background.params were in none of its lists; they are for a steady workload, not for a batch job, which
    refuses a job beside it."""
    def listed(*args):
        out = CliRunner().invoke(cli.main, ["settings", *args])
        assert out.exit_code == 0, out.output
        return out.stdout

    for args in ((), ("--workload", "tpcc"), ("--workload", "slob", "--set", "sessions=2")):
        assert "background.workload " in listed(*args) and "background.params " in listed(*args)
    assert "background." not in listed("--workload", "rman")


def test_the_timeline_says_where_the_job_started(ctas):
    """The timeline's rows run on through both windows with nothing in a row to tell them apart: its heading says
    which rows are the workload alone (the 'alone' figures) and which are beside the job (every other figure)."""
    beside, _ = ctas
    text = report.timeline(beside)
    assert ("; to 4 s: tpcc alone (the figures 'alone' above); after 4 s: beside ctas (the others)"
            in text.splitlines()[0])
    assert beside.extra["background"]["started_s"] == 4.0


def test_the_figures_alone_have_their_units_in_compare_and_sweep():
    """compare and the sweep table print a figure's unit from its name: the throughput alone is in TPM as the
    throughput is, and the mean response times alone (a mapping in ms) in ms; they had printed with no unit."""
    from sim.result import figure_unit

    assert figure_unit("extra.tpm_alone") == figure_unit("extra.tpm_alone_half_width") == "TPM"
    assert figure_unit("extra.response_alone_ms.new_order") == "ms"
    assert figure_unit("extra.cpu_busy_alone_pct") == "%" and figure_unit("extra.alone_measured_s") == "s"
    assert figure_unit("extra.tpm_change_pct") == "%" and figure_unit("extra.background.elapsed_s") == "s"
    assert figure_unit("extra.background.px_servers_started") == ""


def test_a_jobs_parameter_given_as_the_workloads_points_to_background_params(tmp_path):
    """A plain --set key is the workload's parameter (table_size= is params.table_size): one of the background
    job's is still refused there, as unknown to tpcc, but named where it goes; in a scenario file too, blamed on
    the file. A key that no one has gets the plain refusal."""
    with pytest.raises(ConfigError) as exc:
        _load({**TPCC, "background.workload": "ctas", "table_size": "1 GB"})
    assert exc.value.path == "params.table_size" and str(exc.value).endswith(
        "; table_size is a parameter of the background job ctas: background.params.table_size")
    path = tmp_path / "s.yaml"
    path.write_text("profile: t5220\nworkload: tpcc\nparams: {users: 8, channels: 2}\nbackground: {workload: rman}\n")
    with pytest.raises(ConfigError) as exc:
        scenario.load(path)
    assert exc.value.file == str(path) and "background.params.channels" in str(exc.value)
    with pytest.raises(ConfigError) as exc:
        _load({**TPCC, "background.workload": "ctas", "channels": 2})
    assert "background" not in str(exc.value)


def test_a_change_within_the_interval_alone_is_said_to_be_within_noise(plain):
    """RMAN beside 16 users read '+2.5% against 142,350 ± 13,342 TPM alone', a gain to the eye within the noise of
    a 2-s window: a change no larger than the interval alone says so; a larger one is printed as it was, whatever
    the interval beside the job, whose batch means run through the job's phases (a T5440's TPM halved under CTAS,
    49,969 ± 117,404 beside, had read as within noise of both combined)."""
    x = {"tpm_alone": 1000.0, "tpm_alone_half_width": 30.0, "alone_measured_s": 2.0}
    for tpm, hw, noisy in ((1030.0, 40.0, True), (970.0, float("nan"), True), (1031.0, 0.0, False),
                           (500.0, 1200.0, False)):
        r = dataclasses.replace(plain, tpm=tpm, tpm_half_width=hw,
                                extra={**x, "tpm_change_pct": 100.0 * (tpm / 1000.0 - 1.0)})
        assert ("% (within noise) against 1,000 ± 30 TPM alone" in report._alone(r, "rman")) == noisy


def test_capacity_says_its_figures_are_those_beside_the_job():
    """capacity with a background job searches the load whose figures beside the job meet the limits (a backup
    window's service level); its answer said 'Capacity: users=24 (198,320 TPM)' as of the workload alone."""
    from sim import capacity as cp

    row = {"status": "ok", "workload": "tpcc", "tpm": 198320.0, "cpu_idle": 60.0,
           "extra.background.workload": "rman"}
    cap = cp.Capacity("users", [cp.parse_limit("cpu_busy <= 80%")], [cp.Probe(24, row, [])], cp.Probe(24, row, []),
                      None, 0.02)
    assert cap.answer().startswith("Capacity: users=24 (198,320 TPM), within cpu_busy <= 80% (40.0%). Its figures are "
                                   "the workload's beside rman, from the job's start to its end.")
    del row["extra.background.workload"]
    assert "beside" not in cap.answer()


def test_nothing_completed_beside_a_job_points_at_the_job_not_run_max_time(plain):
    """Users that think (TPC-C's 10-s+ times) may complete nothing beside a short job: that window is the job's, so
    run.max_time, which caps the window alone, gives no figure there; and a change against 0 alone is no change
    (it printed 'beside ctas: against 0 TPM alone')."""
    x = {"tpm_alone": 0.0, "tpm_alone_half_width": float("nan"), "alone_measured_s": 0.01,
         "background": {"workload": "ctas", "started_s": 0.01}}
    r = dataclasses.replace(plain, tpm=0.0, tpm_half_width=float("nan"), measured_time=0.69, elapsed=0.69, extra=x)
    text = report.summary(r)
    assert ("throughput: no transaction completed in the measured 0.69 s beside ctas (its elapsed); a longer job (or "
            "shorter think/keying times) gives a figure") in text
    assert ("beside ctas: no transaction completed alone either (its first 0.01 s measured, before the job started; "
            "a longer run.max_time gives a figure)") in text


def test_the_cpu_alone_is_beside_the_throughput_alone(plain, ctas):
    """The CPU the workload kept busy alone (100 - vmstat's id over the window alone: the plain run of the same
    seed's) was measured and kept, but printed nowhere: the beside line gives it, against vmstat's line of the
    window beside the job."""
    beside, _ = ctas
    x = beside.extra
    assert x["cpu_busy_alone_pct"] == pytest.approx(100.0 - plain.cpu_idle)
    assert f"before the job started; cpu busy {x['cpu_busy_alone_pct']:.0f}% then)" in report.summary(beside)


def test_compare_judges_the_throughput_alone_by_its_interval(ctas):
    """The throughput alone has its half-width beside it, as the TPM has: compare judges a change of it against
    both runs' (within noise here: the same run twice) and lists the half-width as no figure of its own."""
    from sim import compare

    beside, _ = ctas
    rows = {r["figure"]: r for r in compare.differences(beside, beside, every=True)}
    assert rows["extra.tpm_alone"]["beyond_noise"] is False and rows["tpm"]["beyond_noise"] is False
    assert "extra.tpm_alone_half_width" not in rows


def test_sqlldrs_input_file_too_large_names_the_key_that_moves_it_under_background():
    """SQL*Loader's input file past its device (the first device other than the table's, the T5220's internal
    drives) says which key places it elsewhere: beside a workload that key is background.params.input_device, where
    the refusal is blamed; a bare params.input_device would be the workload's, which tpcc refuses as unknown."""
    with pytest.raises(ConfigError) as exc:
        _load({**TPCC, "background.workload": "sqlldr", "background.params.data_size": "50 TB"})
    assert exc.value.path == "background.params.data_size"
    assert "(the first device other than the table's: background.params.input_device places it on another)" in \
        str(exc.value)


def test_a_setting_neither_workload_reads_points_to_both_workloads_settings_lists():
    """The refusal lists what tpcc and rman read together (rman's control file device among them), and points to
    where to read it again: `oltpsim settings --workload tpcc` alone lists no control file device, so the command
    named is each workload's, both lists together."""
    with pytest.raises(ConfigError) as exc:
        _load({**TPCC, **RMAN, "database.cpu_count": 8})
    says = str(exc.value)
    assert "The database settings tpcc and rman read (oltpsim settings --workload tpcc and --workload rman, " \
           "together): " in says and "database.control_file_device" in says
    res = CliRunner().invoke(cli.main, ["settings", "--workload", "tpcc"])
    assert res.exit_code == 0 and "database.control_file_device" not in res.output


@pytest.mark.parametrize("text, path, says", [
    ("background:\n  workload: ctas\n  table_size: 1 GB\n", "background.table_size",
     "; table_size is a parameter of the background job ctas: background.params.table_size"),
    ("  background:\n    workload: ctas\n", "params.background",
     "; background is a key of the scenario's top level, not of params: its indentation"),
    ("run:\n  max_time: 2 s\n  background:\n    workload: ctas\n", "run.background",
     "; background is a key of the scenario's top level, not of run: its indentation"),
], ids=["job-param-beside-workload", "under-params", "under-run"])
def test_a_background_key_in_the_wrong_place_says_where_it_goes(tmp_path, text, path, says):
    """A YAML slip that puts a key one level off: the job's parameter beside background.workload (not under params),
    or the background section indented under params or run. Each is an unknown key where it stands; the refusal
    says where it goes, as a job's parameter among the workload's does (the known keys listed there are the wrong
    section's, and name neither)."""
    f = tmp_path / "s.yaml"
    f.write_text("profile: t5220\nworkload: tpcc\nparams:\n  users: 8\n" + text)
    with pytest.raises(ConfigError) as exc:
        scenario.load(f)
    assert exc.value.file == str(f) and exc.value.path == path
    assert exc.value.problem.startswith("unknown key") and exc.value.problem.endswith(says)


def test_the_timeline_frames_beside_job_column_stands_beside_warmup(ctas):
    """The rows alone learn they were not beside the job only when it starts (rebase), after their figures: the
    column came after the waits of the window alone in timeline_frame(), among the wait events' columns; it is a
    flag of the row's window, as warmup is, and stands next to it."""
    beside, _ = ctas
    frame = beside.timeline_frame()
    assert list(frame.columns[:4]) == ["span_s", "warmup", "beside_job", "tpm"]
    assert not frame["beside_job"].iloc[0] and frame["beside_job"].iloc[-1]


def test_sensitivity_refuses_the_change_beside_the_job_as_its_metric(tmp_path):
    """extra.tpm_change_pct is a change already, signed: the rman run's -1.37% became -31.4% at one channel and
    +99.1% at three, a % change of a %, and a negative base ended the runs with 'a run that completes some work
    gives one'. It is refused before anything runs, pointing at the levels it is made of."""
    from sim.config import OltpsimError
    from sim.sensitivity import sensitivity

    data = {"profile": "t5220", "workload": "tpcc", "params": {"users": 4},
            "background": {"workload": "rman", "params": {"channels": 2}}}
    with pytest.raises(OltpsimError) as exc:
        sensitivity(data, ["background.params.channels"], metric="extra.tpm_change_pct", out=tmp_path / "s")
    assert str(exc.value).startswith("--metric extra.tpm_change_pct: a change already (")
    assert "tpm (beside the job) or extra.tpm_alone" in str(exc.value)
    assert not (tmp_path / "s").exists()


# ------------------------------------------------------------ a backup of the workload's database


def test_a_backup_beside_a_workload_backs_up_the_workloads_database():
    """RMAN beside tpcc without datafiles_mb reads the users' database: 24 users make 2 warehouses, stored in
    161.8 MB of 8-KB blocks, one file (under the 32-GB smallfile limit); with database.datafile_size, each table
    and index in files of that size and its rest. Given, datafiles_mb is the user's; alone, the paper's 17 files."""
    job = {"background.workload": "rman", "background.params.channels": 2}
    assert _load({**TPCC, **job}).background.datafiles_mb == pytest.approx((161.84375,))
    sized = _load({**TPCC, **job, "database.datafile_size": "64 MB"})   # (no db_cache: only the backup reads it)
    assert sized.background.datafiles_mb == pytest.approx((64.0, 3.9375, 4.296875, 42.65625, 1.40625, 36.4140625,
                                                           9.1328125))
    with pytest.raises(ConfigError, match="no database.datafile_size for workload rman"):
        _load({"channels": 2, "database.datafile_size": "64 MB"}, "rman")   # (alone: its own files, given or not)
    assert _load({**TPCC, **RMAN}).background.datafiles_mb == (40.0, 20.0)
    assert sum(_load({"channels": 2}, "rman").params.datafiles_mb) == pytest.approx(32 * 1024, rel=0.02)


def test_a_backup_of_a_terabyte_schema_takes_the_fewest_equal_smallfiles():
    """SLOB's 1-TB schema as the fewest equal files of at most 4M - 1 blocks (32 GB less 8 KB at 8 KB blocks):
    33 files, not 32 of the limit and a 0.25-MB rest; the report's settings line cuts the list short."""
    sc = scenario.load(None, {"sessions": 8, "background.workload": "rman", "background.params.channels": 4},
                       profile="xeon-e5-2643v3-2s", workload="slob")
    files = sc.background.datafiles_mb
    assert len(files) == 33 and len(set(files)) == 1 and sum(files) == pytest.approx(2**20)
    assert files[0] * 2**20 <= (4 * 2**20 - 1) * 8192
    assert report._short(str(list(files))).endswith(", ... 33 in all]")


def test_each_workloads_code_has_its_own_cpi_stack(plain, rman):
    """Beside a backup the report gives each code's CPI stack, as per-process counters would: the users' code
    stalls its own 0.0102 misses an instruction at the window's latency (T2: one miss in flight, no overlap) and
    the compressors between their rate alone and two to a socket; the machine's CPI is a mean of the two. A run
    without a job has no such split."""
    from workloads import rman as rman_job, tpcc
    beside, _alone = rman
    x, cpu = beside.extra, _load(TPCC).profile.cpu
    stacks = x["cpi_by_workload"]
    assert set(stacks) == {"tpcc", "rman"} and "cpi_by_workload" not in plain.extra
    cycles = x["memory_latency_cycles"]
    users = tpcc.misses_per_instruction(cpu.llc_size, cpu.cores_per_socket)
    assert stacks["tpcc"]["cpi_data_stall"] == pytest.approx(users * cycles, rel=1e-9)
    one, two = (rman_job.compressor_misses_per_instruction(cpu.llc_size, k) * cycles for k in (1, 2))
    assert one <= stacks["rman"]["cpi_data_stall"] <= two
    assert min(s["cpi"] for s in stacks.values()) < x["cpi"] < max(s["cpi"] for s in stacks.values())
    assert "rman's code: CPI " in report.full(beside) and "tpcc's code" not in report.full(plain)
