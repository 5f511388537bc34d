"""The capacity search: it brackets the load where a limit first breaks, as closely as asked, in few
runs; limits are read in the units people write; and its runs are the runs `oltpsim run` gives."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import capacity as cp
from sim.config import ConfigError, OltpsimError


def _threshold(t: int, rounds: list | None = None):
    """A load that meets its limit up to t users and breaks it above (each round's values kept in `rounds`)."""
    def run_at(values):
        if rounds is not None:
            rounds.append(list(values))
        return [cp.Probe(n, {"status": "ok"}, [] if n <= t else [f"over {t}"]) for n in values]
    return run_at


@settings(max_examples=200, deadline=None)
@given(t=st.integers(1, 200_000), start=st.integers(1, 1000), precision=st.sampled_from([0.0, 0.01, 0.02, 0.1]))
def test_the_search_brackets_the_threshold_within_its_precision_in_few_runs(t, start, precision):
    probes, best, past = cp.search(_threshold(t), start, 1_000_000, precision)
    if start > t:
        assert best is None and past.value == start and len(probes) == 1
        return
    assert best.value <= t < past.value                                      # met at best, broken at past
    assert past.value - best.value <= max(1, math.floor(precision * best.value))
    if precision == 0:
        assert (best.value, past.value) == (t, t + 1)
    # doubling up to the first break, then bisecting the last doubling (at most as wide as the value): a number
    # of runs logarithmic in the value, never a value twice
    assert len(probes) <= math.log2(2 * past.value / start) + math.log2(2 * past.value) + 2
    assert len({p.value for p in probes}) == len(probes)


@settings(max_examples=200, deadline=None)
@given(t=st.integers(1, 200_000), start=st.integers(1, 1000), precision=st.sampled_from([0.0, 0.02, 0.1]),
       width=st.integers(2, 8))
def test_runs_at_once_bracket_the_same_threshold_in_fewer_rounds_never_past_a_doubling(t, start, precision, width):
    rounds = []
    probes, best, past = cp.search(_threshold(t, rounds), start, 1_000_000, precision, width)
    if start > t:
        assert best is None and rounds == [[start]]
        return
    assert best.value <= t < past.value and past.value - best.value <= max(1, math.floor(precision * best.value))
    assert all(len(r) <= width for r in rounds) and len({p.value for p in probes}) == len(probes)
    serial = []
    cp.search(_threshold(t, serial), start, 1_000_000, precision)
    assert len(rounds) <= len(serial)                       # never more rounds than one run at a time
    met = start   # growing, no run goes past twice the largest load met so far (the costly runs)
    for r in rounds[1:]:
        assert max(r) <= 2 * met
        met = max([met, *(n for n in r if n <= t)])


def test_a_limit_never_broken_within_the_range_says_the_capacity_may_be_higher():
    probes, best, past = cp.search(_threshold(10**9), 3, 100, 0.02)
    assert past is None and best.value == 100 and [p.value for p in probes] == [3, 6, 12, 24, 48, 96, 100]


@pytest.mark.parametrize("text, figure, op, value", [
    ("rt.new_order.p90 <= 5 s", "rt.new_order.p90", "<=", 5.0),
    ("rt.payment.mean<500 ms", "rt.payment.mean", "<", 0.5),
    ("cpu_busy <= 80%", "cpu_busy", "<=", 80.0),
    ("cpu_idle>=20%", "cpu_idle", ">=", 20.0),
    ("device.array.util_pct < 60%", "device.array.util_pct", "<", 60.0),
    ("device.array.avg_response_ms <= 0.02 s", "device.array.avg_response_ms", "<=", 20.0),
    ("wait.log file sync.avg_ms <= 5 ms", "wait.log file sync.avg_ms", "<=", 5.0),
    ("run_queue <= 64", "run_queue", "<=", 64.0),
    ("core_utilisation_mean <= 75%", "core_utilisation_mean", "<=", 75.0),              # a percentage, as cpu_*
    ("tpm >= 1e5", "tpm", ">=", 1e5),
    ("wait.log file sync.time_s <= 2 min", "wait.log file sync.time_s", "<=", 120.0),   # seconds by its name
    ("wall_time <= 500 ms", "wall_time", "<=", 0.5),
    ("throughput_per_s >= 100", "throughput_per_s", ">=", 100.0),                       # a rate, not a time
])
def test_a_limit_is_read_in_its_figures_own_unit(text, figure, op, value):
    lim = cp.parse_limit(text)
    assert (lim.figure, lim.op) == (figure, op) and lim.value == pytest.approx(value)


@pytest.mark.parametrize("text, fragment", [
    ("cpu_busy <= 80", "expected a percentage from 0% to 100%, like '80%'"),
    ("cpu_busy <= 180%", "expected a percentage from 0% to 100%"),       # every run meets it
    ("rt.payment.mean <= -5 ms", "expected a time with a unit"),          # no run meets it
    ("rt.new_order.p90 <= 5", "expected a time with a unit"),
    ("tpm >= 5 s", "expected a plain number"),
    ("cpu_bussy <= 80%", "(did you mean 'cpu_busy'?)"),
    ("cpu_busy = 80%", "OP one of <=, <, >=, >"),
    ("<= 80%", "expected FIGURE OP VALUE"),
    ("tpm >= nan", "expected a plain number"),
    ("run_queue <= inf", "expected a plain number"),
])
def test_a_bad_limit_is_refused_naming_itself_and_what_is_expected(text, fragment):
    with pytest.raises(OltpsimError) as info:
        cp.parse_limit(text)
    assert text in str(info.value) and fragment in str(info.value), str(info.value)


def test_a_limit_holds_only_on_a_number_that_meets_it():
    lim = cp.parse_limit("cpu_busy <= 80%")
    assert lim.holds({"cpu_idle": 20.0}) and not lim.holds({"cpu_idle": 19.9})
    assert not cp.parse_limit("tpm >= 1").holds({"tpm": float("nan")})   # no figure meets no limit


QUICK = {"profile": "t5220", "workload": "tpcc", "think_time": "0 s", "keying_time": "0 s", "run.warmup": "1 s",
         "run.batch": "0.5 s", "run.max_time": "4 s", "run.target_half_width": "50%"}


def test_the_capacity_is_met_by_its_run_and_broken_just_above_by_oltpsim_runs_own(tmp_path):
    from sim import scenario
    from sim.run import run

    # New-Order's p90 on the T5220 with no think time: ~11 ms up to 16 users, then rising as strands share pipelines
    cap = cp.capacity({}, ["rt.new_order.p90 <= 15 ms"], start=8, precision=0.1, overrides=QUICK)
    best, past = cap.best, cap.past
    assert best is not None and past is not None and best.meets and not past.meets
    assert past.value - best.value <= max(1, math.floor(0.1 * best.value))
    assert all(p.meets == (p.value <= best.value) for p in cap.probes)     # monotone here: a clean bracket
    for p in (best, past):   # each probe is the run `oltpsim run --set users=N` gives, figure for figure
        alone = run(scenario.load(None, {**QUICK, "users": p.value}))
        assert alone.flat()["rt.new_order.p90"] == p.row["rt.new_order.p90"] and alone.tpm == p.row["tpm"]
    assert cap.answer().startswith(f"Capacity: users={best.value} (")
    table = cap.table
    assert list(table["users"]) == sorted(p.value for p in cap.probes) and table["meets"].sum() >= 1


def test_runs_on_two_workers_give_the_figures_of_runs_in_this_process():
    limit = ["rt.new_order.p90 <= 15 ms"]
    serial = cp.capacity({}, limit, start=8, precision=0.1, overrides=QUICK)
    both = cp.capacity({}, limit, start=8, precision=0.1, overrides=QUICK, workers=2)
    assert both.best.meets and not both.past.meets
    assert both.past.value - both.best.value <= max(1, math.floor(0.1 * both.best.value))
    common = {p.value for p in serial.probes} & {p.value for p in both.probes}
    assert len(common) >= 2   # (8 and 16 at least) and a run is the same run wherever it ran
    rows = {p.value: p.row for p in serial.probes}
    assert all(p.row["tpm"] == rows[p.value]["tpm"] and p.row["events"] == rows[p.value]["events"]
               for p in both.probes if p.value in common)
    assert abs(both.best.value - serial.best.value) <= max(serial.past.value - serial.best.value,
                                                          both.past.value - both.best.value)


def test_a_refused_load_is_past_the_capacity_but_a_refused_start_is_bad_input():
    # 2 warehouses take 20 terminals with keying and think times: more users are refused, so the capacity is 20
    fixed = {"profile": "t5220", "workload": "tpcc", "warehouses": 2, "run.max_time": "2 s", "run.warmup": "1 s"}
    cap = cp.capacity({}, ["cpu_busy <= 100%"], start=5, precision=0.0, overrides=fixed)
    assert cap.value == 20 and cap.past.value == 21 and cap.past.broke[0].startswith("refused: ")
    with pytest.raises(ConfigError, match=r"^<command line>: database\.db_cache: got 'abc'"):
        cp.capacity({}, ["cpu_busy <= 80%"], overrides={**fixed, "database.db_cache": "abc"})
    with pytest.raises(OltpsimError, match="run.seed: a setting of how each run is measured, not of its load"):
        cp.capacity({}, ["cpu_busy <= 80%"], setting="run.seed", overrides=fixed)
    with pytest.raises(OltpsimError, match="extra.read_wait_event is text .* not a number"):
        cp.capacity({}, ["extra.read_wait_event <= 5"], setting="sessions", start=4, stop=4, overrides={
            "profile": "xeon-e5-2699v3-2s", "workload": "slob", "database.db_cache": "288 MB", "run.max_time": "0.2 s",
            "run.warmup": "0.1 s", "run.batch": "0.05 s", "run.min_batches": 3})
    with pytest.raises(OltpsimError, match="the setting the search varies"):
        cp.capacity({}, ["cpu_busy <= 80%"], overrides={**fixed, "users": 8})
    with pytest.raises(OltpsimError, match=r"capacity: think_time: 1 is refused: got 1 \(missing unit\).*meant for a whole-number setting"):
        cp.capacity({}, ["cpu_busy <= 80%"], setting="think_time", overrides={**fixed, "users": 8})


def test_cli_capacity_prints_the_bracket_and_writes_json(tmp_path):
    from tests.test_bad_input import _cli

    sets = [a for k, v in QUICK.items() if k not in ("profile", "workload") for a in ("--set", f"{k}={v}")]
    out = _cli("capacity", "--profile", "t5220", "--workload", "tpcc", *sets, "--limit", "rt.new_order.p90 <= 15 ms",
               "--from", "16", "--precision", "25%", "--json", str(tmp_path / "cap.json"))
    assert out.returncode == 0, out.stderr[-500:]
    data = json.loads((tmp_path / "cap.json").read_text())
    assert out.stdout.strip().splitlines()[-1] == data["answer"] and data["capacity"] < data["past"]
    # each run's busiest resource in its row: the answer's row shows the first the answer names
    lines = out.stdout.splitlines()
    assert lines[0].split()[-2:] == ["busiest", "meets"]
    first = data["answer"].split("Busiest there: ", 1)[1].split(",")[0].rstrip(".")
    assert any(line.split()[0] == str(data["capacity"]) and f" {first} " in line for line in lines[2:-1]), first
    out = _cli("capacity", "--profile", "t5220", "--workload", "tpcc", "--limit", "cpu_busy <= 80")
    assert out.returncode == 2 and "expected a percentage" in out.stderr and "Traceback" not in out.stderr


def _cap(*probes, limits=("cpu_busy <= 80%",)):
    """A Capacity from synthetic probes, as the search would leave it."""
    ok = [p for p in probes if p.meets]
    past = [p for p in probes if not p.meets]
    return cp.Capacity("users", [cp.parse_limit(t) for t in limits], list(probes), ok[-1] if ok else None,
                       past[0] if past else None, 0.02)


def test_the_json_is_standard_json_a_figure_that_is_not_a_number_is_null():
    row = {"status": "ok", "workload": "slob", "cpu_idle": 50.0, "extra.iops": 0.0,
           "extra.avg_read_wait_ms": float("nan"), "tpm_half_width": float("inf")}
    data = json.loads(json.dumps(cp.to_dict(_cap(cp.Probe(4, row, []))), allow_nan=False))
    figures = data["probes"][0]["figures"]
    assert figures["extra.avg_read_wait_ms"] is None and figures["tpm_half_width"] is None


def test_cli_capacity_refuses_two_different_seeds_as_run_does():
    from tests.test_bad_input import _cli

    out = _cli("capacity", "--profile", "t5220", "--workload", "tpcc", "--limit", "cpu_busy <= 80%",
               "--seed", "3", "--set", "run.seed=4")
    assert out.returncode == 2 and "--seed 3 and --set run.seed=4: two different seeds" in out.stderr, out.stderr
    assert "users=" not in out.stderr   # refused before any run


def test_an_event_missing_from_a_later_run_is_no_waits_and_a_misspelt_one_is_refused_at_the_end(monkeypatch):
    import sim.run
    from sim.result import Result

    calls = []

    def fake_run(sc, progress=None):   # 'log file sync' is waited on at the first load only
        calls.append(sc)
        events = [{"event": "log file sync", "waits": 10, "time_s": 0.01, "avg_ms": 1.0, "pct_call_time": 5.0}]
        return Result("x", "t5220", "tpcc", {}, tpm=1000.0 * len(calls), cpu_idle=50.0,
                      top_events=events if len(calls) == 1 else [])

    monkeypatch.setattr(sim.run, "run", fake_run)
    cap = cp.capacity({}, ["wait.log file sync.avg_ms <= 5 ms"], start=4, stop=16, precision=0.0, overrides=QUICK)
    assert cap.value == 16 and all(p.broke == [] for p in cap.probes)   # no waits: met
    assert cap.probes[1].row.get("wait.log file sync.avg_ms") is None   # the rows hold what the runs measured
    assert "No run of the search waited on" not in cap.answer()   # the first did: no note (mutation round)
    calls.clear()   # no run had it (misspelt, or a load never reached): the answer says so, with the events seen
    cap = cp.capacity({}, ["wait.log file synk.avg_ms <= 5 ms"], start=4, stop=16, overrides=QUICK)
    assert "No run of the search waited on 'log file synk'" in cap.answer()
    assert "did you mean 'wait.log file sync.avg_ms'" in cap.answer()


@pytest.mark.parametrize("limit, problem", [
    ("device.arrya.util_pct < 60%", "no device 'arrya' (did you mean 'array'?) in profile t5220; expected one of "
                                    "array, internal"),
    ("rt.neworder.p90 <= 5 s", "workload tpcc has no transaction type 'neworder' (did you mean 'new_order'?)"),
])
def test_a_device_or_transaction_type_no_run_can_have_is_refused_before_any_run(monkeypatch, limit, problem):
    import sim.run
    monkeypatch.setattr(sim.run, "run", lambda *a, **k: pytest.fail("a run started"))
    with pytest.raises(OltpsimError) as info:
        cp.capacity({"profile": "t5220", "workload": "tpcc"}, [limit], overrides=QUICK)
    assert problem in str(info.value)
    with pytest.raises(OltpsimError, match="workload slob has no transaction type 'x'; expected none"):
        cp.capacity({"profile": "xeon-e5-2643v3-2s", "workload": "slob"}, ["rt.x.p90 <= 5 s"], setting="sessions",
                    overrides={"run.max_time": "1 s"})


@pytest.mark.parametrize("limits, problem", [
    (["cpu_busy <= 80%", "cpu_busy <= 50%"], "cpu_busy is limited twice from one side ('cpu_busy <= 80%' too)"),
    (["cpu_busy <= 80%", "cpu_busy >= 90%"], "no cpu_busy meets both it and 'cpu_busy <= 80%'"),
    (["tpm > 100", "tpm < 100"], "no tpm meets both it and 'tpm > 100'"),
])
def test_limits_on_one_figure_that_repeat_or_exclude_each_other_are_refused_before_any_run(monkeypatch, limits, problem):
    import sim.run
    monkeypatch.setattr(sim.run, "run", lambda *a, **k: pytest.fail("a run started"))
    with pytest.raises(OltpsimError) as info:
        cp.capacity({}, limits, overrides=QUICK)
    assert problem in str(info.value)


def test_a_band_on_one_figure_is_two_limits_a_run_can_meet():
    for band in (["cpu_busy >= 50%", "cpu_busy <= 80%"], ["tpm >= 100", "tpm <= 100"]):   # (raises if refused)
        assert cp._check_one_figure_once([cp.parse_limit(t) for t in band]) is None


def test_a_response_time_no_transaction_gave_is_not_called_a_misspelling():
    # default think times, a 1.5 s run at 1 user: no New-Order completes, so the run has no rt.new_order.*
    short = {"profile": "t5220", "workload": "tpcc", "run.warmup": "0.5 s", "run.batch": "0.5 s",
             "run.max_time": "1.5 s", "run.min_batches": 3}
    with pytest.raises(OltpsimError) as info:
        cp.capacity({}, ["rt.new_order.p90 <= 15 ms"], overrides=short)
    assert "the run at users=1 has no figure rt.new_order.p90" in str(info.value)
    assert "only for transaction types that completed in it" in str(info.value), str(info.value)
    assert "did you mean" not in str(info.value)   # not extra.new_order_tpm, another figure altogether


def test_a_tp_monitor_figure_without_a_tp_monitor_says_what_gives_one():
    short = {"profile": "t5220", "workload": "tpcc", "think_time": "0 s", "keying_time": "0 s", "run.warmup": "0.2 s",
             "run.batch": "0.2 s", "run.max_time": "0.6 s", "run.min_batches": 3}
    with pytest.raises(OltpsimError, match=r"has no figure extra\.tp_monitor\.queue_wait_ms; extra\.tp_monitor\.\* "
                                           r"only behind a TP monitor \(tpcc with sessions set\)"):
        cp.capacity({}, ["extra.tp_monitor.queue_wait_ms <= 100 ms"], overrides=short)


def test_a_figure_of_batch_jobs_is_not_a_figure_of_a_steady_run():
    """'elapsed <= 5 s' on tpcc: its runs have the column, with no value; the error had suggested 'elapsed'."""
    with pytest.raises(OltpsimError) as info:
        cp.capacity({}, ["elapsed <= 5 s"], stop=2, overrides=QUICK)
    assert "elapsed has no value in a tpcc run" in str(info.value) and "did you mean" not in str(info.value)


def test_a_batch_jobs_elapsed_is_shown_as_a_time_not_a_count():
    row = {"status": "ok", "workload": "ctas", "elapsed": 10.59, "cpu_idle": 98.5}
    cap = _cap(cp.Probe(64, row, []), limits=("cpu_busy <= 90%",))
    assert cap.metric == "elapsed" and cap.metric_shown(row) == "10.59 s"
    assert cap.answer().startswith("Capacity: users=64 (elapsed 10.59 s), within"), cap.answer()


@pytest.mark.parametrize("kwargs, fragment", [
    ({"limits": None}, "capacity: limits: got"),
    ({"setting": None}, "capacity: setting: got"),
    ({"setting": 5}, "capacity: setting: got"),
    ({"overrides": "users=3"}, "capacity: overrides: got"),
    ({"overrides": [("profile", "t5220")]}, "capacity: overrides: got"),
    ({"limits": []}, "capacity: no limit given"),
    ({"start": True}, "capacity: start: got True; expected a whole number of at least 1"),
    ({"start": 10, "stop": 5}, "capacity: stop: got 5; expected a whole number of at least 10"),
])
def test_the_python_api_refuses_bad_arguments_naming_them(monkeypatch, kwargs, fragment):
    """(No limits, a start of True, a stop below the start: from the mutation round of sim/capacity.py.)"""
    import sim.run
    monkeypatch.setattr(sim.run, "run", lambda *a, **k: pytest.fail("a run started"))
    args = {"limits": ["cpu_busy <= 80%"], "overrides": QUICK, **kwargs}
    with pytest.raises(OltpsimError, match=fragment):
        cp.capacity({}, args.pop("limits"), **args)


def test_one_limit_given_as_a_string_is_one_limit():
    cap = cp.capacity({}, "cpu_busy <= 80%", start=4, stop=4, overrides=QUICK)
    assert [lim.figure for lim in cap.limits] == ["cpu_busy"] and cap.value == 4


def test_a_batch_jobs_elapsed_broken_at_the_start_may_be_met_with_more_channels():
    """RMAN of six 50 MB files: 84 s at 1 channel, 19 s at 6 (a helper's probe): an elapsed limit broken at --from
    is no proof that no channel count meets it, and the answer says so."""
    row = {"status": "ok", "workload": "rman", "elapsed": 83.87, "cpu_idle": 97.0}
    cap = cp.Capacity("channels", [cp.parse_limit("elapsed <= 30 s")], [cp.Probe(1, row, ["elapsed 83.87 s, not <= 30 s"])],
                      None, cp.Probe(1, row, ["elapsed 83.87 s, not <= 30 s"]), 0.02)
    assert cap.value is None
    assert "elapsed <= 30 s may be met at a larger channels: a batch job may run faster" in cap.answer(), cap.answer()


def test_a_lower_bound_broken_at_the_start_is_not_called_no_capacity_without_a_word():
    row = {"status": "ok", "workload": "tpcc", "tpm": 8880.0, "cpu_idle": 98.0}
    cap = _cap(cp.Probe(1, row, ["tpm 8880, not >= 1e+05"]), limits=("tpm >= 100000", "cpu_busy <= 80%"))
    assert cap.value is None and "tpm >= 100000 may be met at a larger users" in cap.answer(), cap.answer()
    cap = _cap(cp.Probe(1, {**row, "cpu_idle": 10.0}, ["cpu_busy 90%"]), limits=("cpu_busy <= 80%",))
    assert "may be met" not in cap.answer()   # an upper bound broken at the start: no capacity indeed


def test_a_large_figure_is_shown_whole_as_the_tpm_column_shows_it():
    lim = cp.parse_limit("tpm >= 100000")
    assert (lim.shown(339_960.0), lim.shown(lim.value), lim.shown(8880.0), lim.shown(26.79)) == \
        ("339,960", "100,000", "8880", "26.79")


def test_throughput_falling_under_more_load_is_said_beside_the_capacity():
    def row(tpm):
        return {"status": "ok", "workload": "tpcc", "tpm": tpm, "cpu_idle": 90.0}

    cap = _cap(cp.Probe(4096, row(7360.0), []), cp.Probe(10752, row(1920.0), []),
               cp.Probe(10880, {"status": "out_of_memory"}, ["out of memory"]))
    assert cap.value == 10752
    assert "TPM is higher at a smaller load, 7,360 at users=4096: more users carry less work." in cap.answer()
    cap = _cap(cp.Probe(4096, row(7360.0), []), cp.Probe(8192, row(7300.0), []))   # within noise: nothing said
    assert "higher at a smaller load" not in cap.answer()


def test_a_wait_event_a_small_load_never_waits_on_is_met_and_a_name_no_run_has_is_refused():
    """At 1 user the TPC-C database fits the buffer cache: no 'db file sequential read' at all. That is no waits
    (the limit is met there), not a misspelling (it had ended the search with exit 2 after the first run); of a
    name no run of the search had, the answer says so, with the events the runs waited on."""
    base = {**QUICK, "run.max_time": "1 s", "run.warmup": "0.5 s", "run.batch": "0.25 s", "run.min_batches": "2",
            "database.db_cache": "200 MB"}
    cap = cp.capacity({}, ["wait.db file sequential read.avg_ms <= 20 ms"], stop=64, precision=0.25, overrides=base)
    assert cap.probes[0].value == 1 and "wait.db file sequential read.avg_ms" not in cap.results[1].flat()
    assert cap.probes[0].broke == [] and cap.value > 1
    typo = cp.capacity({}, ["wait.db file sequental read.avg_ms <= 20 ms"], stop=64, precision=0.25, overrides=base)
    assert "did you mean 'wait.db file sequential read.avg_ms'" in typo.answer()


@pytest.mark.parametrize("limit, problem", [
    ("wait.log file sync.avg <= 0.5", "no figure 'avg' (did you mean 'avg_ms'?) of a wait event"),
    ("rt.new_order.p95 <= 15 ms", "no figure 'p95' (did you mean 'p99'?) of a transaction type"),
    ("device.array.util <= 50", "no figure 'util' (did you mean 'util_pct'?) of a device"),
    ("device.array.write_cache <= 1", "not a figure with a number"),   # (a column of cached arrays: true)
])
def test_a_figure_no_wait_event_type_or_device_has_is_refused_before_any_run(monkeypatch, limit, problem):
    """'wait.log file sync.avg' read as no waits at every load (met, with a note that no run waited on 'log file
    sync', which every run did); 'rt.new_order.p95' and 'device.array.util' stopped the search after its first run."""
    import sim.run
    monkeypatch.setattr(sim.run, "run", lambda *a, **k: pytest.fail("a run started"))
    with pytest.raises(OltpsimError) as info:
        cp.capacity({"profile": "t5220", "workload": "tpcc"}, [limit], overrides=QUICK)
    assert problem in str(info.value)


def test_a_figure_of_a_device_whose_name_has_a_dot_is_a_figure():
    """A profile's device may be named 'san.lun0' (flat() gives device.san.lun0.util_pct): its figures are
    known by their last part, and so is a misspelt one; the interval of a mean response time is a figure."""
    from sim.result import stat_problem

    assert stat_problem("device.san.lun0.util_pct") is None and stat_problem("wait.a.b.waits") is None
    assert "no figure 'utl_pct' (did you mean 'util_pct'?) of a device" in stat_problem("device.san.lun0.utl_pct")
    assert stat_problem("rt.new_order.mean_ci95") is None


def test_a_limit_on_a_mean_response_times_interval_is_a_time():
    """rt.TYPE.mean_ci95 is in seconds, as rt.TYPE.mean: '5 ms' had been refused as 'the figure has no unit'."""
    assert cp.parse_limit("rt.new_order.mean_ci95 <= 5 ms").value == pytest.approx(0.005)


# (from a mutation round on the search, the limits and the answer: each test below fails under a change of one
# operator, bound or branch that the tests above let through)

def test_a_run_exactly_at_a_limit_meets_it_only_under_a_closed_operator():
    row = {"status": "ok", "run_queue": 64.0, "tpm": 1000.0}
    assert cp.parse_limit("run_queue <= 64").holds(row) and not cp.parse_limit("run_queue < 64").holds(row)
    assert cp.parse_limit("tpm >= 1000").holds(row) and not cp.parse_limit("tpm > 1000").holds(row)
    assert cp.parse_limit("run_queue < 64.5").holds(row) and cp.parse_limit("tpm > 999.5").holds(row)


def test_limits_at_the_ends_of_their_range_are_read_and_a_negative_time_in_ms_is_refused():
    """'from 0% to 100%' includes both ends; 'wait.X.time_s <= 0 s' (no time at all on X) is a limit a run can meet."""
    assert cp.parse_limit("cpu_idle >= 0%").value == 0.0 and cp.parse_limit("cpu_busy <= 100%").value == 100.0
    assert cp.parse_limit("wait.log file sync.time_s <= 0 s").value == 0.0
    assert cp.parse_limit("wait.log file sync.avg_ms <= 0 ms").value == 0.0
    with pytest.raises(OltpsimError, match=r"got '-5 ms' for wait\.log file sync\.avg_ms; expected a time with a unit"):
        cp.parse_limit("wait.log file sync.avg_ms <= -5 ms")


@pytest.mark.parametrize("band", [["tpm >= 100", "tpm < 100"], ["tpm > 100", "tpm <= 100"]])
def test_a_band_open_on_one_side_at_a_single_value_is_refused(band):
    with pytest.raises(OltpsimError, match="no tpm meets both"):
        cp._check_one_figure_once([cp.parse_limit(t) for t in band])


def test_a_figure_of_ten_thousand_or_more_is_shown_whole():
    lim = cp.parse_limit("tpm >= 1")
    assert (lim.shown(10_000.0), lim.shown(9_999.0), lim.shown(12_345.0)) == ("10,000", "9999", "12,345")


def test_the_search_tries_stop_itself_when_a_doubling_lands_just_below_it():
    probes, best, past = cp.search(_threshold(10**9), 1, 5, 0.02)
    assert [p.value for p in probes] == [1, 2, 4, 5] and best.value == 5 and past is None


def test_a_round_of_several_runs_takes_the_nearest_whole_numbers_of_its_steps():
    rounds = []   # 10 x 2^(1/3) = 12.6 and 10 x 2^(2/3) = 15.9: 13 and 16, not 12 and 15
    cp.search(_threshold(10**9, rounds), 10, 40, 0.02, width=3)
    assert rounds == [[10], [13, 16, 20], [25, 32, 40]]


def test_a_first_load_of_one_that_breaks_a_limit_is_no_capacity():
    probes, best, past = cp.search(_threshold(0), 1, 100, 0.0)
    assert best is None and past.value == 1 and [p.value for p in probes] == [1]


def test_a_precision_of_one_is_refused_before_any_run(monkeypatch):
    import sim.run
    monkeypatch.setattr(sim.run, "run", lambda *a, **k: pytest.fail("a run started"))
    with pytest.raises(OltpsimError, match="precision: got 1; expected a fraction from 0 up to 1"):
        cp.capacity({}, ["cpu_busy <= 80%"], precision=1, overrides=QUICK)


def test_a_lower_bound_is_said_to_be_met_perhaps_at_more_load_only_after_a_run_that_had_figures():
    row = {"status": "ok", "workload": "tpcc", "tpm": 8880.0, "cpu_idle": 98.0}
    cap = _cap(cp.Probe(1, row, ["tpm 8880, not > 1e+05"]), limits=("tpm > 100000",))   # '>' as '>='
    assert "tpm > 100000 may be met at a larger users" in cap.answer(), cap.answer()
    cap = _cap(cp.Probe(1, {"status": "out_of_memory", "workload": "tpcc"}, ["out of memory: x"]),
               limits=("tpm >= 100000",))   # more users than memory takes: more users do not help
    assert cap.value is None and "may be met" not in cap.answer(), cap.answer()


def test_throughput_higher_at_a_smaller_load_is_said_from_five_percent_among_loads_that_met_the_limits():
    def row(tpm, idle=90.0):
        return {"status": "ok", "workload": "tpcc", "tpm": tpm, "cpu_idle": idle}

    said = "TPM is higher at a smaller load, 7,360 at users=4096"
    assert said in _cap(cp.Probe(4096, row(7360.0), []), cp.Probe(8192, row(7000.0), [])).answer()   # 5.1% more
    assert "at a smaller load" not in _cap(cp.Probe(4096, row(7300.0), []), cp.Probe(8192, row(7000.0), [])).answer()  # 4.3%
    # a load that broke a limit is past the capacity: its TPM is no 'higher at a smaller load'
    cap = _cap(cp.Probe(4096, row(7000.0), []), cp.Probe(8192, row(9000.0, idle=5.0), ["cpu_busy 95.0%, not <= 80.0%"]))
    assert cap.value == 4096 and "at a smaller load" not in cap.answer(), cap.answer()


def test_a_batch_jobs_longer_elapsed_at_a_smaller_load_is_not_called_more_work():
    def ctas(elapsed):
        return {"status": "ok", "workload": "ctas", "elapsed": elapsed, "cpu_idle": 98.0}

    cap = _cap(cp.Probe(32, ctas(20.0), []), cp.Probe(64, ctas(10.0), []), limits=("cpu_busy <= 90%",))
    assert cap.value == 64 and "higher at a smaller load" not in cap.answer(), cap.answer()


def test_the_answer_gives_how_far_the_first_broken_load_is_past_the_capacity():
    row = {"status": "ok", "workload": "tpcc", "tpm": 1000.0, "cpu_idle": 90.0}
    cap = _cap(cp.Probe(20, row, []), cp.Probe(21, {"status": "refused"}, ["refused: too many users"]))
    assert cap.answer().endswith(" At 21 (1 more): refused: too many users."), cap.answer()


def test_a_figure_is_a_number_a_run_measured():
    """A wait event missing from a run that ended is no waits (0); from a run that did not end it is no figure; a
    true/false column (a device's write_cache) is no number to compare."""
    assert cp.figure_value({"status": "ok"}, "wait.log file sync.avg_ms") == 0.0
    assert cp.figure_value({"status": "out_of_memory"}, "wait.log file sync.avg_ms") is None
    assert cp.figure_value({"status": "ok", "device.array.write_cache": True}, "device.array.write_cache") is None


def test_an_answer_resting_on_a_run_that_was_not_steady_says_so(monkeypatch):
    """The response time law's verdict (sim/run.py) on the runs either side of the answer: a run still filling its
    queues gave a transient's response times, so the answer may move with a longer warm-up; a steady one, or one
    the answer does not rest on, is not mentioned."""
    import sim.run
    from sim.result import Result

    def fake_run(sc, progress=None):   # met up to 8 users; not steady from 16
        users = sc.params.users
        law = {"users": users, "think_keying_s": 0.0, "response_ms": 500.0, "law_response_ms": 2000.0,
               "steady": users < 16}
        return Result("x", "t5220", "tpcc", {}, tpm=1000.0, cpu_idle=100.0 - 5.0 * users,
                      extra={"response_time_law": law})

    monkeypatch.setattr(sim.run, "run", fake_run)
    cap = cp.capacity({}, ["cpu_busy <= 42%"], start=4, stop=64, precision=0.0, overrides=QUICK)
    assert (cap.value, cap.past.value) == (8, 9)
    assert "not steady" not in cap.answer()                       # 8 and 9: steady
    cap = cp.capacity({}, ["cpu_busy <= 77%"], start=4, stop=64, precision=0.0, overrides=QUICK)
    assert (cap.value, cap.past.value) == (15, 16)
    assert cap.answer().endswith("The run at users=16 was not steady: a mean response of 500 ms where the response "
                                 "time law gives 2 s, its queues still filling; a longer run.warmup (several "
                                 "responses long) gives steady figures, and may move the answer."), cap.answer()


def test_a_run_that_completed_nothing_meets_no_limit(monkeypatch):
    """A paging-bound load completes no transaction and leaves its CPUs idle: 'cpu_busy <= 85%' had taken it as met
    (the helper's 'users=7000 (0 TPM)'). It is past the capacity, with why."""
    import sim.run
    from sim.result import Result

    def fake_run(sc, progress=None):   # 5% CPU a user up to 8 users; from 9 on, paging-bound: nothing done
        users = sc.params.users
        if users >= 9:
            return Result("x", "t5220", "tpcc", {}, tpm=0.0, cpu_idle=100.0, measured_time=60.0,
                          extra={"memory": {"working_set_paged_out_pct": 16.5}})
        return Result("x", "t5220", "tpcc", {}, tpm=1000.0 * users, cpu_idle=100.0 - 5.0 * users, measured_time=60.0)

    monkeypatch.setattr(sim.run, "run", fake_run)
    cap = cp.capacity({}, ["cpu_busy <= 85%"], start=4, stop=64, precision=0.0, overrides=QUICK)
    assert (cap.value, cap.past.value) == (8, 9)
    assert cap.past.broke == ["no transaction completed in the measured 60 s (paging-bound: 16.5% of every working "
                              "set on swap)"]


def test_the_answer_names_the_busiest_resources_of_its_run(monkeypatch):
    """What would have to grow to carry more: the three busiest shared resources of the run at the answer (the
    LGWR, devices and strands that bound it), not of any other run."""
    import sim.run
    from sim.result import Result

    def fake_run(sc, progress=None):   # LGWR 10% a user, the array's drives 6%, strands 5%
        u = sc.params.users
        return Result("x", "t5220", "tpcc", {}, tpm=1000.0 * u, cpu_idle=100.0 - 5.0 * u,
                      strand_utilisation=[5.0 * u] * 8, core_utilisation=[4.0 * u] * 8,   # (1 strand a core)
                      extra={"lgwr_busy_pct": min(100.0, 10.0 * u)},
                      devices={"array": {"util_pct": 6.0 * u, "controller_util_pct": 0.2 * u}})

    monkeypatch.setattr(sim.run, "run", fake_run)
    cap = cp.capacity({}, ["extra.lgwr_busy_pct <= 75%"], start=1, stop=64, precision=0.0, overrides=QUICK)
    assert cap.value == 7
    assert "Busiest there: LGWR 70%, array %b 42%, strands (mpstat) 35%." in cap.answer(), cap.answer()


# (from a second mutation round of sim/capacity.py: each test below fails under a change that the tests above let
# through)

def test_one_limit_given_as_a_limit_is_one_limit(monkeypatch):
    """A parsed Limit given alone, as a string is: not refused as 'not a list'."""
    import sim.run
    from sim.result import Result

    monkeypatch.setattr(sim.run, "run", lambda sc, progress=None: Result("x", "t5220", "tpcc", {}, tpm=1000.0,
                                                                          cpu_idle=50.0))
    cap = cp.capacity({}, cp.parse_limit("cpu_busy <= 80%"), start=4, stop=4, overrides=QUICK)
    assert [lim.figure for lim in cap.limits] == ["cpu_busy"] and cap.value == 4


def test_a_run_the_law_cannot_judge_is_not_called_not_steady():
    """steady is None when the throughput has no interval (one batch, sim/run.py): no verdict, so no warning;
    only steady False is a transient."""
    law = "extra.response_time_law."
    row = {law + "response_ms": 500.0, law + "law_response_ms": 2000.0}
    unknown, transient = cp.Probe(8, {**row, law + "steady": None}, []), cp.Probe(9, {**row, law + "steady": False}, [])
    assert cp._transients("users", [unknown, None]) == []
    assert [t[:34] for t in cp._transients("users", [unknown, transient])] == ["The run at users=9 was not steady:"]


def test_a_limit_on_a_device_whose_name_has_a_dot_is_checked_against_its_whole_name():
    """device.san.lun0.util_pct names device 'san.lun0' (everything between the prefix and the last part), not
    'san': a profile with that device takes the limit, one without it refuses it naming 'san.lun0'."""
    from types import SimpleNamespace

    def sc(devices):
        storage = SimpleNamespace(device_names=lambda: devices)
        return SimpleNamespace(profile=SimpleNamespace(storage=storage),
                               spec=SimpleNamespace(workload="tpcc", profile="p"))

    lim = cp.parse_limit("device.san.lun0.util_pct <= 60%")
    cp._check_names([lim], sc(["san.lun0"]))
    with pytest.raises(OltpsimError, match=r"no device 'san\.lun0'"):
        cp._check_names([lim], sc(["san", "san.lun1"]))


def test_a_setting_that_runs_as_another_number_than_the_search_gave_is_refused(monkeypatch):
    """The search's answer is the value it set: a setting the scenario turns into another whole number (none of
    tpcc's does; stubbed here) would report a capacity no run had, so it is refused before any run."""
    import sim.run

    real = cp.resolve

    class Doubled:   # the scenario as resolved, but saying the setting runs at twice the value given
        def __init__(self, sc):
            self.sc = sc

        def __getattr__(self, name):
            return getattr(self.sc, name)

        def describe(self):
            d = self.sc.describe()
            return {**d, "params.users": 2 * d["params.users"]}

    monkeypatch.setattr(cp, "resolve", lambda *a, **k: Doubled(real(*a, **k)))
    monkeypatch.setattr(sim.run, "run", lambda *a, **k: pytest.fail("a run started"))
    with pytest.raises(OltpsimError, match=r"capacity: users: 4 runs as 8; expected a whole-number setting"):
        cp.capacity({}, ["cpu_busy <= 80%"], start=4, stop=8, overrides=QUICK)
