"""The inlined event loop (sim/engine.py) is SimPy's run()/step(): same order, same results."""

from __future__ import annotations

import pytest
import simpy

import sim.system
from sim import engine
from sim.run import run
from test_run import t5220, without_wall_time  # tests/ is on sys.path (rootdir-less prepend mode)


def test_a_run_is_bit_identical_on_simpys_own_loop(monkeypatch):
    """Same events in the same order: every figure of a run equal to the last bit (events included)."""
    fast = run(t5220(16))
    monkeypatch.setattr(sim.system, "Environment", simpy.Environment)
    stock = run(t5220(16))
    assert without_wall_time(fast) == without_wall_time(stock)


@pytest.mark.parametrize("make", [simpy.Environment, engine.Environment])
def test_run_until_a_time_an_event_or_exhaustion(make):
    env = make()
    log = []

    def proc(name, delays):
        for d in delays:
            yield env.timeout(d)
            log.append((env.now, name))
        return name

    a = env.process(proc("a", [1.0, 1.0, 1.0]))
    env.process(proc("b", [1.0, 0.5]))
    env.run(until=1.5)   # the stop comes before anything else due at 1.5 (URGENT)
    assert env.now == 1.5 and log == [(1.0, "a"), (1.0, "b")]
    assert env.run(until=a) == "a" and env.now == 3.0
    assert log == [(1.0, "a"), (1.0, "b"), (1.5, "b"), (2.0, "a"), (3.0, "a")]
    env.run()
    assert env.now == 3.0
    with pytest.raises(ValueError, match="greater than the current"):
        env.run(until=2.0)
    with pytest.raises(RuntimeError, match="No scheduled events left"):
        env.run(until=env.event())


@pytest.mark.parametrize("make", [simpy.Environment, engine.Environment])
def test_an_undefused_failure_crashes_the_run(make):
    env = make()

    def proc():
        yield env.timeout(1.0)
        raise KeyError("boom")

    env.process(proc())
    with pytest.raises(KeyError, match="boom"):
        env.run()
    assert env.now == 1.0


@pytest.mark.parametrize("make", [simpy.Environment, engine.Environment])
def test_callbacks_after_the_stop_run_when_the_simulation_resumes(make):
    """A process that waits on the `until` event after run() began is resumed by the next run(), at the
    stop's instant and before anything else then due; and `until` must lie ahead of now."""
    env = make()
    stop, log = env.event(), []

    def trigger():
        yield env.timeout(1.0)
        stop.succeed("stopped")
        yield env.timeout(0.0)
        log.append(("same instant", env.now))

    def waiter():
        yield env.timeout(0.5)
        yield stop                       # its callback comes after run()'s stop callback
        log.append(("waiter", env.now))

    env.process(trigger())
    env.process(waiter())
    assert env.run(until=stop) == "stopped" and log == []
    env.run(until=2.0)
    assert log == [("waiter", 1.0), ("same instant", 1.0)]
    with pytest.raises(ValueError, match="greater than the current"):
        env.run(until=env.now)
