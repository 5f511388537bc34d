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


# ---------------------------------------------------------------- the feedback loop, open loop

class _SteadyCpu:
    """Stands in for the cores: retires `ips` instructions per second whatever the memory latency (the
    feedback with the loop cut open, so that every update has a closed form), and records every stall
    model it is handed with the time and the latency behind it."""

    def __init__(self, env, ips):
        self.env, self.ips, self.base, self.t0 = env, ips, 0.0, 0.0
        self.memory, self.applied = None, []
        self.codes = 1   # one code: the memory counts its misses itself

    def instructions_retired(self):
        return self.base + self.ips * (self.env.now - self.t0)

    def stall_weighted_instructions(self):   # one strand a pipeline: each miss stalls latency / mlp
        return self.instructions_retired()

    def counters(self):
        return self.instructions_retired(), self.stall_weighted_instructions()

    def set_rate(self, ips):
        self.base, self.t0, self.ips = self.instructions_retired(), self.env.now, ips

    def reset_stats(self):
        self.base, self.t0 = 0.0, self.env.now

    def set_behaviour(self, mem):
        self.applied.append((self.env.now, self.memory.latency, mem))


def _open_loop(name="rx5670", rho=0.5, mpi=0.01, until=1.0):
    """A memory system fed by a steady CPU whose misses use `rho` of the bandwidth; another process keeps
    the simulation alive until `until`."""
    p = load_profile(name)
    env = simpy.Environment()
    m0 = MemorySystem(env, p.memory, p.cpu)
    cpu = _SteadyCpu(env, rho * m0.bandwidth / m0.bytes_per_miss / mpi if mpi else 1e9)
    m = MemorySystem(env, p.memory, p.cpu, cpu)
    cpu.memory = m
    env.timeout(until)   # another event: the simulation has more to do until then
    m.set_misses_per_instruction(mpi)
    return env, cpu, m


def test_a_miss_moves_its_line_and_a_quarter_line_written_back():
    # rx5670: 128-byte lines [SNC], one dirty line in four written back: 160 bytes a miss over the one
    # front-side bus of the four sockets (controllers: 1)
    p = load_profile("rx5670")
    m = MemorySystem(simpy.Environment(), p.memory, p.cpu)
    bus = 4 * p.memory.bandwidth_per_socket
    assert m.bytes_per_miss == 160.0
    assert m.service == pytest.approx(160.0 / bus, rel=1e-12)
    assert m.utilisation(1e6) == pytest.approx(1e6 * 160.0 / bus, rel=1e-12)
    # opteron-4way: a controller per socket, each with its socket's bandwidth; 64-byte lines -> 80 bytes
    p = load_profile("opteron-4way")
    m = MemorySystem(simpy.Environment(), p.memory, p.cpu)
    assert m.controllers == 4 and m.bytes_per_miss == 80.0
    assert m.service == pytest.approx(80.0 / p.memory.bandwidth_per_socket, rel=1e-12)
    assert m.utilisation(1e6) == pytest.approx(1e6 * 80.0 / (4 * p.memory.bandwidth_per_socket), rel=1e-12)


def test_loaded_latency_stays_finite_at_and_beyond_saturation():
    p = load_profile("rx5670")
    m = MemorySystem(simpy.Environment(), p.memory, p.cpu)
    full = m.bandwidth / m.bytes_per_miss
    # capped at rho = 0.95: the M/D/1 wait there is 0.95 s / (2 x 0.05) = 9.5 services (hand arithmetic)
    for f in (0.95, 1.0, 2.0):
        assert m.loaded_latency(f * full) == pytest.approx(m.unloaded + 9.5 * m.service, rel=1e-9)
    assert m.loaded_latency(0.9 * full) == pytest.approx(m.unloaded + 4.5 * m.service, rel=1e-9)
    # given the strands' present latency, misses coming faster than the cap allows raise it by the excess (finite
    # requesters queue until they fit), and below the cap at its own fixed point nothing changes
    assert m.loaded_latency(2.0 * full, 1e-6) == pytest.approx(1e-6 * 2.0 / 0.95, rel=1e-12)
    settled = m.loaded_latency(0.5 * full)
    assert m.loaded_latency(0.5 * full, settled) == settled


