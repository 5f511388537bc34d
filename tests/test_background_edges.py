"""Edges of a background job beside a steady workload (scenario background:) that tests/test_background.py leaves
open, found by a mutation round on its code: each test here fails on a change to it that the others let pass."""

from __future__ import annotations

import pytest

import sim.run
from sim import scenario
from sim.run import run

# 4 users that never think, in batches of 1/8 s (exact in binary): the window alone ends at 1.25 s, a quarter into
# the 1-s timeline's second interval; CALIBRATE_IO then runs its load levels of 0.3 s each beside them (~1.5 s)
TPCC = {"users": "4", "think_time": "0 s", "keying_time": "0 s", "run.max_time": "1.25 s", "run.batch": "0.125 s",
        "run.interval": "1 s"}
CALIBRATE = {"background.workload": "calibrate_io", "background.params.database_size": "10 GB",
             "background.params.level_time": "0.3 s", "background.params.num_physical_disks": 4}


def _load(settings: dict, workload: str = "tpcc"):
    return scenario.load(None, settings, profile="t5220", workload=workload)


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
