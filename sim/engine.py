"""The event loop: SimPy's Environment with its step() inlined into run().

SimPy's run() calls step() once per event; the call, its try/except and the attribute look-ups
cost about a tenth of a model event here. This loop does exactly what step() does (same pop
order, same callbacks, same crash on an undefused failure), so every result is unchanged.

Wakeup is the models' own timer for the hottest paths (a pipeline group's next finish, a drive's
service): an event the loop pops and calls, with none of a Timeout's construction.
"""

from __future__ import annotations

from heapq import heappop, heappush

import simpy
from simpy.core import URGENT, EmptySchedule, StopSimulation
from simpy.events import NORMAL, Event, EventPriority


class Wakeup:
    """What SimPy's event loop needs of an event and nothing more: a model's own timer, scheduled as
    env.timeout would be (same time, priority and sequence number, so the event order is unchanged), without a
    Timeout's construction. One whose callbacks are replaced by () is stale and costs only its pop."""

    __slots__ = ("callbacks",)
    _ok = True


def wake_after(env: simpy.Environment, delay: float, callbacks) -> Wakeup:
    """Schedule a Wakeup `delay` seconds from now that calls each of `callbacks` (a tuple, shared is fine)."""
    wake = Wakeup()
    wake.callbacks = callbacks
    heappush(env._queue, (env._now + delay, NORMAL, next(env._eid), wake))
    return wake


class Environment(simpy.Environment):
    def run(self, until=None):
        if until is not None:
            if not isinstance(until, Event):
                at = until if isinstance(until, int) else float(until)
                if at <= self._now:
                    raise ValueError(f"until ({at}) must be greater than the current simulation time")
                until = Event(self)
                until._ok = True
                until._value = None
                self.schedule(until, URGENT, at - self._now)
            elif until.callbacks is None:
                return until.value
            until.callbacks.append(StopSimulation.callback)
        try:
            self._loop()
        except StopSimulation as exc:
            return exc.args[0]
        except EmptySchedule:
            if until is not None:
                assert not until.triggered
                raise RuntimeError(f'No scheduled events left but "until" event was not triggered: {until}') from None
        return None

    def _loop(self) -> None:
        queue = self._queue
        while queue:
            self._now, _, _, event = heappop(queue)
            callbacks, event.callbacks = event.callbacks, None
            try:
                for callback in callbacks:
                    callback(event)
            except StopSimulation:
                event.callbacks = callbacks[callbacks.index(callback) + 1:]
                self.schedule(event, EventPriority(-1))
                raise
            if not event._ok and not hasattr(event, "_defused"):
                exc = type(event._value)(*event._value.args)
                exc.__cause__ = event._value
                raise exc
        raise EmptySchedule