def test_a_saturated_memory_holds_the_throughput_to_its_bandwidth():
    """T5220, 64 busy users: at 8, 4 and 2 GB/s a socket the controllers are the bottleneck, so the feedback
    settles at the cap's utilisation (95%) and TPM halves with the bandwidth. The open queue's wait, capped,
    had let the strands miss faster than the controllers serve (reported at 170-285%, TPM down only 12-23%)."""
    tpm = {}
    for bw in ("8 GB/s", "4 GB/s"):
        r = run(scenario.load(None, {"users": 64, "think_time": "0 s", "keying_time": "0 s", "run.warmup": "1 s",
                                     "run.batch": "0.5 s", "run.min_batches": 4, "run.max_time": "3 s",
                                     "hardware.memory.bandwidth_per_socket": bw}, profile="t5220", workload="tpcc"))
        assert 90.0 <= r.extra["memory_bandwidth_util_pct"] <= 100.0, r.extra["memory_bandwidth_util_pct"]
        tpm[bw] = r.tpm
    assert tpm["4 GB/s"] / tpm["8 GB/s"] == pytest.approx(0.5, rel=0.1)


def test_stall_is_latency_times_clock_over_mlp_to_a_tenth_of_a_cycle():
    p = load_profile("rx5670")  # 1 GHz, MLP 1.2
    m = MemorySystem(simpy.Environment(), p.memory, p.cpu)
    assert m.stall_cycles(210e-9) == 175.0
    assert m.stall_cycles(100e-9) == 83.3  # 83.33.. cycles, to a tenth


def test_latency_moves_half_way_to_the_loaded_latency_every_20_ms():
    env, cpu, m = _open_loop(rho=0.5)
    target = m.unloaded + m.service / 2  # M/D/1 at rho = 0.5
    env.run(until=0.11)
    updates = [(t, lat) for t, lat, _ in cpu.applied if t > 0]
    # 20 ms apart, one update each (calling set_misses_per_instruction again would not add a loop)
    assert [t for t, _ in updates] == pytest.approx([0.02, 0.04, 0.06, 0.08, 0.1], abs=1e-12)
    for k, (_t, lat) in enumerate(updates, start=1):
        assert lat == pytest.approx(target - (target - m.unloaded) * 0.5 ** k, rel=1e-12)
    # the cores get latency x clock / MLP, to a tenth of a cycle
    _t, lat, mem = cpu.applied[-1]
    assert mem.stall_cycles == round(lat * 1e9 / 1.2, 1) and mem.misses_per_instruction == 0.01
    assert mem.mlp == 1.2
    # moves under 0.1% of the latency are not handed to the cores (their rate tables are kept): the 7th
    # step, 20 ns / 2**7 = 0.16 ns, is below 0.1% of ~230 ns, the 6th (0.31 ns) is not
    env.run(until=0.5)
    updates = [lat for t, lat, _ in cpu.applied if t > 0]
    assert len(updates) == 6 and m.latency == updates[-1]
    assert updates[-1] == pytest.approx(target - (target - m.unloaded) * 0.5 ** 6, rel=1e-12)


def test_feedback_loop_is_started_once():
    env, cpu, m = _open_loop(rho=0.5)
    m.set_misses_per_instruction(0.01)   # the same code again (a second workload phase, say)
    env.run(until=0.05)
    assert [t for t, _, _ in cpu.applied if t > 0] == pytest.approx([0.02, 0.04], abs=1e-12)


def test_statistics_are_the_misses_and_bandwidth_of_the_intervals():
    env, cpu, m = _open_loop(rho=0.5)
    env.run(until=0.101)  # five intervals of equal misses
    lats = [m.unloaded] + [lat for t, lat, _ in cpu.applied if t > 0][:4]   # latency during each interval
    misses = cpu.ips * 0.1 * 0.01
    assert m.misses == pytest.approx(misses, rel=1e-12)
    assert m.mean_latency() == pytest.approx(sum(lats) / 5, rel=1e-12)
    r = m.report(busy_strand_seconds=0.4, instructions=cpu.ips * 0.1)
    assert r["memory_bandwidth_util_pct"] == pytest.approx(50.0, rel=1e-12)
    assert r["memory_unloaded_latency_ns"] == pytest.approx(210.0, rel=1e-12)
    assert r["memory_latency_ns"] == pytest.approx(sum(lats) / 5 * 1e9, rel=1e-12)
    assert r["memory_latency_cycles"] == pytest.approx(sum(lats) / 5 * 1e9, rel=1e-12)   # 1 GHz
    cpi = 0.4 * 1e9 / (cpu.ips * 0.1)
    stall = 0.01 * sum(lats) / 5 * 1e9 / 1.2
    assert r["cpi"] == pytest.approx(cpi, rel=1e-12) and r["cpi_data_stall"] == pytest.approx(stall, rel=1e-12)
    assert r["cpi_other"] == pytest.approx(cpi - 1.2 - stall, rel=1e-9)
    assert r["data_stall_share_pct"] == pytest.approx(100 * stall / cpi, rel=1e-12)


