"""An all-flash array of bricks behind a network fabric (XtremIO-like).

A brick (an X-Brick: two controllers and a shelf of SSDs) serves I/Os on many parallel
channels. Its spec gives a mean service time S at light load and an IOPS ceiling; by
Little's law at saturation the brick has c = ceiling x S channels, so an M/M/c queue per
brick with exponential service of mean S saturates exactly at the ceiling and is a
closed form the tests check. An I/O's service may also have a fixed floor (flash I/Os vary far
less than an exponential): floor + exponential(S - floor), same mean and ceiling, tighter spread
(then the M/M/c form is a bound, no longer exact).
Data is spread over the bricks by content fingerprint, so an I/O goes to a brick chosen
uniformly at random and adding bricks adds IOPS linearly.

After its service an I/O's bytes cross the brick's ports (the brick's bandwidth ceiling)
and the host's fabric ports (the host's bandwidth), each a FCFS pipe that frames cut
through (both reserved from the end of service), and then the fabric's round trip. The pipes and the round trip are one timeout: an I/O costs two
events (service, then transfer) whatever the array size.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import simpy

from sim.hardware.profile import FlashArraySpec
from sim.hardware.storage import Controller, DeviceStats


class _Brick:
    __slots__ = ("channels", "busy", "queue", "ports")

    def __init__(self, channels: int, ports: Controller):
        self.channels = channels
        self.busy = 0
        self.queue: deque = deque()
        self.ports = ports   # the brick's ports: its bandwidth ceiling


class FlashArray(DeviceStats):
    """submit(kind, nbytes) -> event, like a disk volume; iostat-like statistics."""

    def __init__(self, env: simpy.Environment, name: str, spec: FlashArraySpec, rng: np.random.Generator):
        self.env, self.name, self.spec, self.rng = env, name, spec, rng
        self.channels_per_brick = max(1, round(spec.iops_per_brick * spec.service_time))
        self.bricks = [_Brick(self.channels_per_brick, Controller(env, f"{name}/brick{i}", spec.bandwidth_per_brick))
                       for i in range(spec.bricks)]
        self.capacity = spec.capacity
        self.fabric = Controller(env, f"{name}/fabric", spec.fabric_bandwidth)   # the host's fabric ports
        self.controllers = [self.fabric] + [b.ports for b in self.bricks]   # the pipes the bytes cross
        # random numbers are drawn in blocks: brick choice and unit-mean service times
        self._block = 4096
        self._units: np.ndarray = np.empty(0)
        self._picks: np.ndarray = np.empty(0, dtype=np.int64)
        self._i = self._block
        self._init_stats(env)       # util: the fraction of all channels busy
        self.disks = [self]         # one logical device for iostat

    @property
    def ceiling(self) -> float:
        """IOPS at which every channel of every brick is busy."""
        return len(self.bricks) * self.channels_per_brick / self.spec.service_time

    def _draw(self) -> tuple[int, float]:
        if self._i >= self._block:
            self._units = self.rng.exponential(1.0, self._block)
            self._picks = self.rng.integers(0, len(self.bricks), self._block)
            self._i = 0
        i = self._i
        self._i += 1
        floor = self.spec.service_floor
        return int(self._picks[i]), floor + float(self._units[i]) * (self.spec.service_time - floor)

    def random_offset(self, nbytes: float) -> None:
        """A disk volume's random place for an I/O; on flash no place costs more than another."""
        return None

    def submit(self, kind: str, nbytes: float, offset: float | None = None, sequential: bool = False) -> simpy.Event:
        ev = simpy.Event(self.env)
        b, s = self._draw()
        brick = self.bricks[b]
        item = (brick, s, nbytes, ev, self.env.now, kind == "write")
        if brick.busy < brick.channels:
            self._start(item)
        else:
            brick.queue.append(item)
        return ev

    def _start(self, item) -> None:
        brick, s, nbytes, ev, arrived, _write = item
        brick.busy += 1
        self.util.add(1.0 / (len(self.bricks) * self.channels_per_brick))
        done = self.env.timeout(s)
        done.callbacks.append(lambda _e: self._served(item))

    def _served(self, item) -> None:
        brick, s, nbytes, ev, arrived, write = item
        self.service.add(s)
        brick.busy -= 1
        self.util.add(-1.0 / (len(self.bricks) * self.channels_per_brick))
        if brick.queue:
            self._start(brick.queue.popleft())
        # Frames cut through the brick's ports and the host's ports at once: each pipe is
        # reserved FCFS from now, and the bytes are across when both have carried them.
        across = max(brick.ports.reserve(nbytes), self.fabric.reserve(nbytes))
        done = self.env.timeout(across - self.env.now + self.spec.fabric_latency)
        done.callbacks.append(lambda _e: self._finish(ev, arrived, nbytes, write))

    def reset_stats(self) -> None:
        super().reset_stats()
        for c in self.controllers:
            c.reset_stats()

    def _finish(self, ev: simpy.Event, arrived: float, nbytes: float, write: bool) -> None:
        self.ios += 1
        self.writes += write
        self.bytes += nbytes
        self.response.add(self.env.now - arrived)
        ev.succeed()
