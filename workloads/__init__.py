"""Workloads: each module turns parameters into work items for sessions.

A workload module defines `Params` (a config dataclass: its parameters, with units and
limits), `Workload` (built with a System and its Params; it draws its random streams from
the System) and `USES`, the parts of the instance it drives (sim/scenario.py INSTANCE_PARTS:
a setting of a part it does not drive is refused, as it would change nothing). It may define
`idle(params)`, the parts of USES those parameters leave idle, each with the parameter that
says so (sqlldr's direct: true commits nothing): their settings are refused too, naming it;
`check_scenario(spec, profile, params, src)`, its checks that need the whole scenario; and, if its data
fills the buffer cache, `all_cached(spec, params)`: the bytes the cache holds without database.db_cache
(the whole database) and what sets them, which the 32-bit SGA limit is checked against (sim/db/instance.py).
The registry maps the names people type to modules, imported only when used.
"""

from __future__ import annotations

import importlib

from sim.config import OltpsimError, suggest

REGISTRY = {
    "tpcc": "workloads.tpcc",
    "slob": "workloads.slob",
    "calibrate_io": "workloads.calibrate_io",
    "create_index": "workloads.create_index",
    "ctas": "workloads.ctas",
    "rman": "workloads.rman",
    "sqlldr": "workloads.sqlldr",
}


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str):
    """The workload module registered under `name`."""
    if name not in REGISTRY:
        raise OltpsimError(f"unknown workload {name!r}{suggest(name, REGISTRY)}; known workloads: {', '.join(names())}")
    return importlib.import_module(REGISTRY[name])