def test_the_cpi_stack_counts_each_interval_at_the_miss_rate_it_ran_at():
    """Code whose miss rate changes mid-run (RMAN's compressors sharing the LLC, set as channels start and end
    pieces) stalls at the mean of its rates over the instructions, not at the last one set: half the
    instructions at 0.01, half at 0.02 stall at 0.015 a miss-latency each (load too light to move the latency)."""
    env, cpu, m = _open_loop(rho=0.01, mpi=0.01)
    env.run(until=0.1001)                      # five intervals at 0.01 counted
    m.set_misses_per_instruction(0.02)
    env.run(until=0.2001)                      # five at 0.02
    assert m.latency == m.unloaded
    r = m.report(busy_strand_seconds=0.2, instructions=cpu.instructions_retired())
    assert r["cpi_data_stall"] == pytest.approx(0.015 * m.unloaded * 1e9 / 1.2, rel=1e-3)


def test_an_idle_interval_counts_no_misses_and_relaxes_towards_unloaded():
    env, cpu, m = _open_loop(rho=0.5)
    env.run(until=0.04)   # just before the update at 40 ms (run(until) stops ahead of events at that time)
    cpu.set_rate(0.0)
    env.run(until=0.041)
    before, lat = m.misses, m.latency
    env.run(until=0.061)
    assert m.misses == before and m.busy_bandwidth == pytest.approx(0.02 * 0.5 * 2, rel=1e-12)  # 2 busy intervals
    assert m.latency == pytest.approx(lat + 0.5 * (m.unloaded - lat), rel=1e-12)


def test_after_a_reset_only_the_instructions_since_it_count():
    env, cpu, m = _open_loop(rho=0.5)
    env.run(until=0.05)
    cpu.reset_stats()   # the cores' counters restart at warm-up's end (mid-interval)
    m.reset_stats()
    env.run(until=0.061)
    assert m.misses == pytest.approx(cpu.ips * 0.01 * 0.01, rel=1e-9)  # 10 ms of instructions
    assert m.span == pytest.approx(0.02, rel=1e-12)


def test_feedback_stops_when_nothing_else_will_happen_and_restarts_on_demand():
    env, cpu, m = _open_loop(rho=0.5, until=0.05)
    while env.peek() < float("inf") and env.now < 1.0:
        env.step()
    assert env.now == pytest.approx(0.06, abs=1e-12)   # the first update after the last other event
    n = len(cpu.applied)
    m.set_misses_per_instruction(0.01)                 # the loop starts again
    env.timeout(0.05)
    env.run(until=env.now + 0.03)
    assert len(cpu.applied) == n + 2 and cpu.applied[-1][0] == pytest.approx(0.08, abs=1e-12)


def test_no_misses_no_feedback_and_an_empty_report():
    env, cpu, m = _open_loop(rho=0.0, mpi=0.0)
    assert cpu.applied and env.peek() == 1.0     # only the other process: no feedback loop
    p = load_profile("rx5670")
    fresh = MemorySystem(simpy.Environment(), p.memory, p.cpu)
    r = fresh.report(busy_strand_seconds=0.0, instructions=0.0)
    assert r == {"memory_latency_ns": pytest.approx(210.0), "memory_latency_cycles": pytest.approx(210.0),
                 "memory_unloaded_latency_ns": pytest.approx(210.0), "memory_bandwidth_util_pct": 0.0}
    r = fresh.report(busy_strand_seconds=1.0, instructions=1e9)
    assert r["cpi_data_stall"] == 0.0 and r["cpi"] == pytest.approx(1.0)



