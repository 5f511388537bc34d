"""Processor sharing in virtual time against hand arithmetic: finishing order and times of
bursts of different sizes, the busy, issue and sys areas they leave, the strand-to-group map,
and the rate table's MLP rule (a miss stalls stall_cycles x min(n, mlp))."""

from __future__ import annotations

import pytest
import simpy

from sim.analytic import repairman
from sim.hardware.cpu import Cpu, MemoryBehaviour, rate_table
from sim.hardware.profile import CpuSpec


def _spec(cores=1, strands=4, pipelines=1, clock=1e3, cpi=1.0):
    return CpuSpec(model="t", isa="sparcv9", sockets=1, cores_per_socket=cores, strands_per_core=strands,
                   pipelines_per_core=pipelines, clock=clock, cpi_issue=cpi, llc_size=4 * 2**20)


def _cpu(spec=None, mem=MemoryBehaviour(0.0, 0.0)):
    env = simpy.Environment()
    cpu = Cpu(env, spec or _spec())
    cpu.set_behaviour(mem)
    return env, cpu


def test_three_bursts_share_one_pipeline_and_finish_smallest_first():
    """No stalls, 1,000 instructions/s shared: A=100, B=200, C=300 from t=0 on three strands.
    3 busy (333/s each) until A ends at 0.3; 2 busy (500/s): B's last 100 by 0.5; C's last 100
    alone (1,000/s) by 0.6. Busy strand-seconds 0.9 + 0.4 + 0.1; sys shares 0.5, 0, 1:
    sys strand-seconds 1.5 x 0.3 + 1.0 x 0.2 + 1.0 x 0.1."""
    env, cpu = _cpu()
    done = {}
    for strand, (name, n, sys) in enumerate((("A", 100, 0.5), ("B", 200, 0.0), ("C", 300, 1.0))):
        cpu.execute(strand, n, sys, lambda name=name: done.__setitem__(name, env.now))
    env.run(until=0.1)
    assert cpu.instruction_rate() == pytest.approx(1000.0)
    env.run()
    assert done == pytest.approx({"A": 0.3, "B": 0.5, "C": 0.6}, abs=1e-9)
    busy, sys = cpu.strand_time()
    assert busy == pytest.approx(1.4) and sys == pytest.approx(0.75)
    assert cpu.instructions_retired() == pytest.approx(600.0)
    assert cpu.instruction_rate() == 0.0
    env.run(until=1.2)
    assert cpu.core_utilisation() == pytest.approx([0.5])     # issuing 0.6 s of 1.2
    cpu.reset_stats()
    env.run(until=2.0)
    assert cpu.strand_time() == (0.0, 0.0) and cpu.instructions_retired() == 0.0
    assert cpu.core_utilisation() == [0.0]
    g = cpu.groups[0]
    assert g.busy == 0 and g.busy_sys == 0.0 and g.heap == [] and g.pending is None


def test_a_burst_joining_later_and_equal_tags_finish_together():
    """A=300 at 0; at 0.1 (A has 100 done) B=100 and C=100 join: 3 busy, 333/s each: B and C end
    together at 0.4 (A then has 200 done); A's last 100 alone ends at 0.5. done(arg) gets its arg."""
    env, cpu = _cpu()
    g = cpu.groups[0]
    out = []
    g.start(300, 0.0, lambda a: out.append((a, env.now)), "A")

    def later():
        yield env.timeout(0.1)
        g.start(100, 0.0, lambda a: out.append((a, env.now)), "B")
        g.start(100, 0.0, lambda a: out.append((a, env.now)), "C")
    env.process(later())
    env.run()
    assert [a for a, _ in out] == ["B", "C", "A"]
    assert [t for _, t in out] == pytest.approx([0.4, 0.4, 0.5], abs=1e-9)


def test_strands_map_to_groups_core_by_core():
    """2 cores x 8 strands, 2 pipelines a core: groups of 4 strands; strand 5 is core 0's second
    group, strand 9 core 1's first."""
    env, cpu = _cpu(_spec(cores=2, strands=8, pipelines=2))
    assert cpu.cpu_count == 16 and len(cpu.groups) == 4
    assert [g.strands for g in cpu.groups] == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15)]
    assert [g.core for g in cpu.groups] == [0, 0, 1, 1]
    assert cpu.group_of_strand[5] is cpu.groups[1] and cpu.group_of_strand[9] is cpu.groups[2]
    # busy on core 1 only: corestat shows core 1 at half (one of its two pipelines issuing)
    cpu.execute(9, 1000, 0.0, lambda: None)
    env.run()
    assert cpu.core_utilisation() == pytest.approx([0.0, 0.5])


