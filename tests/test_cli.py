"""What each command prints and writes, and its exit status, for input it accepts (bad input: test_bad_input.py).

The runs are stubbed where the command's own logic is what is pinned: sim.run.run returns a hand-made Result,
so a test takes a scenario's resolution and no simulation."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

from sim import cli, report
from sim.result import Result
from tests.test_report import _steady_result

TPCC = ("--profile", "t5220", "--workload", "tpcc", "--set", "users=8")


def _stub_run(monkeypatch, make):
    """sim.run.run as `make(scenario)`, the scenarios it was given recorded."""
    import sim.run

    given = []

    def fake(sc, progress=None):
        given.append(sc)
        return make(sc)
    monkeypatch.setattr(sim.run, "run", fake)
    return given


def _outcome(status: str, message: str) -> Result:
    return dataclasses.replace(_steady_result(), status=status, message=message)


def test_run_prints_the_full_report_or_the_summary_and_writes_the_result_it_printed(monkeypatch, tmp_path):
    """`run` prints report.full of the run's Result, with --brief report.summary, exits 0 for an ok run, and
    --json writes that same Result as its JSON (nothing else on stdout: no progress bar off a terminal)."""
    r = _steady_result()
    _stub_run(monkeypatch, lambda sc: r)
    got = CliRunner().invoke(cli.main, ["run", *TPCC, "--json", str(tmp_path / "r.json")])
    assert got.exit_code == 0 and got.stdout == report.full(r) + "\n"
    assert json.loads((tmp_path / "r.json").read_text()) == json.loads(r.to_json())
    brief = CliRunner().invoke(cli.main, ["run", *TPCC, "--brief"])
    assert brief.exit_code == 0 and brief.stdout == report.summary(r) + "\n" != got.stdout


@pytest.mark.parametrize("seed", [0, 7])
def test_run_seed_is_the_scenarios_run_seed_zero_included(monkeypatch, seed):
    """--seed N is --set run.seed=N: the scenario run has seed N, 0 too (a falsy seed is still a seed given;
    the default is 1), and the same seed given both ways is one seed."""
    given = _stub_run(monkeypatch, lambda sc: _steady_result())
    assert CliRunner().invoke(cli.main, ["run", *TPCC, "--seed", str(seed)]).exit_code == 0
    assert CliRunner().invoke(cli.main, ["run", *TPCC, "--seed", str(seed), "--set", f"run.seed={seed}"]).exit_code == 0
    assert [sc.spec.run.seed for sc in given] == [seed, seed]


@pytest.mark.parametrize("status, message, says", [
    ("timeout", "not finished after 60 s simulated", "oltpsim: timeout: not finished after 60 s simulated\n"),
    ("error", "ZeroDivisionError: boom", "oltpsim: error: ZeroDivisionError: boom\n"),
    ("out_of_memory", "SGA 2 GB exceed physical memory",
     "oltpsim: out of memory: SGA 2 GB exceed physical memory; the settings that decide it: database.db_cache "
     "(without it, params.warehouses) + database.shared_pool (the SGA), database.server_memory per session x "
     "params.users / params.sessions (and a client process per user with params.users_on_host), "
     "hardware.memory.size, hardware.memory.swap\n"),
])
def test_run_without_an_answer_exits_1_saying_why_and_only_out_of_memory_names_memorys_settings(
        monkeypatch, status, message, says):
    """A run cut at run.max_time, one that failed and one out of memory give no answer: exit status 1 (2 is bad
    input), the outcome on stderr as one line; the keys that decide memory follow only an out-of-memory outcome
    (tpcc: its cache is its warehouses, its processes its users and sessions)."""
    _stub_run(monkeypatch, lambda sc: _outcome(status, message))
    got = CliRunner().invoke(cli.main, ["run", *TPCC])
    assert got.exit_code == 1 and got.stderr == says
    assert f"outcome: {status.upper().replace('_', ' ')}  {message}" in got.stdout


def test_the_out_of_memory_hint_names_each_workloads_own_cache_and_processes():
    """The workloads' cached data and processes in the hint: rman caches nothing of its own (no 'without it')
    and starts its channels; calibrate_io has no entry in either table: neither part."""
    rman = cli._out_of_memory_keys("rman")
    assert "database.db_cache + database.shared_pool" in rman and "per session x params.channels," in rman
    io = cli._out_of_memory_keys("calibrate_io")
    assert "database.db_cache + database.shared_pool" in io and "per session, hardware.memory.size" in io
    assert "database.db_cache (without it, params.table_size (in memory))" in cli._out_of_memory_keys("ctas")


def test_the_whole_schema_hint_is_for_slob_through_the_sga_with_no_cache_given():
    """SLOB's direct path reads do not go through the buffer cache: without database.db_cache its schema is not
    what fills memory, so no 'whole schema' hint; through the SGA it is."""
    from sim import scenario

    def hint(**sets):
        sc = scenario.load(None, {"sessions": 2, **sets}, profile="xeon-e5-2699v3-2s", workload="slob")
        return cli._whole_schema_cached("slob", sc)
    assert hint().startswith("; database.db_cache is not set, so the buffer cache holds the whole schema")
    assert hint(read_path="direct") == ""
    assert hint(**{"database.db_cache": "1 GB"}) == ""


def test_the_listings_give_each_profiles_cpus_and_each_workloads_parameters():
    """`profiles`: a line a profile, its cpu_count (the T5220's 64 strands, the UE10000's 16 CPUs) before its
    description; `profile show`: the strands as cpu_count, and one of a thing without a plural ('1 core x 1
    strand, 1 pipeline per core', '1 controller'); `workloads`: each parameter under its workload with its default."""
    from sim.hardware.profile import load_profile

    run = CliRunner()
    profiles = run.invoke(cli.main, ["profiles"]).stdout.splitlines()
    t5220 = load_profile("t5220").description
    assert f"{'t5220':20s}   64 CPUs  {t5220}" in profiles and any(line.startswith("ue10000 ") and " 16 CPUs  " in line
                                                                      for line in profiles)
    ue = run.invoke(cli.main, ["profile", "show", "ue10000"]).stdout
    assert "  cpu: 16 x UltraSPARC II, 1 core x 1 strand, 1 pipeline per core, 400 MHz" in ue
    assert "  cpu_count (strands the OS and Oracle see): 16\n" in ue and " on 1 controller\n" in ue
    t5 = run.invoke(cli.main, ["profile", "show", "t5220"]).stdout
    assert "8 cores x 8 strands, 2 pipelines per core" in t5 and "cpu_count (strands the OS and Oracle see): 64\n" in t5
    # the T5440's 188 ns is (150 + 3 x 200) / 4, memory interleaved over its four sockets: the file's two beside it
    # (it printed 188 ns alone, beside a file that says 150); one socket's latency is the file's
    assert "latency 188 ns = 263 cycles (interleaved over 4 sockets: local 150 ns, remote 200 ns)" in run.invoke(
        cli.main, ["profile", "show", "t5440"]).stdout
    assert "latency 105 ns = 147 cycles, bandwidth" in t5
    listed = run.invoke(cli.main, ["workloads"]).stdout.splitlines()
    tpcc = listed.index(next(line for line in listed if line.startswith("tpcc: ")))
    params = [line.split()[:2] for line in listed[tpcc + 1:] if line.startswith("    ")][:3]
    assert ["users", "(omit)"] not in params and params and params[0][0] == "users", params


def test_the_workloads_listing_gives_each_workload_a_whole_sentence():
    """`workloads` heads each workload with its module docstring's first line: where that line was the start of
    a sentence running on (create_index: '... consumers sort their key range and'), the listing cut it off mid-
    sentence. Every heading ends with a full stop."""
    import workloads as wl

    listed = CliRunner().invoke(cli.main, ["workloads"]).stdout.splitlines()
    heads = [line for line in listed if not line.startswith(" ")]
    assert [h.split(":")[0] for h in heads] == list(wl.names())
    assert [h for h in heads if not h.endswith(".")] == []


def test_the_experiments_listing_marks_the_quick_ones(monkeypatch):
    """`experiments`: each experiment's id, rows and title, 'quick' before the title of one with quick: true
    (what --quick runs: tseries.oltp_users) and blanks before another's (itanium.tpcc)."""
    from sim import experiments as ex

    paths = {k: v for k, v in ex.experiment_paths().items() if k in ("tseries.oltp_users", "itanium.tpcc")}
    monkeypatch.setattr(ex, "experiment_paths", lambda: paths)
    lines = CliRunner().invoke(cli.main, ["experiments"]).stdout.splitlines()
    # id (34 columns), rows (8, right), two spaces, then 'quick ' or six blanks: the title from column 51
    assert [(line[:35], line[35:45], line[45:51]) for line in lines] == [
        (f"{'itanium.tpcc':34s} ", "  2 rows  ", "      "), (f"{'tseries.oltp_users':34s} ", "  4 rows  ", "quick ")]
    assert lines[0][51:].startswith("HP rx5670") and lines[1][51:].startswith("T5220: ")


def test_the_settings_of_a_workload_are_those_it_reads_and_the_note_goes_once_its_params_are_given():
    """`settings --workload W` lists only what W reads (tpcc reads no database.cpu_count: not listed, though the
    whole list has it); a workload whose parameters decide what it reads (slob: idle()) says so unless they are
    given with --set."""
    def listed(*args):
        out = CliRunner().invoke(cli.main, ["settings", *args])
        assert out.exit_code == 0, out.output
        return out.stdout

    assert "database.cpu_count " in listed() and "database.cpu_count " not in listed("--workload", "tpcc")
    assert listed("--workload", "slob").endswith("--set PARAM=VALUE narrows the list)\n")
    assert "idle()" not in listed("--workload", "slob", "--set", "sessions=2", "--set", "read_path=direct")


def _serial_sweep(monkeypatch, runs):
    """`sweep` with its runs in this process (sim.run.run stubbed: `runs(users, profile, nth run of the point)`
    makes each Result) and the executor it was asked for recorded."""
    from sim import sweep as sw

    asked, calls, sweep = [], {}, sw.sweep

    def serial(*args, **kw):
        asked.append((kw["executor"], kw["workers"]))
        return sweep(*args, **{**kw, "executor": "serial", "workers": None})

    def make(sc):
        point = (sc.params.users, sc.profile.name)
        calls[point] = calls.get(point, -1) + 1
        return runs(*point, calls[point])
    monkeypatch.setattr(sw, "sweep", serial)
    _stub_run(monkeypatch, make)
    return asked


def test_sweep_prints_a_row_a_point_with_its_runs_interval_and_outcome_and_names_the_unsteady(monkeypatch, tmp_path):
    """Three points of two replications: 8 users at 8,000 and 8,100 TPM (mean 8,050, a half-width of
    t(0.975, 1) x 70.7 / sqrt 2 = 12.71 x 50 = 635), 9 out of memory in both (0/2 ok, no figure nor '± nan', the
    outcome without the point its message names), 10 found not steady by the response time law in one run. The
    point whose law had no verdict (None, one batch) is not named; one point is 'point', not 'points'. Exit 0:
    some point gave figures."""
    def runs(users, _profile, nth):
        r = dataclasses.replace(_steady_result(), tpm=1000.0 * users + 100.0 * nth)
        if users == 9:
            # (a message naming its point, as a refused point's does: the row names it already)
            return dataclasses.replace(r, status="out_of_memory", message="<scenario> [users=9]: SGA exceeds memory",
                                       tpm=None)
        r.extra = {**r.extra, "response_time_law": {"steady": None if users == 8 else nth == 0}}
        return r
    _serial_sweep(monkeypatch, runs)
    got = CliRunner().invoke(cli.main, ["sweep", *TPCC[:4], "--vary", "users=8,9,10", "-r", "2", "--out", str(tmp_path)])
    assert got.exit_code == 0, got.output
    rows = [line.split() for line in got.stdout.splitlines()[2:5]]
    assert rows == [["0", "8", "2/2", "8,050", "±", "635", "array", "%b", "42%"],
                    ["1", "9", "0/2", "out_of_memory:", "SGA", "exceeds", "memory"],
                    ["2", "10", "2/2", "10,050", "±", "635", "array", "%b", "42%"]], got.stdout
    assert got.stdout.splitlines()[5].startswith("not steady by the response time law (N = X (R + Z)): point 2, whose")


def test_sweep_exits_1_on_a_crashed_run_and_asks_the_executor_given(monkeypatch, tmp_path):
    """One run of two raising (a fault of oltpsim's, not an outcome): exit 1, saying how many of how many; the profile
    is what is varied, so --profile names the scenario and is not a fixed setting too. --metric names a figure other
    than the workload's: summary.csv has it. --dask-local N asks for a Dask cluster of N (refused here to run
    nothing)."""
    from sim.config import OltpsimError

    def runs(_users, profile, _nth):
        if profile == "t5120":
            raise ZeroDivisionError("boom")
        return _steady_result()
    asked = _serial_sweep(monkeypatch, runs)
    metric = "wait.log file sync.time_s"
    got = CliRunner().invoke(cli.main, ["sweep", *TPCC, "--vary", "profile=t5220,t5120", "--metric", metric,
                                        "--out", str(tmp_path)])
    assert got.exit_code == 1 and f"oltpsim: 1 of 2 runs ended in an error (the tracebacks are in {tmp_path}" in got.stderr
    assert metric in (tmp_path / "summary.csv").read_text().splitlines()[0]
    assert " 20" in got.stdout.splitlines()[2] and asked == [("process", None)]

    def refuse(*_a, **kw):
        asked.append((kw["executor"], kw["workers"]))
        raise OltpsimError("no cluster here")
    from sim import sweep as sw
    monkeypatch.setattr(sw, "sweep", refuse)
    assert CliRunner().invoke(cli.main, ["sweep", *TPCC, "--vary", "users=8,9", "--dask-local", "2"]).exit_code == 2
    assert asked[-1] == ("dask", 2)


def test_on_a_terminal_a_run_shows_its_progress_in_percent_and_off_one_no_bar(monkeypatch):
    """_with_progress: on a terminal a bar of 100 steps moves to 100 x the fraction the run reports (0.25 -> 25,
    1.0 -> 100) and the run's result comes back; off one (a pipe, a file, CI) the run gets no callback."""
    import io
    import sys

    import tqdm

    bars = []

    class Bar:
        def __init__(self, total, **_kw):
            self.total, self.n, self.shown = total, 0, []
            bars.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *_exc):
            return False

        def refresh(self):
            self.shown.append(self.n)

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr(tqdm, "tqdm", Bar)
    assert cli._with_progress(lambda cb: cb, "x") is None   # (pytest's capture is no terminal)
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert cli._with_progress(lambda cb: [cb(f) for f in (0.25, 1.0)] and "done", "x") == "done"
    assert [(b.total, b.shown) for b in bars] == [(100, [25, 100])]


