"""oltpsim compare: two runs' settings and figures side by side, and whether a change is beyond their noise."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from click.testing import CliRunner

from sim import cli
from sim import compare as cmp
from sim.config import OltpsimError
from tests.test_report import _steady_result


def _b():
    """A's what-if: 10% more TPM, 2 points more us, the new-order mean 1 ms longer, a device busier, and an event only
    B waited on; the buffer hit ratio 0.5% higher, under the 1% a figure must move to be shown."""
    a = _steady_result()
    b = dataclasses.replace(a, inputs={**a.inputs, "params.users": 32}, tpm=a.tpm * 1.1, cpu_usr=a.cpu_usr + 2.0,
                            response={"new_order": {**a.response["new_order"], "mean": 0.0133}},
                            devices={**a.devices, "array": {**a.devices["array"], "util_pct": 61.6}},
                            top_events=[*a.top_events, {"event": "db file sequential read", "waits": 10, "time_s": 0.1,
                                                        "avg_ms": 10.0, "pct_call_time": 0.2}],
                            extra={**a.extra, "buffer_hit_ratio": a.extra["buffer_hit_ratio"] * 1.005})
    return a, b


def test_the_figures_that_moved_with_their_change_and_noise():
    """TPM +10% (relative), beyond the intervals' sqrt(2469.1^2 x 2) = 3,492 TPM against a 12,346 TPM change; us +2
    points (a percentage moves in points); the new-order mean +1 ms against sqrt(2) x 0.42 ms; an event only B has;
    a 0.5% move and unchanged figures left out, shown with every=True."""
    a, b = _b()
    rows = {r["figure"]: r for r in cmp.differences(a, b)}
    assert rows["tpm"]["change"] == pytest.approx(0.1) and rows["tpm"]["beyond_noise"] is True
    assert rows["cpu_usr"]["change"] == pytest.approx(2.0) and rows["cpu_usr"]["points"]
    assert rows["cpu_usr"]["beyond_noise"] is None   # (no interval of its own)
    assert rows["rt.new_order.mean"]["change"] == pytest.approx(0.001 / 0.0123)
    assert rows["rt.new_order.mean"]["beyond_noise"] is True
    assert rows["device.array.util_pct"]["change"] == pytest.approx(20.0)
    only = rows["wait.db file sequential read.avg_ms"]
    assert only["a"] is None and only["b"] == 10.0 and only["change"] is None
    assert "extra.buffer_hit_ratio" not in rows and "cpu_sys" not in rows and "wall_time" not in rows
    assert "wait.db file sequential read.waits" not in rows   # (a count: it grows with the measured time)
    every = {r["figure"]: r for r in cmp.differences(a, b, every=True)}
    assert every["extra.buffer_hit_ratio"]["change"] == pytest.approx(0.005) and "cpu_sys" in every
    assert "wait.db file sequential read.waits" in every and "wall_time" not in every
    small = dataclasses.replace(b, tpm=a.tpm + 3000.0)   # +2.4%, within 3,492 TPM
    assert {r["figure"]: r for r in cmp.differences(a, small)}["tpm"]["beyond_noise"] is False


def test_the_settings_that_differ_as_set_writes_them_and_a_run_beside_itself():
    """users 16 -> 32, by the plain name --set takes; the same run twice: nothing differs, nothing moved."""
    a, b = _b()
    assert cmp.settings(a, b) == [("users", "16", "32")]
    assert cmp.settings(a, a) == [] and cmp.differences(a, a) == []
    same = cmp.text(a, a)
    assert "Settings: the same" in same and "Figures: none moved" in same


def test_the_text_gives_response_times_in_ms_and_says_what_only_one_run_has():
    a, b = _b()
    lines = {line.split()[0]: line for line in cmp.text(a, b).splitlines() if line and not line.startswith(" ")}
    assert lines["rt.new_order.mean"].split()[1:5] == ["ms", "12.3", "13.3", "+8.1%"]
    assert lines["rt.new_order.mean"].endswith("beyond noise")
    assert lines["cpu_usr"].split()[1:5] == ["%", "30", "32", "+2.0"]
    assert "only in B" in next(v for k, v in lines.items() if "sequential" in v)
    assert "beyond/within noise:" in cmp.text(a, b)


def test_cli_compares_two_json_results_and_refuses_what_is_not_one(tmp_path):
    """The files `run --json` writes (NaN as null, read back as no figure); anything else is refused naming the
    file and what was expected, exit 2."""
    a, b = _b()
    a = dataclasses.replace(a, response={"new_order": {**a.response["new_order"], "mean_ci95": math.nan}})
    (tmp_path / "a.json").write_text(a.to_json())
    (tmp_path / "b.json").write_text(b.to_json())
    loaded = cmp.load(tmp_path / "a.json")
    assert loaded.flat() == {**a.flat(), "rt.new_order.mean_ci95": None}
    got = CliRunner().invoke(cli.main, ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    assert got.exit_code == 0 and got.stdout == cmp.text(loaded, cmp.load(tmp_path / "b.json"), sources=(
        str(tmp_path / "a.json"), str(tmp_path / "b.json"))) + "\n"
    (mean,) = [line for line in got.stdout.splitlines() if line.startswith("rt.new_order.mean ")]
    assert mean.endswith("+8.1%")   # (A has no interval of its mean now: no word on noise)
    bad = {"x.json": "{not json", "list.json": "[1, 2]", "part.json": json.dumps({"label": "x"}),
           "more.json": json.dumps({**json.loads(a.to_json()), "colour": "red"})}
    expect = {"x.json": "not JSON", "list.json": "not a mapping", "part.json": "no inputs, profile, workload",
              "more.json": "colour: not a figure of a result"}
    for name, text in bad.items():
        (tmp_path / name).write_text(text)
        got = CliRunner().invoke(cli.main, ["compare", str(tmp_path / "a.json"), str(tmp_path / name)])
        assert got.exit_code == 2 and f"{tmp_path / name}: {expect[name]}" in got.stderr, got.output
        assert "expected a result written by oltpsim run --json" in got.stderr and not got.stdout
    got = CliRunner().invoke(cli.main, ["compare", str(tmp_path / "a.json"), str(tmp_path / "none.json")])
    assert got.exit_code == 2 and "none.json" in got.stderr
    with pytest.raises(OltpsimError, match="not JSON"):
        cmp.load(tmp_path / "x.json")


def test_a_figure_moved_from_exactly_1_percent_or_half_a_point_and_its_change_from_0_or_below_0():
    """The thresholds are inclusive, as the text says ('by 1% or more, 0.5 points for a %'): 100 -> 101 is shown and
    100 -> 100.9 not; vmstat's sy 10 -> 10.5 is shown and 10 -> 10.4 not. A figure below 0 that rises by half its
    size has changed +50% (relative to its size, not its sign); one that was 0 is new; 0 beside 0 has not moved."""
    a, _ = _b()
    a = dataclasses.replace(a, cpu_sys=10.0, extra={**a.extra, "x": 100.0, "y": 100.0, "neg": -2.0, "zero": 0.0,
                                                    "both0": 0.0})
    b = dataclasses.replace(a, cpu_sys=10.5, extra={**a.extra, "x": 101.0, "y": 100.9, "neg": -1.0, "zero": 3.0})
    rows = {r["figure"]: r for r in cmp.differences(a, b)}
    assert set(rows) == {"cpu_sys", "extra.x", "extra.neg", "extra.zero"}
    assert rows["extra.neg"]["change"] == pytest.approx(0.5) and rows["extra.zero"]["change"] == math.inf
    assert cmp._change(rows["extra.zero"]) == "new" and cmp._change(rows["cpu_sys"]) == "+0.5 pt"
    assert "cpu_sys" not in {r["figure"] for r in cmp.differences(a, dataclasses.replace(b, cpu_sys=10.4))}


def test_noise_is_both_intervals_combined_in_quadrature_and_a_nan_interval_is_none():
    """A's and B's TPM half-widths 2,469.1 each: together sqrt(2) x 2,469.1 = 3,492 TPM, not their sum 4,938; a
    4,000-TPM change is beyond it, and the text says a 3,000-TPM one is within it. A half-width that is NaN (too few
    batches) is no interval: no word on noise."""
    a, b = _b()
    four = {r["figure"]: r for r in cmp.differences(a, dataclasses.replace(b, tpm=a.tpm + 4000.0))}
    assert four["tpm"]["beyond_noise"] is True
    (line,) = [ln for ln in cmp.text(a, dataclasses.replace(b, tpm=a.tpm + 3000.0)).splitlines()
               if ln.startswith("tpm ")]
    assert line.endswith("+2.4% within noise")
    nan = {r["figure"]: r for r in cmp.differences(a, dataclasses.replace(b, tpm_half_width=math.nan))}
    assert nan["tpm"]["beyond_noise"] is None


def test_every_figure_leaves_out_the_inputs_intervals_and_provenance_and_keeps_a_flag_a_flag():
    """every=True shows every figure, but not the inputs (they are the settings above it), the half-widths (they
    are the noise words) nor how it was run; a flag is a text, True beside False with no change; NaN or inf is no
    figure, as in the JSON a run writes (only in B beside a number; NaN beside NaN was listed as moved); a seconds
    figure other than a response time stays in seconds (wait time 0.1 s, not 100)."""
    a, b = _b()
    a = dataclasses.replace(a, extra={**a.extra, "flag": True, "n": math.nan, "inf": math.inf})
    b = dataclasses.replace(b, extra={**b.extra, "flag": False, "n": 5.0, "inf": 5.0})
    every = {r["figure"]: r for r in cmp.differences(a, b, every=True)}
    assert not [f for f in every if f.startswith("in.") or f.endswith(("half_width", "_ci95")) or f == "seed"]
    assert every["extra.flag"]["change"] is None and cmp._shown(every["extra.flag"])[2:] == ["True", "False", ""]
    assert cmp._shown(every["wait.db file sequential read.time_s"])[1:4] == ["s", "—", "0.1"]
    moved = {r["figure"]: r for r in cmp.differences(a, b)}
    assert cmp._shown(moved["extra.n"])[2:] == cmp._shown(moved["extra.inf"])[2:] == ["—", "5", "only in B"]
    assert cmp.differences(a, a) == []   # (NaN beside NaN: not moved)
    assert "rt.new_order.p99" not in {r["figure"] for r in cmp.differences(
        a, dataclasses.replace(a, response={"new_order": {**a.response["new_order"], "p99": 1.0}}))}


def test_a_profile_or_workload_that_differs_is_a_setting_that_differs():
    """The profile and the workload are not among the declared settings; a what-if on another machine says so."""
    a, _ = _b()
    a = dataclasses.replace(a, inputs={**a.inputs, "profile": "t5220", "workload": "tpcc"})
    b = dataclasses.replace(a, inputs={**a.inputs, "profile": "t5440"})
    assert cmp.settings(a, b) == [("profile", "t5220", "t5440")]


def test_cli_names_each_file_beside_its_run_takes_all_and_reads_a_result_without_its_optional_figures(tmp_path):
    """A: the first file, B: the second; --all shows every figure (the counts too); a result written without the
    figures a Result defaults (an older run's, with no timeline) is still one."""
    a, b = _b()
    (tmp_path / "a.json").write_text(a.to_json())
    (tmp_path / "b.json").write_text(b.to_json())
    files = [str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    got = CliRunner().invoke(cli.main, ["compare", *files, "--all"])
    assert got.exit_code == 0, got.output
    first, second = got.stdout.splitlines()[:2]
    assert first.startswith(f"A: {files[0]} = ") and second.startswith(f"B: {files[1]} = ")
    assert "\nEvery figure\n" in got.stdout and "\nwait.db file sequential read.waits " in got.stdout
    data = json.loads(a.to_json())
    del data["timeline"], data["wall_time"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    assert cmp.load(tmp_path / "old.json").timeline == []