def test_rate_table_without_stalls_shares_the_pipelines():
    """No misses: n strands on p pipelines each run at min(n, p) / (n cpi) x clock."""
    rates, utils = rate_table(4, 2, 2.0, 0.0, 0.0, 1e9)
    assert rates == pytest.approx((0.0, 0.5e9, 0.5e9, 1e9 / 3, 0.25e9))
    assert utils == pytest.approx((0.0, 0.5, 1.0, 1.0, 1.0))
    # no misses, whatever a miss would cost; or misses that cost nothing: never stalled
    for mpi, stall in ((0.0, 150.0), (0.01, 0.0)):
        r, u = rate_table(4, 2, 2.0, mpi, stall, 1e9)
        assert r == pytest.approx(rates, rel=1e-12) and u == pytest.approx(utils, rel=1e-12)


@pytest.mark.parametrize("mlp", [1.0, 2.0, 8.0])
def test_rate_table_scales_the_stall_by_min_n_mlp(mlp):
    """Out-of-order cores split the window: with n busy strands a miss stalls stall x min(n, mlp);
    the group's rate is the repairman's with that think time and cpi/mpi cycles of service."""
    mpi, stall, cpi, clock = 0.01, 100.0, 1.0, 1e9
    rates, utils = rate_table(4, 1, cpi, mpi, stall, clock, mlp)
    for n in range(1, 5):
        x, busy = repairman(n, stall * min(n, mlp), cpi / mpi, 1)
        assert rates[n] == pytest.approx(x / mpi / n * clock, rel=1e-12)
        assert utils[n] == pytest.approx(busy, rel=1e-12)
    # one strand alone: CPI = cpi + mpi x stall, whatever mlp
    assert rates[1] == pytest.approx(clock / (cpi + mpi * stall), rel=1e-12)


def test_a_faster_memory_mid_burst_brings_the_finish_forward():
    """A = 3,000 instructions at CPI 2 (mpi 0.01, stall 100: 500/s on a 1,000-Hz clock); at t=2
    (1,000 done) the stalls vanish (1,000/s): the last 2,000 take 2 s, so A ends at 4, not at 6."""
    env, cpu = _cpu(mem=MemoryBehaviour(0.01, 100.0))
    done = []
    cpu.execute(0, 3000, 0.0, lambda: done.append(env.now))

    def change():
        yield env.timeout(2.0)
        cpu.set_behaviour(MemoryBehaviour(0.0, 0.0))
    env.process(change())
    env.run()
    assert done == [pytest.approx(4.0, abs=1e-9)]


def test_reset_mid_burst_counts_only_what_follows():
    """A = 1,000 instructions alone (1,000/s) from 0; statistics reset at 0.4 with nothing read
    since the start: after it, 0.6 s busy and 600 instructions; corestat at t=2 is 0.6 / 1.6."""
    env, cpu = _cpu()
    cpu.execute(0, 1000, 0.0, lambda: None)
    env.run(until=0.4)
    cpu.reset_stats()
    assert cpu.behaviour == MemoryBehaviour(0.0, 0.0)
    env.run(until=2.0)
    assert cpu.strand_time() == pytest.approx((0.6, 0.0))
    assert cpu.instructions_retired() == pytest.approx(600.0)
    assert cpu.core_utilisation() == pytest.approx([0.6 / 1.6])


def test_a_behaviour_change_with_two_bursts_running_wakes_for_the_nearer_one():
    """mpi 0.001, stall 1,000 cycles on a 1,000-Hz clock: two strands are the repairman M/M/1//2
    with think = service = 1,000 cycles: p0:p1:p2 = 1:2:2, the pipeline busy 4/5, 400/s a strand.
    A = 400 and B = 2,000 from 0; at 0.5 (200 done each) the stalls vanish: 500/s each. A's last
    200 end at 0.9; B's last 1,600 alone (1,000/s) at 2.5."""
    env, cpu = _cpu(mem=MemoryBehaviour(0.001, 1000.0))
    done = {}
    cpu.execute(0, 400, 0.0, lambda: done.__setitem__("A", env.now))
    cpu.execute(1, 2000, 0.0, lambda: done.__setitem__("B", env.now))

    def change():
        yield env.timeout(0.5)
        cpu.set_behaviour(MemoryBehaviour(0.0, 0.0))
    env.process(change())
    env.run()
    assert done == pytest.approx({"A": 0.9, "B": 2.5}, abs=1e-9)


@pytest.mark.parametrize("mlp, weighted", [(0.5, 400.0), (1.5, 500.0), (2.0, 600.0)])
def test_stall_weighted_instructions_weigh_each_by_min_busy_strands_mlp_and_reset(mlp, weighted):
    """No stalls, 1,000 instructions/s shared by a group of two strands: A=300 and B=100 from 0 run at 500/s
    each; B ends at 0.2 (200 retired with 2 busy), A's last 200 alone by 0.4. Each instruction weighs
    min(busy, max(mlp, 1)): 200 x min(2, mlp') + 200 x 1, mlp' = 1 (0.5 is clamped: a window holds at least one
    miss), 1.5 or 2: 400, 500, 600 of 400 retired. A reset forgets both counts."""
    env, cpu = _cpu(_spec(strands=2), MemoryBehaviour(0.0, 0.0, mlp))
    cpu.execute(0, 300, 0.0, lambda: None)
    cpu.execute(1, 100, 0.0, lambda: None)
    env.run()
    assert env.now == pytest.approx(0.4, abs=1e-9)
    assert cpu.counters() == pytest.approx((400.0, weighted), rel=1e-12)
    assert cpu.stall_weighted_instructions() == pytest.approx(weighted, rel=1e-12)
    cpu.reset_stats()
    assert cpu.counters() == (0.0, 0.0)