def test_with_no_misses_counted_since_a_reset_the_mean_latency_is_the_present_one():
    """Just after a reset no miss has been counted: the mean latency (and the report's) is the latency the
    feedback has reached, loaded at half the bandwidth, not the unloaded one."""
    env, cpu, m = _open_loop(rho=0.5)
    env.run(until=0.05)
    m.reset_stats()
    assert m.misses == 0.0 and m.latency > m.unloaded * 1.01
    assert m.mean_latency() == m.latency
    assert m.report(0.0, 0.0)["memory_latency_ns"] == pytest.approx(m.latency * 1e9, rel=1e-12)


def test_the_cpi_stack_s_other_part_is_never_negative():
    """cpi_other is what is left of the CPI after issue and data stall, floored at 0: rx5670 (1 GHz, issue 1.2
    cycles), 1e10 instructions in 1 busy strand-second is a CPI of 0.1, under the issue CPI: other is 0."""
    p = load_profile("rx5670")
    r = MemorySystem(simpy.Environment(), p.memory, p.cpu).report(busy_strand_seconds=1.0, instructions=1e10)
    assert r["cpi"] == pytest.approx(0.1) and r["cpi_issue"] == 1.2 and r["cpi_other"] == 0.0


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
    assert vm.expected_faults(1.2 * MB) == pytest.approx(vm.working_set_out() * 1.2 * MB / PAGE, rel=1e-12)
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
    workloads.get("tpcc").Workload(system, sc8.params)
    assert system.admit() is None


def test_overcommitted_memory_pages_and_slows_users_down():
    base = {"users": 400, "think_time": "0.2 s", "keying_time": "0 s", "warehouses": 10, "users_on_host": True,
            "database.db_cache": "600 MB", "database.shared_pool": "100 MB", "run.warmup": "1 s",
            "run.batch": "1 s", "run.min_batches": 3, "run.max_time": "4 s"}
    roomy = run(scenario.load(None, base, profile="opteron-2way", workload="tpcc"))
    # 1,360 MB: a sixth of the working sets out; the users still complete transactions in the 4 s (at 1,330 MB
    # a third is out and the run thrashes: a page-in queued the whole run completes no wait to report)
    small = {"hardware.memory.size": "1360 MB", "hardware.memory.kernel": "512 MB"}
    tight = run(scenario.load(None, {**base, **small}, profile="opteron-2way", workload="tpcc"))
    assert tight.status == "ok" and tight.extra["memory"]["working_set_paged_out_pct"] > 0
    waits = {e["event"]: e for e in tight.top_events}
    assert "OS page in (swap)" in waits and "OS page in (swap)" not in {e["event"] for e in roomy.top_events}
    # slower, and more kernel time per transaction (fault handling)
    assert tight.tpm < roomy.tpm and tight.cpu_sys / tight.tpm > roomy.cpu_sys / roomy.tpm
    # vmstat's paging, over the measured window as the swap drive's own figures are: 4 KB pages faulted in, read in
    # clusters of 8 pages (fewer reads than faults), si every page the clusters bring in (as Linux's pswpin counts
    # them, read-around included: the drive's read KB/s), so the faulted pages written out to make room
    paging = tight.extra["paging"]
    swap = tight.devices["local"]
    assert paging["swap_reads_per_s"] == swap["reads_per_s"] < paging["page_ins_per_s"]
    assert paging["swap_in_kb_per_s"] == pytest.approx(32 * swap["reads_per_s"])
    assert paging["swap_out_kb_per_s"] == pytest.approx(4 * paging["page_ins_per_s"])
    assert "paging" not in roomy.extra
    from sim.report import full
    assert "Paging (vmstat): page-ins/s " in full(tight) and "Paging" not in full(roomy)


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


# ---------------------------------------------------------------- the account, by hand (mutation round 3)

class _Recorder:
    """Stands for the dispatcher and the swap device: records what paging asks of them."""

    def __init__(self, env):
        self.env, self.calls = env, []

    def run(self, instructions, sys_share=0.0):
        self.calls.append(("cpu", instructions, sys_share))
        return self.env.timeout(0.001)

    def submit(self, op, size):
        self.calls.append((op, size))
        return self.env.timeout(0.010)


