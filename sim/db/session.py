"""A session: one dedicated server ("shadow") process working for one user.

Workloads drive sessions with work items (CPU, commit, waits); the session turns them
into requests to the OS and the instance and records the time it waits, by event name,
as AWR would.
"""

from __future__ import annotations


class Session:
    __slots__ = ("instance", "sid", "env", "_dispatcher")

    def __init__(self, instance, sid: int):
        self.instance, self.sid = instance, sid
        self.env = instance.env
        self._dispatcher = instance.dispatcher

    def cpu(self, instructions: float, sys_share: float = 0.0):
        """Run on a strand (queueing for one if all are busy); yield the returned event."""
        return self._dispatcher.run(instructions, sys_share)

    def commit(self, redo_bytes: float):
        """Generator: post LGWR and wait for the redo to be written ('log file sync')."""
        start = self.env.now
        yield self.instance.lgwr.commit(redo_bytes)
        self.instance.waits.add("log file sync", self.env.now - start)

    def io(self, device, kind: str, nbytes: float, offset: float | None = None, event_name: str = "db file sequential read"):
        """Generator: a synchronous physical I/O on a storage device, waited for under an AWR event."""
        start = self.env.now
        yield device.submit(kind, nbytes, offset)
        self.instance.waits.add(event_name, self.env.now - start)

    def wait(self, event_name: str, seconds: float):
        """Generator: an idle or timed wait recorded under an AWR event name."""
        yield self.env.timeout(seconds)
        self.instance.waits.add(event_name, seconds)
