"""The rx5670 experiments keep the premises their notes state."""

from __future__ import annotations

from sim import experiments as ex
from sim import scenario
from sim.run import run


def test_data_stalls_run_saturates_the_processors_like_the_full_tpcc_run():
    # The data-stall experiment stands in for the full TPC-C run by saturating the processors (so the bus
    # carries the full run's load). Every transaction also waits for physical reads, so too few sessions
    # leave processors idle (64 sessions left a quarter idle) and understate the bus load.
    exp = ex.load_experiment(ex.experiment_paths()["itanium.data_stalls"])
    data = ex.row_scenario_data(exp, exp.rows[0])
    data = scenario.apply_overrides(data, {"run.warmup": "1 s", "run.batch": "0.5 s", "run.min_batches": 2,
                                           "run.max_time": "1 s"})
    r = run(scenario.resolve(data, "itanium_data_stalls.yaml"))
    assert r.status == "ok"
    assert r.cpu_idle < 3.0, f"idle {r.cpu_idle:.1f}%: the processors are not saturated"
    assert r.extra["physical_reads_per_s"] > 0.0        # the storage path is on, as in the full run
    # the loaded latency is above the unloaded one: the shared bus queues
    assert r.extra["memory_latency_ns"] > r.extra["memory_unloaded_latency_ns"]
