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
