"""Memory as a latency (sim/hardware/memory.py) and as a capacity (sim/os/vm.py)."""

from __future__ import annotations

import pytest
import simpy

from sim import scenario
from sim.hardware.memory import MemorySystem, ring_hops
from sim.hardware.profile import load_profile
from sim.os.vm import PAGE, VirtualMemory
from sim.run import run

MB = 2.0**20


def test_ring_topologies():
    assert ring_hops(1) == [0]
    assert ring_hops(2) == [0, 1]
    assert ring_hops(4) == [0, 1, 2, 1]  # the 4-way Opteron square: one node two hops away


@pytest.mark.parametrize("name", ["opteron-2way", "opteron-4way", "rx5670", "t5220"])
def test_unloaded_latency_is_the_mean_over_nodes(name):
    p = load_profile(name)
    m = MemorySystem(simpy.Environment(), p.memory, p.cpu)
    # spreading the remote premium over hops keeps the interleaved mean the profile describes (exact)
    assert m.unloaded == pytest.approx(p.memory.average_latency(p.cpu.sockets), rel=1e-12)
    assert m.node_latency[0] == pytest.approx(p.memory.latency)
    assert m.node_latency == sorted(m.node_latency[:len(m.node_latency) // 2 + 1]) + m.node_latency[len(m.node_latency) // 2 + 1:]


def test_loaded_latency_is_md1_and_grows_with_utilisation():
    p = load_profile("rx5670")
    m = MemorySystem(simpy.Environment(), p.memory, p.cpu)
    rate = 0.5 * m.bandwidth / m.bytes_per_miss          # half the bus
    # M/D/1 wait at rho = 0.5 is rho*s/(2(1-rho)) = s/2 (exact)
    assert m.loaded_latency(rate) - m.unloaded == pytest.approx(m.service / 2, rel=1e-12)
    lats = [m.loaded_latency(f * m.bandwidth / m.bytes_per_miss) for f in (0.0, 0.2, 0.5, 0.8, 0.9)]
    assert lats[0] == m.unloaded and all(a < b for a, b in zip(lats, lats[1:]))


def _saturated_rx5670(seconds: str = "3 s", **overrides):
    data = {"users": 16, "think_time": "0 s", "keying_time": "0 s", "warehouses": 100, "database.db_cache": "8 GB",
            "database.redo_device": "redo", "run.warmup": "1 s", "run.batch": "0.5 s", "run.min_batches": 2,
            "run.max_time": seconds, **overrides}
    return run(scenario.load(None, data, profile="rx5670", workload="tpcc"))


def test_feedback_settles_on_the_fixed_point():
    r = _saturated_rx5670()
    p = load_profile("rx5670")
    m = MemorySystem(simpy.Environment(), p.memory, p.cpu)
    from workloads.tpcc import misses_per_instruction
    miss_rate = r.extra["instructions_per_s"] * misses_per_instruction(p.cpu.llc_size, p.cpu.cores_per_socket)
    # the latency the run settled on is the one its own miss rate implies (2%: interval noise, damping)
    assert r.extra["memory_latency_ns"] * 1e-9 == pytest.approx(m.loaded_latency(miss_rate), rel=0.02)
    assert r.extra["memory_latency_ns"] * 1e-9 > m.unloaded
    # CPI stack adds up: cpi = issue + data stall + other, other ~0 on a one-strand core
    assert r.extra["cpi"] == pytest.approx(r.extra["cpi_issue"] + r.extra["cpi_data_stall"], rel=0.01)


def test_slower_memory_never_raises_throughput():
    fast = _saturated_rx5670()
    doubled = f"{2e9 * load_profile('rx5670').memory.latency} ns"
    slow = run(scenario.load(None, {"users": 16, "think_time": "0 s", "keying_time": "0 s", "warehouses": 100,
                                    "database.db_cache": "8 GB", "database.redo_device": "redo", "run.warmup": "1 s",
                                    "run.batch": "0.5 s", "run.min_batches": 2, "run.max_time": "3 s",
                                    "hardware.memory.latency": doubled}, profile="rx5670", workload="tpcc"))
    assert slow.tpm < fast.tpm


# ---------------------------------------------------------------- the memory account

def _vm(ram=16 * 1024, swap=6 * 1024, kernel=1024):
    spec = load_profile("opteron-2way").memory
    spec = __import__("dataclasses").replace(spec, size=ram * MB, swap=swap * MB, kernel=kernel * MB)
    return VirtualMemory(simpy.Environment(), spec)


def test_account_adds_up_and_leaves_the_rest_to_the_page_cache():
    vm = _vm()
    vm.map_shared("sga", 8192 * MB)
    vm.add_processes("server", 1000, 1.5 * MB, 0.25 * MB)
    vm.add_processes("server", 1000, 1.5 * MB, 0.25 * MB)   # counted by kind: O(1) per call
    assert vm.committed() == pytest.approx((1024 + 8192 + 3000) * MB)
    # the page cache is what is left less the scanner's reserve (1/64 of RAM)
    assert vm.page_cache_size() == pytest.approx((16384 - 1024 - 8192 - 3000 - 16384 / 64) * MB)
    assert vm.overcommit() == 0 and not vm.out_of_memory() and vm.working_set_out() == 0


def test_paging_starts_after_the_cold_pages_and_grows_with_overcommit():
    outs = []
    for users in (4000, 6000, 7000, 7500):
        vm = _vm()
        vm.map_shared("sga", 8192 * MB)
        vm.add_processes("server", users, 1.5 * MB, 1.2 * MB)
        outs.append(vm.working_set_out())
        if users == 4000:  # 15.2 GB committed, below RAM: nothing paged out
            assert vm.overcommit() == 0
    assert outs[0] == 0.0
    assert all(a <= b for a, b in zip(outs, outs[1:])) and outs[-1] > 0.0
    vm = _vm()
    vm.map_shared("sga", 8192 * MB)
    vm.add_processes("server", 7500, 1.5 * MB, 1.2 * MB)
    assert vm.faults_on_wake(1.2 * MB) == pytest.approx(vm.working_set_out() * 1.2 * MB / PAGE, abs=1)
    assert vm.out_of_memory() is False
    vm.add_processes("server", 2000, 1.5 * MB, 1.2 * MB)
    assert vm.out_of_memory() is True


def test_out_of_memory_is_a_result_not_a_crash():
    sc = scenario.load(None, {"users": 5000, "think_time": "1.88 s", "keying_time": "0 s", "warehouses": 150,
                              "users_on_host": True, "database.db_cache": "12288 MB",
                              "database.shared_pool": "635 MB"}, profile="opteron-2way", workload="tpcc")
    r = run(sc)
    assert r.status == "out_of_memory" and "exceeds RAM + swap" in r.message and r.tpm is None
    # the same users with the smaller cache fit (the paper's 8 GB row ran)
    from sim.system import System
    import workloads
    sc8 = scenario.load(None, {"users": 5000, "think_time": "1.88 s", "keying_time": "0 s", "warehouses": 150,
                               "users_on_host": True, "database.db_cache": "8192 MB",
                               "database.shared_pool": "602 MB"}, profile="opteron-2way", workload="tpcc")
    system = System(sc8)
    assert workloads.get("tpcc").Workload(system, sc8.params).admit() is None


def test_overcommitted_memory_pages_and_slows_users_down():
    base = {"users": 400, "think_time": "0.2 s", "keying_time": "0 s", "warehouses": 10, "users_on_host": True,
            "database.db_cache": "600 MB", "database.shared_pool": "100 MB", "run.warmup": "1 s",
            "run.batch": "1 s", "run.min_batches": 3, "run.max_time": "4 s"}
    roomy = run(scenario.load(None, base, profile="opteron-2way", workload="tpcc"))
    small = {"hardware.memory.size": "1330 MB", "hardware.memory.kernel": "512 MB"}
    tight = run(scenario.load(None, {**base, **small}, profile="opteron-2way", workload="tpcc"))
    assert tight.status == "ok" and tight.extra["memory"]["working_set_paged_out_pct"] > 0
    waits = {e["event"]: e for e in tight.top_events}
    assert "OS page in (swap)" in waits and "OS page in (swap)" not in {e["event"] for e in roomy.top_events}
    # slower, and more kernel time per transaction (fault handling)
    assert tight.tpm < roomy.tpm and tight.cpu_sys / tight.tpm > roomy.cpu_sys / roomy.tpm


def test_cost_per_transaction_does_not_grow_with_users():
    def events_per_tx(users):
        # The same 50-warehouse database (it fits the 8 GB cache: no physical I/O) whatever the users.
        sc = scenario.load(None, {"users": users, "warehouses": 50, "think_time": "15 s", "keying_time": "6 s",
                                  "sessions": 64,
                                  "database.db_cache": "8 GB", "database.redo_device": "redo", "run.warmup": "10 s",
                                  "run.batch": "2 s", "run.min_batches": 3, "run.max_time": "6 s"},
                           profile="rx5670", workload="tpcc")
        r = run(sc)
        return r.events / (r.throughput_per_s * r.simulated_time)
    few, many = events_per_tx(1000), events_per_tx(10000)
    # thinking users cost nothing: events per transaction stay flat within 15% as users grow tenfold
    assert many < 1.15 * few
