"""Solaris libaio's user-level asynchronous I/O: what aiowrite() does on a file without KAIO.

Kernel async I/O (KAIO) serves only character devices (raw volumes, Quick I/O files); for a
regular file libaio falls back to its own worker threads (LWPs), each issuing a synchronous
pwrite() for one request at a time. How requests reach the workers matters
(Sun libaio aio.c, _aio_req_add / _aio_req_get, 1.29 of 1996 and 1.55 of 1999):

- every request goes to the NEXT worker of a circular list (round robin), busy or not, onto
  that worker's FIFO; the worker takes its requests strictly in order. A request queued behind
  a write that waits for a file's lock waits too, though other workers may be idle
  (head-of-line blocking);
- a worker counts the requests queued to it and not yet taken (work_minload1); when adding
  one would make that count exceed MIN_WORKLOAD (_minworkload = 2) and fewer than
  max_workers exist, a new worker is created and given the request instead (the count resets
  to 0), so the pool grows under bursts and never shrinks;
- writes have their own list of workers (1.55: __workers_wr), MIN_WORKERS of them at start.

Constants (Sun aio.c): MIN_WORKLOAD = 2; max_workers: 50 in 1.29 (1996), 256 in 1.55 (1999,
with 4 of its 8 initial workers for writes); which Solaris 7 shipped is not known, so it is a
parameter, default 256 (Ixora, "Asynchronous I/O on Solaris", 2000, saw DBW0 on VxFS with 261
LWPs: 256 workers and a few others). MIN_WORKERS = 4 (write workers at start, both versions).
The workers' CPU is the caller's business (the I/O it hands over charges it).
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Generator

import simpy

MIN_WORKLOAD = 2
MIN_WORKERS = 4
MAX_WORKERS = 256


class _Worker:
    __slots__ = ("queue", "minload", "wake")

    def __init__(self):
        self.queue: deque = deque()    # (io generator factory, completion event), in order
        self.minload = 0               # requests added minus requests taken (reset on a spawn)
        self.wake: simpy.Event | None = None


class LibAio:
    """A pool of library AIO workers for one kind of request (writes)."""

    def __init__(self, env: simpy.Environment, max_workers: int = MAX_WORKERS, min_workers: int = MIN_WORKERS,
                 min_workload: int = MIN_WORKLOAD):
        if max_workers < 1 or min_workers < 1:
            raise ValueError(f"libaio workers: need at least 1 (max_workers {max_workers}, min_workers {min_workers})")
        min_workers = min(min_workers, max_workers)
        self.env, self.max_workers, self.min_workload = env, max_workers, min_workload
        self.workers: list[_Worker] = []
        self.next = 0
        self.spawned = 0          # workers created for a request (beyond the first ones)
        for _ in range(min_workers):
            self._create(None)

    def _create(self, request) -> None:
        w = _Worker()
        if request is not None:
            w.queue.append(request)
            self.spawned += 1
        # a new worker joins the circle just before the next one to be chosen
        self.workers.insert(self.next, w)
        self.next = (self.next + 1) % len(self.workers)
        self.env.process(self._serve(w))

    def submit(self, io: Callable[[], Generator]) -> simpy.Event:
        """Queue one request (`io()` makes the generator that performs it); the event fires when
        it has completed."""
        done = simpy.Event(self.env)
        request = (io, done)
        w = self.workers[self.next]
        w.minload += 1
        if len(self.workers) < self.max_workers and w.minload > self.min_workload:
            w.minload = 0
            self.next = (self.next + 1) % len(self.workers)
            self._create(request)
            return done
        w.queue.append(request)
        self.next = (self.next + 1) % len(self.workers)
        if w.wake is not None and not w.wake.triggered:
            w.wake.succeed()
        return done

    def _serve(self, w: _Worker):
        while True:
            while not w.queue:
                w.wake = simpy.Event(self.env)
                yield w.wake
            io, done = w.queue.popleft()
            w.minload -= 1
            yield from io()
            done.succeed()

    def queued(self) -> int:
        """Requests waiting in the workers' FIFOs (not yet started)."""
        return sum(len(w.queue) for w in self.workers)