def test_reproduce_prints_the_scoreboard_writes_it_as_json_and_a_plot_a_table(monkeypatch, tmp_path):
    """`reproduce ID --seeds 3 --json F --plot DIR` (the runs and scoring stubbed: what is pinned is the command's
    wiring): the runs are asked for 3 seeds, the scoreboard is printed, the JSON holds the figures, claims and
    summary line, and each table's plot is drawn in DIR and named on stdout."""
    from sim import experiments as ex

    asked = {}
    monkeypatch.setattr(ex, "run_experiments", lambda exps, jobs, progress, seeds: asked.update(
        ids=[e.id for e in exps], jobs=jobs, seeds=seeds) or {})
    monkeypatch.setattr(ex, "score", lambda e, results: [f"figure of {e.id}"])
    monkeypatch.setattr(ex, "check_claims", lambda e, figures: [])
    monkeypatch.setattr(ex, "scoreboard", lambda figures, verdicts: f"BOARD {figures}")
    monkeypatch.setattr(ex, "figures_to_dicts", lambda figures: [{"f": f} for f in figures])
    monkeypatch.setattr(ex, "summary_line", lambda figures, verdicts: "1 figure")
    monkeypatch.setattr(ex, "plot", lambda e, figures, path: path)
    out = tmp_path / "board.json"
    got = CliRunner().invoke(cli.main, ["reproduce", "itanium.tpcc", "-j", "2", "--seeds", "3", "--json", str(out),
                                        "--plot", str(tmp_path / "plots")])
    assert got.exit_code == 0, got.output
    assert asked == {"ids": ["itanium.tpcc"], "jobs": 2, "seeds": 3}
    assert got.stdout == f"BOARD ['figure of itanium.tpcc']\nplot: {tmp_path / 'plots' / 'itanium.tpcc.png'}\n"
    assert json.loads(out.read_text()) == {"figures": [{"f": "figure of itanium.tpcc"}], "claims": [],
                                           "summary": "1 figure"}


