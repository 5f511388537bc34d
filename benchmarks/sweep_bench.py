"""Speed of a sweep on each executor (measured, not asserted): run `python benchmarks/sweep_bench.py`.

A 40-run sweep (T5220 TPC-C, 8 to 64 users x 5 replications, each run 0.2-1 s of wall time)
in this process, on a local process pool and on a Dask LocalCluster of single-threaded
processes. Prints each executor's wall time (start and stop included), the pool's speed-up
over serial, Dask's overhead over the pool in total and per run, and checks that all three
produced the same numbers. On a shared machine wall times measure the neighbours too: note
the load average printed first, and read the CPU-second figures, which barely depend on
load: the speed-up the split of work allows with a core per worker is serial CPU inside the
runs over the busiest worker's.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

from sim import sweep as sw
from sim.executors import open_executor

SCENARIO = {"profile": "t5220", "workload": "tpcc", "params": {"users": 8, "think_time": "0 s", "keying_time": "0 s"},
            "database": {"redo_device": "array"},
            "run": {"warmup": "0.5 s", "batch": "0.5 s", "min_batches": 4, "max_time": "2 s"}}
VARY = {"users": [8, 16, 24, 32, 40, 48, 56, 64]}
REPLICATIONS = 5


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (pool workers, Dask nannies and workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed_sweep(executor: str, workers: int | None):
    with tempfile.TemporaryDirectory() as out:
        t, c = time.perf_counter(), cpu_seconds()
        res = sw.sweep(SCENARIO, VARY, replications=REPLICATIONS, out=out, executor=executor, workers=workers,
                       progress=False)
        wall, cpu = time.perf_counter() - t, cpu_seconds() - c
        per_worker: dict[str, float] = {}
        for rec in sw.Journal(Path(out) / "points.jsonl").read().values():
            per_worker[rec["worker"]] = per_worker.get(rec["worker"], 0.0) + rec["cpu_time"]
        return wall, cpu, res, per_worker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    sw.sweep(SCENARIO, {"users": [8]}, out=tempfile.mkdtemp(), executor="serial", progress=False)  # imports, once
    walls: dict[str, list[float]] = {"serial": [], "pool": [], "dask": []}
    cpus: dict[str, list[float]] = {"serial": [], "pool": [], "dask": []}
    tables = {}
    busiest: dict[str, list[float]] = {"serial": [], "pool": [], "dask": []}   # CPU s of the busiest worker
    run_cpu: dict[str, list[float]] = {"serial": [], "pool": [], "dask": []}   # CPU s inside the runs
    for _ in range(args.repeat):
        for name, kind in (("serial", "serial"), ("pool", "process"), ("dask", "dask")):
            wall, cpu, res, per_worker = timed_sweep(kind, None if kind == "serial" else args.workers)
            walls[name].append(wall)
            cpus[name].append(cpu)
            tables[name] = res.table
            busiest[name].append(max(per_worker.values()))
            run_cpu[name].append(sum(per_worker.values()))
    w = {k: statistics.median(v) for k, v in walls.items()}
    c = {k: statistics.median(v) for k, v in cpus.items()}
    runs = len(tables["serial"])
    busy = tables["serial"]["wall_time"].sum()
    print(f"{runs} runs, {busy:.1f} s of simulation in total (serial, inside run())")
    print(f"serial:                       {w['serial']:6.1f} s")
    print(f"process pool ({args.workers} workers):     {w['pool']:6.1f} s   speed-up {w['serial'] / w['pool']:.2f}x")
    print(f"Dask LocalCluster ({args.workers}x1 thread): {w['dask']:6.1f} s   speed-up {w['serial'] / w['dask']:.2f}x; "
          f"overhead over the pool {w['dask'] - w['pool']:+.1f} s ({100 * (w['dask'] / w['pool'] - 1):+.0f}%, "
          f"{1000 * (w['dask'] - w['pool']) / runs:+.0f} ms per run)")
    t = time.perf_counter()
    with open_executor("dask", args.workers):
        pass
    startup = time.perf_counter() - t
    print(f"Dask LocalCluster start and stop alone: {startup:.1f} s; the rest of its overhead: "
          f"{1000 * (w['dask'] - w['pool'] - startup) / runs:+.0f} ms per run")
    # CPU seconds barely depend on what else the machine runs: the work each executor adds.
    print(f"CPU seconds: serial {c['serial']:.1f}, pool {c['pool']:.1f} ({c['pool'] / c['serial']:.2f}x), "
          f"Dask {c['dask']:.1f} ({c['dask'] / c['serial']:.2f}x)")
    b = {k: statistics.median(v) for k, v in busiest.items()}
    r = {k: statistics.median(v) for k, v in run_cpu.items()}
    print(f"CPU seconds inside the runs: serial {r['serial']:.1f}, busiest pool worker {b['pool']:.1f}, busiest "
          f"Dask worker {b['dask']:.1f}: with a core per worker the split allows {r['serial'] / b['pool']:.2f}x "
          f"(pool) and {r['serial'] / (b['dask'] + startup):.2f}x (Dask, start-up included)")
    figures = ["tpm", "cpu_idle", "events"]
    same = all(tables[k][figures].equals(tables["serial"][figures]) for k in ("pool", "dask"))
    print(f"same numbers on all three executors: {'yes' if same else 'NO'}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
