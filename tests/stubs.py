"""Stand-ins the unit tests share (not collected: no test_ prefix)."""

from __future__ import annotations


class InstantCpu:
    """A dispatcher whose work takes no time: DBWR's own CPU left out of a test's arithmetic."""

    def __init__(self, env):
        self.env = env

    def run(self, instructions, sys_share=0.0):
        return self.env.timeout(0.0, value=0.0)   # (worth its time on a strand, as the dispatcher's)


class RecordingVolume:
    """A volume that records (time, kind, bytes, offset, sequential) for each I/O and serves each in
    `service` seconds. An unlocated random I/O goes to block `slot` (offset slot x its size): a fixed
    place, so a test can see a page read and its write land at the same one."""

    def __init__(self, env, service=1.0, slot=0, capacity=None):
        self.env, self.service, self.slot, self.log = env, service, slot, []
        if capacity is not None:
            self.capacity = capacity

    def random_offset(self, nbytes):
        return self.slot * nbytes

    def submit(self, kind, nbytes, offset=None, sequential=False):
        self.log.append((self.env.now, kind, nbytes, offset, sequential))
        return self.env.timeout(self.service)
