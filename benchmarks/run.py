"""Speed of the engine and of the model, measured (not asserted): run `python benchmarks/run.py`.

Prints the bare SimPy event rate on this machine (the ceiling), the time of Che's approximation over a
million items (the cache model's scale), oltpsim's event rate and simulated seconds per wall second on
the T5220 64-user OLTP scenario run to a 1% confidence half-width, the cost of a model event relative to
a bare one, the same with a timeline and then beside a CTAS (a background job), and (with --reproduce) the
wall time of `oltpsim reproduce`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import simpy


def bare_simpy_rate(n: int = 1_000_000) -> float:
    """Events per second of one process yielding env.timeout(1) n times."""
    env = simpy.Environment()

    def proc():
        for _ in range(n):
            yield env.timeout(1)

    env.process(proc())
    t = time.perf_counter()
    env.run()
    return n / (time.perf_counter() - t)


def che_million_items() -> float:
    """Seconds to solve Che's approximation over 1,000,000 Zipf(0.8) items (the buffer cache model's scale)."""
    import numpy as np

    from sim.analytic import che_hit_ratio

    rates = 1.0 / np.arange(1, 1_000_001) ** 0.8
    t = time.perf_counter()
    che_hit_ratio(rates, 50_000.0)
    return time.perf_counter() - t


def t5220_64_users(seed: int = 1, interval: str | None = None, beside: dict | None = None):
    from sim import scenario
    from sim.run import run

    watch = {"run.interval": interval} if interval else {}
    sc = scenario.load(None, {"users": 64, "think_time": "0 s", "keying_time": "0 s", "run.seed": seed,
                              "run.target_half_width": "1%", **watch, **(beside or {})}, profile="t5220",
                       workload="tpcc")
    return run(sc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reproduce", action="store_true", help="also time `oltpsim reproduce`")
    args = ap.parse_args()
    bare = statistics.median(bare_simpy_rate() for _ in range(args.repeat))
    print(f"bare SimPy: {bare / 1e3:,.0f} k events/s ({1e6 / bare:.2f} us per event)")
    che = statistics.median(che_million_items() for _ in range(args.repeat))
    print(f"Che's approximation over 1,000,000 items: {1e3 * che:.0f} ms")
    runs = [t5220_64_users(seed) for seed in range(1, args.repeat + 1)]
    wall = statistics.median(r.wall_time for r in runs)
    rate = statistics.median(r.events / r.wall_time for r in runs)
    simrate = statistics.median(r.simulated_time / r.wall_time for r in runs)
    per_tx = statistics.median(1e6 * r.wall_time / (r.throughput_per_s * r.simulated_time) for r in runs)
    r = runs[0]
    print(f"T5220 64 users to a {100 * r.tpm_half_width / r.tpm:.2f}% half-width: {wall:.1f} s wall (median of "
          f"{args.repeat}), {r.simulated_time:.0f} s simulated, {rate / 1e3:,.0f} k events/s, "
          f"{simrate:.2f} simulated s per wall s, {r.events / (r.throughput_per_s * r.simulated_time):.1f} events "
          f"and {per_tx:.0f} us wall per transaction")
    # Work saved by needing fewer events makes each remaining event dearer: the cost per
    # transaction is the figure to compare across versions, this ratio only within one.
    print(f"model event cost: {bare / rate:.2f} x a bare SimPy event")
    watched = t5220_64_users(1, interval="1 s")   # a timeline reads every counter each interval
    print(f"the same, seed 1, with a timeline every simulated second ({len(watched.timeline)} rows): "
          f"{watched.wall_time:.2f} s wall against {runs[0].wall_time:.2f} s")
    # two workloads: each session's bursts counted by workload, the miss rates blended every 20 ms (sim/system.py)
    job = t5220_64_users(1, beside={"background.workload": "ctas", "background.params.table_size": "2 GB"})
    print(f"the same, seed 1, then a 2 GB CTAS beside the users (a background job, {job.elapsed:.1f} s): "
          f"{job.wall_time:.2f} s wall, {job.simulated_time:.0f} s simulated, {job.events / job.wall_time / 1e3:,.0f} k "
          f"events/s, {job.simulated_time / job.wall_time:.2f} simulated s per wall s")
    if args.reproduce:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sim.cli", "reproduce"], check=False, stdout=subprocess.DEVNULL)
        print(f"oltpsim reproduce: {time.perf_counter() - t:.0f} s wall")


if __name__ == "__main__":
    main()