def test_capacity_prints_each_load_as_it_runs_and_the_table_and_answer_exiting_1_without_one(monkeypatch, tmp_path):
    """`capacity` (the search stubbed: two loads, 8 users meeting cpu_busy <= 80% at 50% busy, 16 breaking it at
    90%): each load on stderr as it ran, with its figure and verdict; the table a row a load with its TPM, figure,
    busiest resource and verdict; the answer last. --precision 0% (a bisection to the last user) and --seed 0 reach
    the search. With no load meeting the limits (best None) it exits 1."""
    from sim import capacity as cp

    asked = {}

    def search(scenario, lims, setting, *, start, stop, precision, overrides, workers, on_probe, progress):
        asked.update(precision=precision, seed=overrides.get("run.seed"), profile=overrides.get("profile"))
        probes = [cp.Probe(n, {"status": "ok", "workload": "tpcc", "tpm": 1000.0 * n, "cpu_idle": idle,
                               "busiest": "strands (mpstat)", "busiest_pct": 100.0 - idle}, broke)
                  for n, idle, broke in ((8, 50.0, []), (16, 10.0, ["cpu_busy 90% > 80%"]))]
        for p in probes:
            on_probe(p)
        return cp.Capacity(setting, lims, probes, probes[0] if asked["seed"] == "0" else None, probes[1], precision)
    monkeypatch.setattr(cp, "capacity", search)
    args = ["capacity", *TPCC[:4], "--limit", "cpu_busy <= 80%", "--precision", "0%"]
    got = CliRunner().invoke(cli.main, [*args, "--seed", "0"])
    assert got.exit_code == 0 and asked == {"precision": 0.0, "seed": "0", "profile": "t5220"}, got.output
    assert got.stderr.splitlines() == ["users=8: cpu_busy 50.0% -> meets",
                                     "users=16: cpu_busy 90.0% -> breaks: cpu_busy 90% > 80%"]
    rows = [line.split() for line in got.stdout.splitlines()]
    assert rows[0] == ["users", "TPM", "cpu_busy", "busiest", "meets"]
    assert rows[2:4] == [["8", "8,000", "50.0%", "strands", "(mpstat)", "50%", "yes"],
                         ["16", "16,000", "90.0%", "strands", "(mpstat)", "90%", "no:", "cpu_busy", "90%", ">", "80%"]]
    assert got.stdout.splitlines()[4] == ("Capacity: users=8 (8,000 TPM), within cpu_busy <= 80% (50.0%). At 16 (8 more): "
                                          "cpu_busy 90% > 80%.")
    assert CliRunner().invoke(cli.main, args).exit_code == 1