def _overcommitted(env=None, **kw):
    """16 GB RAM, 1 GB kernel, 8 GB SGA and 7,500 servers of 1.5 MB (1.2 MB working set):
    committed 20,466 MB, 4,082 MB over RAM; the cold pages (7,500 x 0.3 MB = 2,250 MB) go first,
    then 1,832 MB of the 9,000 MB of working sets: 20.36% of a working set is out."""
    env = env or simpy.Environment()
    spec = load_profile("opteron-2way").memory
    spec = __import__("dataclasses").replace(spec, size=16384 * MB, swap=6144 * MB, kernel=1024 * MB)
    vm = VirtualMemory(env, spec, **kw)
    vm.map_shared("sga", 8192 * MB)
    vm.add_processes("server", 7500, 1.5 * MB, 1.2 * MB)
    return vm


def test_working_set_out_is_the_overcommit_beyond_the_cold_pages_over_the_working_sets():
    vm = _overcommitted()
    assert vm.committed() == pytest.approx(20466 * MB)
    assert vm.overcommit() == pytest.approx(4082 * MB)
    assert vm.page_cache_size() == 0.0            # nothing left for the page cache
    assert vm.working_set_out() == pytest.approx(1832 / 9000)
    # a waking server finds 0.2036 x 1.2 MB / 4 KB = 62.5 pages on swap, on average
    assert vm.expected_faults(1.2 * MB) == pytest.approx(62.54, abs=0.01)
    d = vm.describe()
    assert d["committed_mb"] == pytest.approx(20466) and d["overcommit_mb"] == pytest.approx(4082)
    assert d["server_mb"] == pytest.approx(11250) and d["sga_mb"] == pytest.approx(8192)
    assert d["ram_mb"] == 16384 and d["swap_mb"] == 6144 and d["kernel_mb"] == 1024 and d["page_cache_mb"] == 0
    assert d["working_set_paged_out_pct"] == pytest.approx(100 * 1832 / 9000)


def test_paging_boundaries():
    vm = _vm(ram=1000, swap=500, kernel=100)
    vm.map_shared("sga", 400 * MB)
    vm.add_processes("p", 10, 60 * MB, 30 * MB)         # 1,100 MB committed: 100 MB over, within the 300 MB cold pages
    assert vm.overcommit() == pytest.approx(100 * MB) and vm.working_set_out() == 0.0
    vm.add_processes("q", 1, 200 * MB, 200 * MB)          # 1,300 MB: 300 MB over = the cold pages exactly: still 0
    assert vm.working_set_out() == 0.0 and vm.expected_faults(30 * MB) == 0
    vm.add_processes("q", 1, 200 * MB, 200 * MB)          # 1,500 MB: 200 MB beyond the cold of 700 MB of working sets
    assert vm.working_set_out() == pytest.approx(200 / 700) and not vm.out_of_memory()
    vm.add_processes("r", 10, 10 * MB, 10 * MB)           # 1,600 MB: past RAM + swap (1,500 MB)
    assert vm.out_of_memory() and vm.working_set_out() == pytest.approx(300 / 800)
    assert vm.shortfall_message() == ("committed memory 1,600.0 MB exceeds RAM + swap 1,500.0 MB by 100.0 MB (kernel 100.0, "
                                      "sga 400.0, p 10 x 60.00 = 600.0, q 2 x 200.00 = 400.0, r 10 x 10.00 = 100.0)")
    # nothing cold: the overcommit comes straight out of the working sets
    vm = _vm(ram=1000, swap=500, kernel=100)
    vm.map_shared("sga", 400 * MB)
    vm.add_processes("p", 10, 100 * MB, 100 * MB)         # 1,500 MB = RAM + swap, still allowed: 500 of 1,000 MB out
    assert not vm.out_of_memory() and vm.working_set_out() == pytest.approx(0.5)
    # the out share reaches 1 only once kernel + SGA alone exceed RAM: capped at all of it
    vm = _vm(ram=1000, swap=5000, kernel=100)
    vm.map_shared("sga", 1000 * MB)
    vm.add_processes("p", 10, 100 * MB, 100 * MB)         # 1,100 MB over, 1,000 MB of working sets
    assert vm.working_set_out() == 1.0 and vm.expected_faults(100 * MB) == 25600
    # no working set to page: nothing faults, however far over
    vm = _vm(ram=1000, swap=5000, kernel=100)
    vm.add_processes("idle", 10, 200 * MB, 0.0)
    assert vm.overcommit() == pytest.approx(1100 * MB) and vm.working_set_out() == 0.0


