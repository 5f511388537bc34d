"""Stand-ins the unit tests share (not collected: no test_ prefix)."""

from __future__ import annotations


class InstantCpu:
    """A dispatcher whose work takes no time: DBWR's own CPU left out of a test's arithmetic."""

    def __init__(self, env):
        self.env = env

    def run(self, instructions, sys_share=0.0):
        return self.env.timeout(0.0)
