"""Many users, cheaply: 65,000 TPC-C terminals (the scale of the rx5670's 2002 result) run to a 1%
confidence half-width; prints wall time, peak memory and the cost per transaction.

Two runs on the rx5670 profile, 256 server sessions behind a TP monitor, the 6,500-warehouse
database (hash clusters) with the 24 GB buffer cache (physical reads and DBWR writes), as experiments/itanium_tpcc.yaml:

1. 6,500 terminals, each thinking a tenth as long (exponential, with the mean of TPC-C's keying plus
   think cycle / 10, no keying time): the same database, I/O per transaction and offered load as run
   2 with a tenth of the users, so the events and wall time per transaction of the two show whether
   the cost grows with the users themselves (it must not), not with the load.
2. 65,000 terminals: the full configuration.

(A fully cached database of 6,500 warehouses does not fit the rx5670's memory: the model refuses it
as out of memory, so there is no cache-only run at this scale.)

Goals (issue 5): cost per transaction independent of the user count; 65,000 users to a 1%
half-width in under 60 s wall and under 1 GB. Exit status 1 if the first or the memory goal fails.

Run: `python benchmarks/many_users.py` (a benchmark, not a test: several minutes with physical I/O).
"""

from __future__ import annotations

import resource
import sys

from sim import scenario
from sim.run import run
from workloads.tpcc import STANDARD_KEYING, STANDARD_MIX, STANDARD_THINK


# Warm-up 5 s: terminals start part-way through their cycles, as a terminal seen at a random moment
# of steady state is (workloads/tpcc.py, _first_transaction), and the buffer cache's hit ratio is the
# cache model's from the start, so throughput has no start-up transient to delete. Measured (65,000
# users, seed 1, transactions per simulated second): 2,927/s over seconds 1-5 against 2,880/s over
# 6-40 (SD 70/s a second); DBWR's backlog levels at ~550 buffers by 10 s, far below its free-buffer
# limit, so no free buffer waits. A 15-s warm-up gave 78,736 tpmC (+-0.97%), 5 s gives 78,376 (+-0.76%).
WARMUP = "5 s"
# 2-s batches: the stopping rule takes at least 20 (run.min_batches), so a run measures 40 s at least, as ten
# 4-s batches did before the minimum was raised
BATCH = "2 s"


def tpcc_run(users: int, warehouses: int, seed: int = 1, think: float | None = None):
    """TPC-C's keying and think times, or (think given) an exponential think of that mean and no keying."""
    settings = {"users": users, "warehouses": warehouses, "sessions": 256, "hash_clusters": True,
                "database.redo_device": "redo",
                "run.seed": seed, "run.warmup": WARMUP, "run.batch": BATCH, "run.target_half_width": "1%",
                "run.max_time": "300 s", "database.db_cache": "24 GB"}
    if think is not None:
        settings.update(think_time=f"{think} s", keying_time="0 s")
    return run(scenario.load(None, settings, profile="rx5670", workload="tpcc"))


def mean_cycle() -> float:
    """A TPC-C terminal's mean keying plus think time per transaction, over the mix (seconds)."""
    total = sum(STANDARD_MIX.values())
    return sum(m / total * (STANDARD_KEYING[t] + STANDARD_THINK[t]) for t, m in STANDARD_MIX.items())


def cost(r) -> tuple[float, float]:
    """Events and wall-clock microseconds per simulated transaction."""
    tx = r.throughput_per_s * r.simulated_time
    return r.events / tx, 1e6 * r.wall_time / tx


def line(title: str, r) -> str:
    events, wall_us = cost(r)
    half = 100 * r.tpm_half_width / r.tpm
    return (f"{title}: {r.extra['new_order_tpm']:,.0f} tpmC, half-width {half:.2f}%, {r.simulated_time:.0f} s "
            f"simulated in {r.wall_time:.1f} s wall ({r.simulated_time / r.wall_time:.2f} simulated s per wall s, "
            f"{r.events / r.wall_time:,.0f} events/s), {events:.1f} events and {wall_us:.0f} us wall per transaction")


def verdict(r) -> str:
    half = r.tpm_half_width / r.tpm
    return (f"{'reached' if half <= 0.01 else 'did NOT reach'} 1% in {r.wall_time:.0f} s wall "
            f"({'under' if r.wall_time < 60 else 'OVER'} 60 s)")


def main() -> None:
    few = tpcc_run(6_500, 6_500, think=mean_cycle() / 10)
    print(line(f" 6,500 users thinking {mean_cycle() / 10:.2f} s", few))
    many = tpcc_run(65_000, 6_500)
    print(line("65,000 users", many))
    growth = cost(many)[0] / cost(few)[0]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
    print(f"per transaction, 65,000 vs 6,500 users at the same offered load: events x{growth:.2f}, "
          f"wall time x{cost(many)[1] / cost(few)[1]:.2f}")
    print(f"65,000 users: {verdict(many)}; peak RSS {peak:,.0f} MB ({'under' if peak < 1024 else 'OVER'} 1 GB)")
    sys.exit(0 if growth < 1.1 and peak < 1024 else 1)


if __name__ == "__main__":
    main()