def test_working_set_is_at_most_the_private_memory():
    vm = _vm(ram=1000, swap=5000, kernel=100)
    vm.add_processes("p", 10, 100 * MB, 200 * MB)          # the working set is capped at 100 MB: nothing cold
    assert vm.committed() == pytest.approx(1100 * MB) and vm.working_set_out() == pytest.approx(100 / 1000)


def test_kernel_and_sga_locked_over_ram_cannot_start_and_equal_can():
    vm = _vm(ram=1000, swap=5000, kernel=100)
    vm.map_shared("sga", 900 * MB)
    assert not vm.out_of_memory()
    vm.map_shared("sga2", 1 * MB)
    assert vm.out_of_memory()
    assert vm.shortfall_message() == ("kernel and SGA (1,001.0 MB, resident: kernel 100.0, sga 900.0, sga2 1.0) "
                                      "exceed physical memory 1,000.0 MB by 1.0 MB")
    vm.locks_shared_memory = True   # Solaris's intimate shared memory (Linux SysV shared memory is not locked)
    assert vm.shortfall_message().startswith("kernel and SGA (1,001.0 MB, locked in memory: kernel 100.0,")


def test_the_64_bit_kernel_costs_its_own_footprint():
    spec = load_profile("ue10000").memory
    assert spec.kernel_64 is not None and spec.kernel_64 != spec.kernel
    assert VirtualMemory(simpy.Environment(), spec, kernel_bits=64).committed() == spec.kernel_64
    assert VirtualMemory(simpy.Environment(), spec, kernel_bits=32).committed() == spec.kernel
    spec = load_profile("opteron-2way").memory
    if spec.kernel_64 is None:  # no 64-bit figure: the kernel's
        assert VirtualMemory(simpy.Environment(), spec, kernel_bits=64).committed() == spec.kernel


def test_page_in_costs_fault_cpu_and_clustered_swap_reads():
    env = simpy.Environment()
    rec = _Recorder(env)
    vm = _overcommitted(env, dispatcher=rec, swap_device=rec)
    done = []

    def wake():
        yield from vm.page_in(1.2 * MB)
        done.append(env.now)
    env.process(wake())
    env.run()
    # 62 faults (62.5 expected: half a page carried to the next wake): 62 x 15,000 kernel instructions (all
    # system time), then ceil(62 / 8) = 8 reads of 8 pages waited for one after the other, and one write of
    # the 62 pages not waited for
    assert rec.calls[0] == ("cpu", 62 * 15_000.0, 1.0)
    assert rec.calls[1:9] == [("read", 8 * PAGE)] * 8
    assert rec.calls[9:] == [("write", 62 * PAGE)]
    assert vm.page_ins == 62 and vm.swap_reads == 8
    assert done == [pytest.approx(0.001 + 8 * 0.010)]


def _drain(gen):
    """Run a page_in generator with no dispatcher or swap device (it yields nothing) to its return value."""
    try:
        next(gen)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("page_in waited for something")


def test_page_ins_average_the_expected_faults_where_paging_begins():
    """A wake owing 0.27 of a page faults a page about one wake in four, not at every wake (rounding up made
    every wake read from swap: the thrashing cliff came ~4x too soon); over many wakes the faults are the
    expected number to within one page."""
    env = simpy.Environment()
    rec = _Recorder(env)
    vm = _overcommitted(env, dispatcher=rec, swap_device=rec)
    ws = 0.27 / vm.expected_faults(1.0)            # the working set that owes 0.27 of a page a wake

    def wakes(n, owed=0.0):
        for _ in range(n):
            owed = yield from vm.page_in(ws, owed)
    env.process(wakes(1000))
    env.run()
    assert abs(vm.page_ins - 270) <= 1 and vm.swap_reads == vm.page_ins
    # what one process owes is its own: another's wakes in between do not change which of its wakes fault
    alone, mixed = [], []
    for record, others in ((alone, 0), (mixed, 3)):
        vm = _overcommitted(simpy.Environment())
        owed = 0.0
        for _ in range(20):
            before = vm.page_ins
            owed = _drain(vm.page_in(ws, owed))
            record.append(vm.page_ins - before)
            for _ in range(others):
                _drain(vm.page_in(ws * 2.5))
    assert alone == mixed and sum(alone) == 5      # 20 x 0.27 = 5.4: 5 whole pages, 0.4 still owed


