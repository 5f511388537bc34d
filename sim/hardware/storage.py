"""Storage devices: a disk is a server whose service time is seek + rotation + transfer.

This module knows drives, controllers and arrays; it knows nothing of files or Oracle.
An I/O is (kind 'read'/'write', bytes, sequential?) and completes as a SimPy event.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import simpy

from sim.hardware.profile import DiskSpec
from sim.metrics import Level, Tally


class Disk:
    """One drive with a FCFS queue.

    Service time (Stallings, Computer Organization and Architecture, 6.1):
    T = seek + rotational latency + bytes / media rate. A random I/O pays the average seek
    and a uniformly distributed rotational wait; a sequential one (the next block of a log)
    pays neither. A write-back cache acknowledges a write after the transfer alone.
    """

    def __init__(self, env: simpy.Environment, name: str, spec: DiskSpec, rng: np.random.Generator,
                 overhead: float = 0.0):
        self.env, self.name, self.spec, self.rng = env, name, spec, rng
        self.overhead = overhead
        self.queue: deque = deque()
        self.busy = False
        self.rotation = 1.0 / spec.rpm
        # statistics
        self.ios = 0
        self.bytes = 0.0
        self.util = Level(env)
        self.response = Tally()
        self.service = Tally()

    def service_time(self, kind: str, nbytes: float, sequential: bool) -> float:
        t = self.overhead + nbytes / self.spec.media_rate
        if kind == "write" and self.spec.write_cache:
            return t
        if not sequential:
            t += self.spec.avg_seek + self.rng.uniform(0.0, self.rotation)
        return t

    def submit(self, kind: str, nbytes: float, sequential: bool = False) -> simpy.Event:
        ev = simpy.Event(self.env)
        self.queue.append((kind, nbytes, sequential, ev, self.env.now))
        if not self.busy:
            self._next()
        return ev

    def _next(self) -> None:
        if not self.queue:
            self.busy = False
            self.util.set(0)
            return
        self.busy = True
        self.util.set(1)
        kind, nbytes, sequential, ev, arrived = self.queue.popleft()
        s = self.service_time(kind, nbytes, sequential)
        done = self.env.timeout(s)
        done.callbacks.append(lambda _e: self._finish(ev, arrived, nbytes, s))

    def _finish(self, ev: simpy.Event, arrived: float, nbytes: float, service: float) -> None:
        self.ios += 1
        self.bytes += nbytes
        self.service.add(service)
        self.response.add(self.env.now - arrived)
        ev.succeed()
        self._next()

    def reset_stats(self) -> None:
        self.ios = 0
        self.bytes = 0.0
        self.util.reset()
        self.response.reset()
        self.service.reset()