def test_a_points_setting_prints_as_given_a_whole_float_as_a_whole_number_and_none_as_a_dash():
    """_point_value: a setting a --points file left empty (None, or NaN in a column of numbers) is the scenario's:
    '—'; a whole number that a column with an empty cell made a float (8.0) prints 8; others as they are."""
    assert [cli._point_value(v) for v in (None, float("nan"), 8.0, 0.5, 8, "2 GB")] == ["—", "—", 8, 0.5, 8, "2 GB"]
    assert type(cli._point_value(8.0)) is int


def test_reproduce_refuses_json_onto_a_profile_its_experiment_reads(monkeypatch, tmp_path):
    """An experiment of one's own names a profile YAML beside it: `reproduce --json` onto that profile had replaced
    it with the scoreboard, after every row ran. Refused before any row runs, the profile untouched."""
    from sim import experiments as ex
    from tests.test_experiments import _my_table

    profile = tmp_path / "my-t5220.yaml"
    profile.write_text((cli.Path(__file__).resolve().parents[1] / "hardware_profiles" / "t5220.yaml").read_text())
    before = profile.read_text()
    (tmp_path / "mine.yaml").write_text(_my_table(1000, 1000).replace("profile: t5220", "profile: my-t5220.yaml"))
    (exp,) = ex.select([str(tmp_path / "mine.yaml")])
    assert exp.scenario["profile"] == str(profile)   # (the file's relative path, made the one beside it)
    monkeypatch.setattr(ex, "run_experiments", lambda *a, **k: pytest.fail("ran"))
    got = CliRunner().invoke(cli.main, ["reproduce", str(tmp_path / "mine.yaml"), "--json", str(profile)])
    assert got.exit_code == 2 and "that is the input file" in got.stderr and profile.read_text() == before