def test_no_overcommit_no_page_in():
    env = simpy.Environment()
    rec = _Recorder(env)
    vm = _vm()
    vm.dispatcher = vm.swap_device = rec
    vm.add_processes("server", 10, 1.5 * MB, 1.2 * MB)
    env.process(vm.page_in(1.2 * MB))
    env.run()
    assert rec.calls == [] and vm.page_ins == 0 and vm.swap_reads == 0


def test_the_account_follows_segments_and_processes_added_after_it_was_read():
    vm = _vm(ram=1000, swap=500, kernel=100)
    vm.add_processes("p", 1, 100 * MB, 50 * MB)
    assert vm.committed() == pytest.approx(200 * MB)
    vm.map_shared("sga", 300 * MB)                        # the SGA touched later: counted
    assert vm.committed() == pytest.approx(500 * MB)
    assert vm.page_cache_size() == pytest.approx((1000 - 500 - 1000 / 64) * MB)
    d = vm.describe()
    assert d["page_cache_mb"] == pytest.approx(1000 - 500 - 1000 / 64) and d["p_mb"] == pytest.approx(100)


def test_defaults_are_a_32_bit_kernel_and_shared_memory_touched_page_by_page():
    spec = load_profile("ue10000").memory
    vm = VirtualMemory(simpy.Environment(), spec)
    assert vm.committed() == spec.kernel and vm.locks_shared_memory is False and vm.page_replacement == "lru"


def test_sga_filling_ram_exactly_is_not_the_reason_when_processes_overflow_swap():
    vm = _vm(ram=1000, swap=500, kernel=100)
    vm.map_shared("sga", 900 * MB)                        # kernel + SGA = RAM: allowed
    vm.add_processes("p", 6, 100 * MB, 100 * MB)          # 1,600 MB > RAM + swap
    assert vm.out_of_memory()
    assert vm.shortfall_message().startswith("committed memory 1,600.0 MB exceeds RAM + swap")


def test_no_working_sets_nothing_faults_even_with_kernel_and_sga_over_ram():
    vm = _vm(ram=1000, swap=5000, kernel=100)
    vm.map_shared("sga", 1000 * MB)
    vm.add_processes("idle", 10, 10 * MB, 0.0)            # 200 MB over, only 100 MB of it cold, no working set
    assert vm.working_set_out() == 0.0 and vm.expected_faults(1 * MB) == 0


def test_under_hyper_threading_a_miss_stalls_a_strand_for_the_whole_latency_in_the_cpi_stack():
    """Xeon E5-2643 v3, 48 busy users: with one strand a core, a miss stalls latency / mlp (2) and the CPI stack is
    issue + data stalls exactly. With two, the window is split (MemoryBehaviour): with both strands busy a miss
    stalls the whole latency, so the data-stall CPI doubles, and what the pipeline sharing adds is 'other'. The
    report had counted every miss at latency / mlp, putting half the stall under 'other'."""
    x = {}
    for st in (1, 2):
        r = run(scenario.load(None, {"users": 48, "think_time": "0 s", "keying_time": "0 s", "run.warmup": "1 s",
                                     "run.batch": "0.5 s", "run.min_batches": 2, "run.max_time": "1 s",
                                     "hardware.cpu.strands_per_core": st}, profile="xeon-e5-2643v3-2s", workload="tpcc"))
        x[st] = r.extra
    assert x[1]["cpi"] == pytest.approx(x[1]["cpi_issue"] + x[1]["cpi_data_stall"], rel=1e-3)
    assert x[2]["cpi_data_stall"] == pytest.approx(2 * x[1]["cpi_data_stall"], rel=0.03)   # both strands busy
    assert x[2]["cpi_other"] > 0.0


