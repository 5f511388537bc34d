"""What every batch job shares: it runs to completion once and reports its elapsed time.

A batch workload sets `self.done` when its job ends, tells the run how far it has got
(`progress`), and reports the instance's parallel figures beside its own.
"""

from __future__ import annotations

import simpy

MB = 1024.0 * 1024.0


def device_checker(*keys: str):
    """A check_scenario for workloads whose params name storage devices under `keys`."""
    def check_scenario(spec, profile, params, src) -> None:
        names = profile.storage.device_names()
        for key in keys:
            if getattr(params, key) not in names:
                raise src.at("params").at(key).bad(getattr(params, key),
                                                   "one of the profile's devices: " + ", ".join(names))
    return check_scenario


class BatchWorkload:
    kind = "batch"
    primary = "elapsed"

    def __init__(self, system, params):
        self.system, self.params = system, params
        self.env = system.env
        self.instance = system.instance
        self.done = simpy.Event(self.env)
        self.total_bytes = 1.0
        self.done_bytes = 0.0

    def start(self) -> None:
        self.env.process(self._main())

    def _main(self):
        yield from self.job()
        self.done.succeed()

    def job(self):  # pragma: no cover - each workload defines its job
        raise NotImplementedError

    def progress(self) -> float:
        return min(1.0, self.done_bytes / self.total_bytes)

    def report(self, span: float) -> dict:
        return {"elapsed_s": span, **self.instance.px.report()}

    def strand_rate(self) -> float:
        """Instructions per second of one strand alone: what the optimizer's CPU speed measures."""
        return self.system.cpu.groups[0].rates[1]