def test_rate_table_clamps_an_mlp_below_one_and_queues_only_with_fewer_pipelines_than_strands():
    """mpi 0.01, stall 100, cpi 1 at 1e9 Hz: a strand alone is CPI 2, 5e8/s. Two strands on one pipeline are the
    repairman M/M/1//2 with think = service = 100 cycles: p0:p1:p2 = 1:2:2, the pipeline busy 0.8, 4e8/s each; an
    mlp of 0.5 stalls as 1 does (stall x min(n, max(mlp, 1))). On two pipelines nobody queues: 5e8/s each, each
    pipeline issuing half the time (util 0.5 / 2 with one strand, 1 / 2 with two)."""
    for mlp in (0.5, 1.0):
        rates, utils = rate_table(2, 1, 1.0, 0.01, 100.0, 1e9, mlp)
        assert rates == pytest.approx((0.0, 5e8, 4e8), rel=1e-12)
        assert utils == pytest.approx((0.0, 0.5, 0.8), rel=1e-12)
    rates, utils = rate_table(2, 2, 1.0, 0.01, 100.0, 1e9)
    assert rates == pytest.approx((0.0, 5e8, 5e8), rel=1e-12)
    assert utils == pytest.approx((0.0, 0.25, 0.5), rel=1e-12)


def test_a_user_burst_after_kernel_work_counts_no_sys_time():
    """A (sys 0.1) and B (sys 0.2), 100 instructions each, end together at 0.2: adding and taking off their
    shares leaves 0.1 + 0.2 - 0.1 - 0.2 = 5.6e-17 in floats, so an idle group's sys weight is set to 0. After a
    reset, C (all user) alone for 0.1 s counts 0.1 s busy and exactly no sys time."""
    env, cpu = _cpu()
    cpu.execute(0, 100, 0.1, lambda: None)
    cpu.execute(1, 100, 0.2, lambda: None)
    env.run()
    assert env.now == pytest.approx(0.2, abs=1e-9)
    env.run(until=1.0)
    cpu.reset_stats()
    cpu.execute(2, 100, 0.0, lambda: None)
    env.run()
    busy, sys = cpu.strand_time()
    assert busy == pytest.approx(0.1, rel=1e-9) and sys == 0.0


def test_a_burst_cut_a_hair_behind_the_virtual_clock_ends_now_and_time_never_runs_back():
    """A=300 alone at 1,000/s; at 0.1 (vt 100) it is cut at slices of 100 - 5e-8 instructions: vt is 5e-10 of a
    slice past the first slice's end, float slack (cut allows 1e-9), so A ends at that end, now, and gives back
    300 - (100 - 5e-8). B=100 starts at the same instant: A's tag is 5e-8 behind vt, and B's wake-up must not be
    scheduled before now (it was 1e-10 s in the past unclamped). A ends at 0.1; B's 100 alone end at 0.2."""
    env, cpu = _cpu()
    g = cpu.groups[0]
    out = []
    g.start(300, 0.0, lambda a: out.append((a, env.now)), "A")
    env.run(until=0.1)
    assert g.cut("A", 100 - 5e-8, 0.0) == pytest.approx(200 + 5e-8, abs=1e-9)
    g.start(100, 0.0, lambda a: out.append((a, env.now)), "B")
    env.run()
    assert out[0] == ("A", 0.1)    # exactly the instant of the cut: the clock never went back
    assert out[1][0] == "B" and out[1][1] == pytest.approx(0.2, abs=1e-9)


def test_a_cut_that_brings_a_burst_below_the_soonest_finish_ends_it_first():
    """A=100, B=200, C=1,000 from 0 share 1,000/s (333/s each); at 0.03 (vt 10) C is cut at slices of 50: its tag
    50 now comes before A's 100, so C ends first, at vt 50, 0.15 s, giving back 950. Two busy (500/s): A's last
    50 end at 0.25 (B has 100 done); B's last 100 alone (1,000/s) at 0.35. (Left where it was in the heap, C had
    ended with A at 0.3.)"""
    env, cpu = _cpu()
    g = cpu.groups[0]
    done = {}
    for name, n in (("A", 100), ("B", 200), ("C", 1000)):
        g.start(n, 0.0, lambda a: done.__setitem__(a, env.now), name)
    env.run(until=0.03)
    assert g.cut("C", 50, 0.0) == pytest.approx(950, abs=1e-9)
    env.run()
    assert done == pytest.approx({"C": 0.15, "A": 0.25, "B": 0.35}, abs=1e-9)
