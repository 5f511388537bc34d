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


@pytest.mark.parametrize("make", [simpy.Environment, engine.Environment])
def test_wake_after_fires_where_a_timeout_scheduled_then_would(make):
    """At t=1, a timeout, a Wakeup and a timeout, each 0.5 s ahead: all three at 1.5, in the order scheduled
    (NORMAL priority and the next sequence number, as env.timeout)."""
    env = make()
    env.run(until=1.0)
    log = []
    env.timeout(0.5).callbacks.append(lambda _e: log.append(("timeout 1", env.now)))
    engine.wake_after(env, 0.5, (lambda _e: log.append(("wakeup", env.now)),))
    env.timeout(0.5).callbacks.append(lambda _e: log.append(("timeout 2", env.now)))
    env.run()
    assert log == [("timeout 1", 1.5), ("wakeup", 1.5), ("timeout 2", 1.5)]


@pytest.mark.parametrize("make", [simpy.Environment, engine.Environment])
def test_a_stop_at_a_time_comes_before_what_was_due_then_and_a_processed_until_returns_at_once(make):
    """A timeout due at 2 scheduled before run(until=2): the stop (URGENT) comes first, the timeout at the next
    run. run(until=a process done and processed at 4) returns its value at once: still at 5, a timeout pending."""
    env = make()
    log = []
    env.timeout(2).callbacks.append(lambda _e: log.append(env.now))
    env.run(until=2)
    assert log == [] and env.now == 2 and isinstance(env.now, int)   # an int until keeps the time an int
    env.run(until=3)
    assert log == [2]

    def proc():
        yield env.timeout(1)
        return "done"
    p = env.process(proc())
    env.run(until=5)
    env.timeout(2)
    assert env.run(until=p) == "done" and env.now == 5


@pytest.mark.parametrize("make", [simpy.Environment, engine.Environment])
def test_callbacks_left_by_a_stop_run_before_an_urgent_event_it_let_in(make):
    """The stop's event has a callback ahead of run()'s stop that starts a process (an URGENT initialisation at
    the same instant) and one after it. Resumed, the event (priority -1) runs its last callback before that
    process starts."""
    env = make()
    stop, log = env.event(), []

    def started():
        log.append("started")
        yield env.timeout(0)

    stop.callbacks.append(lambda _e: (log.append("first"), env.process(started())))

    def trigger():
        yield env.timeout(1.0)
        stop.succeed()

    def second():
        yield env.timeout(0.5)
        yield stop
        log.append("second")

    env.process(trigger())
    env.process(second())
    env.run(until=stop)
    assert log == ["first"]
    env.run()
    assert log == ["first", "second", "started"]


@pytest.mark.parametrize("make", [simpy.Environment, engine.Environment])
def test_a_defused_failure_is_ignored_and_an_undefused_one_is_raised_as_a_copy_caused_by_it(make):
    """As SimPy's step(): a failed event marked defused does not crash the run; one not defused is raised as a
    new exception of its type and arguments whose __cause__ is the original."""
    env = make()
    quiet = env.event()
    quiet.fail(KeyError("quiet"))
    quiet.defused = True
    env.run()                      # defused: no crash
    original = ValueError("loud", 7)
    env.event().fail(original)
    with pytest.raises(ValueError) as info:
        env.run()
    assert info.value is not original and info.value.args == ("loud", 7) and info.value.__cause__ is original