def test_sweep_refuses_a_points_file_its_folder_would_replace(monkeypatch, tmp_path):
    """--points out/summary.csv: the command reads the points itself, so sweep() saw a list and the file was replaced
    by the sweep's summary. Refused before any run, the file untouched."""
    points = tmp_path / "summary.csv"
    points.write_text("users\n8\n16\n")
    _serial_sweep(monkeypatch, lambda *a: pytest.fail("ran"))
    got = CliRunner().invoke(cli.main, ["sweep", *TPCC[:4], "--points", str(points), "--out", str(tmp_path)])
    assert got.exit_code == 2 and "would replace this input file" in got.stderr
    assert points.read_text() == "users\n8\n16\n"


def test_a_sweep_that_varies_the_profile_needs_no_profile_option(monkeypatch, tmp_path):
    """--vary profile=t5220,t5440 names the profiles: a --profile as well had been demanded, then ignored. With
    neither, the scenario is incomplete: exit 2 before anything runs."""
    seen = []
    _serial_sweep(monkeypatch, lambda users, profile, nth: seen.append(profile) or _steady_result())
    got = CliRunner().invoke(cli.main, ["sweep", "--workload", "tpcc", "--set", "users=8",
                                        "--vary", "profile=t5220,t5440", "--out", str(tmp_path / "s")])
    assert got.exit_code == 0, got.output
    assert seen == ["t5220", "t5440"]
    got = CliRunner().invoke(cli.main, ["sweep", "--workload", "tpcc", "--vary", "users=8,16"])
    assert got.exit_code == 2 and "give a scenario file, or both --profile and --workload (or vary them)" in got.stderr


def test_the_sweep_table_gives_its_figures_unit_and_response_times_in_ms(monkeypatch, tmp_path):
    """--metric rt.new_order.mean printed 0.0123 with no unit (flat() keeps seconds): in ms, as the report and
    compare print response times, its unit in the header; TPM's header says TPM."""
    _serial_sweep(monkeypatch, lambda users, profile, nth: _steady_result())
    got = CliRunner().invoke(cli.main, ["sweep", *TPCC[:4], "--vary", "users=8", "--metric", "rt.new_order.mean",
                                        "--out", str(tmp_path / "a")])
    assert got.exit_code == 0, got.output
    head, _rule, row = got.stdout.splitlines()[:3]
    assert "rt.new_order.mean (ms)" in head and row.split()[:4] == ["0", "8", "1/1", "12.3"]
    got = CliRunner().invoke(cli.main, ["sweep", *TPCC[:4], "--vary", "users=8", "--out", str(tmp_path / "b")])
    assert "tpm (TPM)" in got.stdout.splitlines()[0] and got.stdout.splitlines()[2].split()[3] == "123,456"