def test_processes_a_workload_starts_are_admitted_too():
    """SLOB's sessions start with the run and a batch job's processes as it goes: past RAM + swap either is out
    of memory (they had run: admission looked only at what the workload mapped before it started; review)."""
    from sim.run import run
    slob = run(scenario.load(None, {"sessions": "300", "database.server_memory": "1 GB", "database.db_cache": "1 GB",
                                    "run.max_time": "0.1 s", "run.batch": "0.05 s"}, profile="xeon-e5-2699v3-2s", workload="slob"))
    assert slob.status == "out_of_memory" and "exceeds RAM + swap" in slob.message
    fits = run(scenario.load(None, {"sessions": "30", "database.server_memory": "1 GB", "database.db_cache": "1 GB",
                                    "run.max_time": "0.1 s", "run.warmup": "0.05 s", "run.batch": "0.05 s",
                                    "run.min_batches": "2"}, profile="xeon-e5-2699v3-2s", workload="slob"))
    assert fits.status == "ok"
    rman = run(scenario.load(None, {"channels": "4", "database.server_memory": "100 GB"}, profile="t5220",
                             workload="rman"))
    assert rman.status == "out_of_memory" and "once the job had started its processes" in rman.message
    assert rman.elapsed is None
    # nothing measured: no CPU figures either (zeros had read as an idle machine in a sweep's results.csv)
    assert slob.cpu_idle is slob.cpu_usr is slob.run_queue is rman.cpu_idle is None and slob.metric("cpu") is None


def test_the_free_reserve_is_what_is_left_when_less_than_a_64th_of_ram():
    """RAM 1000 MB, kernel 990 MB: 10 MB is free, less than lotsfree (15.6 MB): free -m's account shows the 10 MB
    as the reserve and no page cache, so committed + reserve + page cache still add up to RAM (mutation round)."""
    vm = _vm(ram=1000, swap=0, kernel=990)
    d = vm.describe()
    assert d["free_reserve_mb"] == pytest.approx(10.0) and d["page_cache_mb"] == 0.0
    assert d["committed_mb"] + d["free_reserve_mb"] + d["page_cache_mb"] == pytest.approx(1000.0)


def test_an_sga_alone_past_ram_exhausts_the_account_with_no_process_started():
    """The SGA is mapped before any process starts: its overrun fires `exhausted` at once (mutation round)."""
    vm = _vm(ram=1000, swap=5000, kernel=100)
    vm.map_shared("sga", 901 * MB)
    assert vm.exhausted.triggered and not vm.kinds


def test_shortfall_by_less_than_a_tenth_of_a_gb_reads_as_a_shortfall():
    """One 1.8-MB user past RAM + swap (the opteron-2way's 7,033rd, 0.4 MB over) had read "committed memory 22.0 GB
    exceeds RAM + swap 22.0 GB": the message gives MB, by how much, and the parts that add up to it."""
    vm = _vm()                                            # 16,384 MB RAM, 6,144 MB swap, 1,024 MB kernel
    vm.map_shared("sga", 9_000 * MB)
    vm.add_processes("server", 6_752, 1.8 * MB, 0.25 * MB)    # 10,024 + 12,153.6 = 22,177.6 MB: within
    assert not vm.out_of_memory()
    vm.add_processes("server", 196, 1.8 * MB, 0.25 * MB)      # 22,530.4 MB: 2.4 MB over
    assert vm.out_of_memory()
    assert vm.shortfall_message() == ("committed memory 22,530.4 MB exceeds RAM + swap 22,528.0 MB by 2.4 MB "
                                      "(kernel 1,024.0, sga 9,000.0, server 6,948 x 1.80 = 12,506.4)")


def test_an_out_of_memory_result_carries_the_account_that_ran_out():
    """The result of a run that ran out of memory had no memory account (extra empty): its parts add up to the
    committed memory, which is over RAM + swap by what the message says."""
    sc = scenario.load(None, {"users": 3000, "think_time": "1 s", "keying_time": "0 s", "warehouses": 10,
                              "database.server_memory": "5 MB", "hardware.memory.size": "16 GB",
                              "hardware.memory.swap": "0 GB"}, profile="opteron-2way", workload="tpcc")
    r = run(sc)
    assert r.status == "out_of_memory" and r.tpm is None
    m = r.extra["memory"]
    parts = sum(v for k, v in m.items() if k.endswith("_mb") and k not in
                ("ram_mb", "swap_mb", "committed_mb", "free_reserve_mb", "page_cache_mb", "overcommit_mb"))
    assert parts == pytest.approx(m["committed_mb"]) and m["committed_mb"] > m["ram_mb"] + m["swap_mb"]
    assert f"by {m['committed_mb'] - m['ram_mb'] - m['swap_mb']:,.1f} MB" in r.message
