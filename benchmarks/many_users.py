"""Many users, cheaply: 65,000 TPC-C terminals (the scale of the rx5670's 2002 result) run to a 1%
confidence half-width; prints wall time, peak memory (resource.getrusage) and the cost per
transaction beside a run with a tenth of the users, to show it does not grow with users.

Run: `python benchmarks/many_users.py` (a benchmark, not a test: about half a minute).
"""

from __future__ import annotations

import resource
import sys

from sim import scenario
from sim.run import run


def tpcc_run(users: int, seed: int = 1):
    sc = scenario.load(None, {"users": users, "warehouses": users // 10, "sessions": 256, "database.db_cache": "24 GB",
                              "database.redo_device": "redo", "run.seed": seed, "run.warmup": "15 s",
                              "run.batch": "4 s", "run.target_half_width": "1%", "run.max_time": "240 s"},
                       profile="rx5670", workload="tpcc")
    return run(sc)


def line(r) -> str:
    tx = r.throughput_per_s * r.simulated_time
    return (f"{r.inputs['params.users']:>6} users: {r.extra['new_order_tpm']:,.0f} tpmC, half-width "
            f"{100 * r.tpm_half_width / r.tpm:.2f}%, {r.simulated_time:.0f} s simulated in {r.wall_time:.1f} s wall, "
            f"{r.events / tx:.2f} events and {1e6 * r.wall_time / tx:.1f} us wall per transaction")


def main() -> None:
    small = tpcc_run(6_500)
    print(line(small))
    big = tpcc_run(65_000)
    print(line(big))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
    print(f"peak RSS {peak:,.0f} MB; 65,000 users: {big.wall_time:.1f} s wall "
          f"({'under' if big.wall_time < 60 else 'OVER'} 60 s), {'under' if peak < 1024 else 'OVER'} 1 GB")
    sys.exit(0 if big.wall_time < 60 and peak < 1024 and big.tpm_half_width / big.tpm <= 0.01 else 1)


if __name__ == "__main__":
    main()
