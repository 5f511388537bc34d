"""Tests for sim/os/dispatcher.py: placement, run queue, time slicing, usr/sys tagging, and
invariants of dispatcher + CPU together (hypothesis).

Every tolerance is stated next to its assertion with the reason for its size. Simulated
times stay below a few seconds at ~1e9 instructions/s to keep the file fast.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import simpy
from hypothesis import event, given, settings, strategies as st

from sim.hardware.cpu import Cpu, MemoryBehaviour, rate_table
from sim.hardware.profile import CpuSpec
from sim.os.dispatcher import Dispatcher

MPI, STALL = 0.01, 150.0  # compute share 0.4, as on the T5220 (DESIGN.md section 2)


def make_spec(cores: int = 1, strands: int = 8, pipelines: int = 2, clock: float = 1e9,
              cpi: float = 1.0) -> CpuSpec:
    return CpuSpec(model="t", isa="sparcv9", sockets=1, cores_per_socket=cores, strands_per_core=strands,
                   pipelines_per_core=pipelines, clock=clock, cpi_issue=cpi, llc_size=4 * 2**20)


def make(spec: CpuSpec, mpi: float = MPI, stall: float = STALL, quantum: float = 0.010):
    env = simpy.Environment()
    cpu = Cpu(env, spec)
    cpu.set_behaviour(MemoryBehaviour(mpi, stall))
    return env, cpu, Dispatcher(env, cpu, quantum)


T5220 = dict(cores=8, strands=8, pipelines=2, clock=1.4e9)


# --------------------------------------------------------------------------- spreading

def test_equally_busy_cores_are_taken_socket_by_socket_in_turn():
    """On four sockets of eight cores (a T5440) the first four processes get the first core of each socket,
    the next four each socket's second core: the load spreads over the chips, as Solaris's does."""
    spec = CpuSpec(model="t", isa="sparcv9", sockets=4, cores_per_socket=8, strands_per_core=8,
                   pipelines_per_core=2, clock=1.4e9, cpi_issue=1.0, llc_size=4 * 2**20)
    env, cpu, disp = make(spec)
    for _ in range(8):
        disp.run(1e12)
    env.run(until=0.05)
    busy = [c for c in range(32) if sum(g.busy for g in cpu.groups if g.core == c)]
    assert busy == [0, 1, 8, 9, 16, 17, 24, 25]
    assert sorted(disp._core_of_place) == list(range(32))



@pytest.mark.parametrize("nproc", [4, 8, 16])
def test_long_running_processes_spread_across_cores_then_pipelines(nproc):
    env, cpu, disp = make(make_spec(**T5220))
    for _ in range(nproc):
        disp.run(1e12)  # far longer than the run: always on a strand
    env.run(until=0.3)  # 30 quanta: a running burst keeps its strand
    per_core = [sum(g.busy for g in cpu.groups if g.core == c) for c in range(8)]
    per_group = [g.busy for g in cpu.groups]
    if nproc <= 8:
        assert per_core == [1] * nproc + [0] * (8 - nproc)
        assert sum(per_group) == nproc and max(per_group) == 1
    else:
        assert per_group == [1] * 16
    # the dispatcher's own bookkeeping agrees with the CPU's
    assert disp._group_busy == per_group
    assert disp._core_busy == per_core
    # corestat: every busy core issues the same share (1 strand per group: p = 0.4 each)
    util = cpu.core_utilisation()
    busy_util = [u for u, n in zip(util, per_core) if n]
    # deterministic; float summation only: 1e-9 absolute
    expected = 0.4 * (2 if nproc == 16 else 1) / 2
    assert busy_util == pytest.approx([expected] * len(busy_util), abs=1e-9)


@pytest.mark.parametrize("nproc, per", [(8, "core"), (16, "group")])
def test_spreading_holds_at_every_event_with_think_times(nproc, per):
    """With at most one runnable process per core (per pipeline group), placement never puts
    two on one core (group): checked on the CPU's own busy counts after every event."""
    env, cpu, disp = make(make_spec(**T5220))
    rng = np.random.default_rng(7)

    def proc():
        while True:
            yield env.timeout(rng.exponential(0.002))
            yield disp.run(rng.exponential(1e6))

    for _ in range(nproc):
        env.process(proc())
    worst, seen_busy = 0, 0
    while env.peek() < 0.5:
        env.step()
        if per == "core":
            load = [sum(g.busy for g in cpu.groups if g.core == c) for c in range(8)]
        else:
            load = [g.busy for g in cpu.groups]
        worst = max(worst, max(load))
        seen_busy = max(seen_busy, sum(load))
    assert worst == 1
    assert seen_busy >= nproc // 2  # the check was exercised with many busy at once


# --------------------------------------------------------------------------- run queue

def test_run_queue_holds_the_excess_of_cpu_bound_processes():
    spec = make_spec(strands=8, pipelines=2)
    env, cpu, disp = make(spec)
    nproc, T = 12, 1.0

    sizes = (0.7e6, 13e6, 2.9e6, 6.5e6)  # a slice is 0.4e9/s x 10 ms = 4e6 instructions

    def proc(k):
        for size in itertools.cycle(sizes[k % 4:] + sizes[:k % 4]):
            yield disp.run(size)

    for k in range(nproc):
        env.process(proc(k))
    env.run(until=T)
    # All CPU-bound: the queue holds nproc - strands except at zero-duration instants, so the
    # time average is exact up to float summation: rel 1e-9 (tighter than the 2% asked for).
    assert disp.mean_run_queue() == pytest.approx(nproc - spec.strands, rel=1e-9)
    assert disp.run_queue_length() == nproc - spec.strands
    # mpstat: all strands ~100%; strand time is counted at slice ends, so each strand may miss
    # at most one slice: rates[1]*quantum instructions at the 4-busy rate.
    rates, _ = rate_table(4, 1, spec.cpi_issue, MPI, STALL, spec.clock)
    slice_time = rates[1] * disp.quantum / rates[4]
    for u in disp.strand_utilisation():
        assert 1.0 - slice_time / T - 1e-9 <= u <= 1.0
    busy, _sys = cpu.strand_time()
    assert busy == pytest.approx(spec.strands * T, rel=1e-9)  # exact: 8 strands always busy
    assert disp.involuntary_switches > 0  # time slicing did happen


def _fair_share_run(quantum: float, T: float = 3.0):
    """6 CPU-bound processes on 4 strands (2 cores x 2 pipelines x 1 strand: no sharing of a
    pipeline, mpi = 0, so a strand runs 1e9 instr/s and a 10 ms slice is exactly 1e7
    instructions). Three loop 1-slice bursts, three 4-slice bursts. Starts are staggered by
    3.7 ms so that slice ends on different strands do not coincide (see the note below)."""
    env, cpu, disp = make(make_spec(cores=2, strands=2, pipelines=2), mpi=0.0, stall=0.0,
                          quantum=quantum)
    work = [0.0] * 6

    def proc(k, size):
        yield env.timeout(k * 0.0037)
        while True:
            yield disp.run(size)
            work[k] += size

    for k in range(6):
        env.process(proc(k, 1e7 if k % 2 == 0 else 4e7))
    env.run(until=T)
    return [w / 1e7 for w in work]  # in slices


def test_time_slicing_gives_every_process_a_fair_share():
    work = _fair_share_run(0.010)
    # 300 quanta x 4 strands / 6 = 200 slices each. Round robin: slice counts differ by at
    # most 1; the staggered starts (up to 1.85 quanta late) cost at most 2 more; a 4-slice
    # process may have up to 3 slices not yet completed: max/min <= 201/194 (the 10% asked
    # for is looser than this accounting allows).
    assert max(work) / min(work) <= 201 / 194
    assert min(work) >= 190  # nobody is starved
    # Note: with simultaneous slice ends (unstaggered starts) a preempted burst keeps its
    # strand when the process that just finished a burst at the same instant has not yet
    # re-queued, and the 4-slice processes get 28% more CPU (with or without the bug below).


def test_fair_share_measure_detects_hogging_without_slicing():
    # Control for the test above: with a quantum longer than any burst, 4-slice bursts hog the
    # strands (run to completion, FIFO), so the same measure must show a large imbalance.
    hog = _fair_share_run(1e3)
    assert max(hog) / min(hog) > 1.5  # deterministic: 252/147 = 1.71




def _equal_jobs_finish_times(quantum):
    env, cpu, disp = make(make_spec(cores=2, strands=2, pipelines=2), mpi=0.0, stall=0.0,
                          quantum=quantum)
    out = []
    for k in range(6):
        disp.run(1e9).callbacks.append(lambda _e, k=k: out.append(env.now))  # 100 slices each
    env.run()
    return out


def test_time_slicing_lets_equal_jobs_finish_together():
    rr = _equal_jobs_finish_times(0.010)
    # Round robin: when the first job completes its 100th slice the others have >= 99, so all
    # finish within ~2 quanta of 148.75 quanta: max/min <= 150/148.
    assert max(rr) / min(rr) <= 150 / 148
    assert max(rr) == pytest.approx(1.5, abs=0.011)  # 6 s of work on 4 strands, +-1 quantum


def test_without_slicing_equal_jobs_finish_in_two_waves():
    # Control: with no slicing, 4 jobs finish at 1 s and 2 at 2 s (deterministic: rel 1e-9).
    fifo = _equal_jobs_finish_times(1e3)
    assert sorted(fifo) == pytest.approx([1.0] * 4 + [2.0] * 2, rel=1e-9)


def test_late_arrival_waits_at_most_one_quantum():
    # 4 strands busy with 1 s bursts started at t=0 (nobody waiting then). A 1 ms burst
    # arriving at t=5 ms must get a strand at the next slice end (t=10 ms) and finish at 11 ms.
    env, cpu, disp = make(make_spec(cores=2, strands=2, pipelines=2), mpi=0.0, stall=0.0)
    for _ in range(4):
        disp.run(1e9)
    out = []

    def late():
        yield env.timeout(0.005)
        yield disp.run(1e6)
        out.append(env.now)

    env.process(late())
    env.run(until=2.5)
    assert out == [pytest.approx(0.011, abs=1e-9)]  # hand arithmetic, float only: 1e-9 s


# --------------------------------------------------------------------------- usr / sys

def test_sys_share_tags_cpu_time():
    env, cpu, disp = make(make_spec(strands=8, pipelines=2))

    def proc(k, sys_share):
        sizes = (0.7e6, 1.3e6, 2.9e6)
        for i in itertools.count():
            yield disp.run(sizes[(i + k) % 3], sys_share)

    for k in range(5):
        env.process(proc(k, 0.25))
    env.run(until=0.5)
    busy, sys = cpu.strand_time()
    assert busy == pytest.approx(5 * 0.5, rel=1e-9)  # 5 strands busy throughout
    assert sys / busy == pytest.approx(0.25, rel=1e-6)  # deterministic, float summation only


def test_sys_share_is_weighted_by_time_per_burst():
    # Two processes on the two pipelines of one core run at the same rate; one is all user,
    # the other half kernel: sys = (0 + 0.5)/2 of busy time.
    env, cpu, disp = make(make_spec(strands=8, pipelines=2))

    def proc(sys_share):
        while True:
            yield disp.run(1.1e6, sys_share)

    env.process(proc(0.0))
    env.process(proc(0.5))
    env.run(until=0.5)
    busy, sys = cpu.strand_time()
    assert sys / busy == pytest.approx(0.25, rel=1e-6)  # deterministic, float summation only


# --------------------------------------------------------------------------- invariants

@st.composite
def scenarios(draw):
    pipelines = draw(st.sampled_from([1, 2]))
    spp = draw(st.sampled_from([1, 2, 4]))
    cores = draw(st.integers(1, 2))
    stalls = draw(st.booleans())
    mpi = draw(st.floats(0.001, 0.05)) if stalls else 0.0
    stall = draw(st.floats(10.0, 300.0)) if stalls else 0.0
    burst = st.tuples(st.floats(1e3, 3e6), st.floats(0.0, 1e-3), st.floats(0.0, 1.0))
    plans = draw(st.lists(st.lists(burst, min_size=1, max_size=6), min_size=1, max_size=12))
    quantum = draw(st.floats(1e-4, 1e-2))
    cut = draw(st.floats(0.05, 0.95))  # fraction of the makespan where invariants are checked
    return dict(spec=make_spec(cores=cores, strands=pipelines * spp, pipelines=pipelines),
                mpi=mpi, stall=stall, plans=plans, quantum=quantum, cut=cut)


def _simulate(sc):
    env, cpu, disp = make(sc["spec"], sc["mpi"], sc["stall"], sc["quantum"])
    log = {"started": 0, "finished": 0, "done": [], "sizes_done": 0.0}

    def proc(k, plan):
        for i, (size, think, sys_share) in enumerate(plan):
            if think:
                yield env.timeout(think)
            log["started"] += 1
            yield disp.run(size, sys_share)
            log["finished"] += 1
            log["sizes_done"] += size
            log["done"].append((env.now, k, i))

    for k, plan in enumerate(sc["plans"]):
        env.process(proc(k, plan))
    return env, cpu, disp, log


def _makespan(sc) -> float:
    env, _cpu, _disp, _log = _simulate(sc)
    env.run()
    return env.now


def _check_and_finish(sc):
    """Run to the cut, check the invariants there, run to completion, check again.
    Returns what a second run with the same inputs must reproduce bit for bit."""
    env, cpu, disp, log = _simulate(sc)
    cut = sc["cut"] * _makespan(sc)
    if cut > 0:
        env.run(until=cut)
    # no work lost: every started burst is finished, on a strand, or in the run queue
    in_flight = sum(g.busy for g in cpu.groups) + disp.run_queue_length()
    assert log["started"] == log["finished"] + in_flight
    event(f"run queue at the cut: {'yes' if disp.run_queue_length() else 'no'}")
    event(f"bursts on strands at the cut: {'yes' if in_flight else 'no'}")
    assert disp.busy_strands == sum(g.busy for g in cpu.groups)
    # instructions retired so far: at least the finished bursts' work (float slack rel 1e-9)
    assert cpu.instructions_retired() >= log["sizes_done"] * (1 - 1e-9)
    # utilisations in [0, 1] (raw strand time, not the clamped mpstat value)
    span = env.now
    for u in cpu.core_utilisation():
        assert -1e-12 <= u <= 1.0 + 1e-12  # float summation slack only
    for t in disp.strand_busy_time:
        assert 0.0 <= t <= span * (1 + 1e-12)
    busy, sys = cpu.strand_time()
    assert 0.0 <= sys <= busy * (1 + 1e-12) + 1e-15
    assert busy <= sc["spec"].strands * span * (1 + 1e-12)
    assert disp.mean_run_queue() >= 0.0

    env.run()  # to completion
    total = sum(s for plan in sc["plans"] for s, _t, _x in plan)
    assert log["finished"] == log["started"] == sum(len(p) for p in sc["plans"])
    assert sum(g.busy for g in cpu.groups) == 0 and disp.run_queue_length() == 0
    # conservation: instructions retired = work submitted; float summation of rate*dt: rel 1e-6
    assert cpu.instructions_retired() == pytest.approx(total, rel=1e-6)
    for u in cpu.core_utilisation():
        assert -1e-12 <= u <= 1.0 + 1e-12
    return log["done"], cpu.instructions_retired(), cpu.strand_time()


@settings(max_examples=25, deadline=None, database=None)
@given(sc=scenarios())
def test_invariants_no_work_lost_conservation_bounds_determinism(sc):
    first = _check_and_finish(sc)
    # same inputs and same observations, same results: completion times, order, totals bit
    # for bit (note: reading statistics mid-run advances the virtual clocks, which changes
    # float rounding, so the second run makes the same reads)
    assert _check_and_finish(sc) == first


def test_bursts_running_whole_are_cut_in_a_fixed_order_so_a_run_repeats_bit_for_bit():
    """Hypothesis found it: two cores of one strand, ten processes; the bursts running whole when one came to
    wait were cut in a set's order, their objects' addresses, so the cuts' wake-ups, and the finish times and
    strand time in their last digits, changed from one run to the next (27 runs in 30)."""
    b = [[(1e5, 2.1e-4, .55)], [(2952930.9, 9.8e-5, 0), (323229.7, 6.3e-4, .83), (392778.9, 9.7e-4, .92), (2537176.3, 0, .47)],
         [(833778.4, 0, .97), (2638605.5, 1e-8, .9), (911473.3, 1e-8, .22), (1920546, 6e-4, .66), (149457.2, 1.1e-4, .58),
          (15000, 4e-4, .4)], [(2824643, 8.4e-5, .99)], [(655695.3, 0, .99), (1872343.6, 4.5e-4, .1), (5000, 0, .43)],
         [(8e5, 0, .83), (205546.2, 8.2e-5, 0), (714176.2, 2.5e-4, .88), (2529115.5, 1e-4, .89), (1495873.2, 8.2e-4, .51),
          (183698.8, 7.1e-4, .08)], [(1440315.3, 2.5e-5, 1), (2e4, 0, .06), (2845767.8, 1.3e-4, 0), (1793294.3, 8.8e-4, 0),
          (317897.3, 9.8e-4, .91)], [(3600, 0, .97), (2999999, 0, 0), (1249661.8, 1.2e-5, .12), (884218.8, 8.9e-4, .12),
          (2951206.4, 5.6e-4, 1), (990532.4, 0, .8)], [(561790.5, 1e-3, .67), (1661056.1, 1e-7, 0), (3032, 8.9e-4, .07),
          (1533142, 9.9e-4, .47), (28800, 3e-4, 0), (664774.7, 7.3e-4, .78)], [(926900.3, 1e-7, .91),
          (2045763.6, 5.7e-4, .64), (852049.8, 8.1e-4, 0), (2e6, 0, .96)]]
    sc = dict(spec=make_spec(cores=2, strands=1, pipelines=1), mpi=0.05, stall=106.16, plans=b, quantum=1.1666e-3)

    def once():
        env, cpu, _disp, log = _simulate(sc)
        env.run()
        return log["done"], cpu.strand_time()
    first, ballast = once(), []
    for i in range(10):
        ballast.append([object() for _ in range(7 * i)])   # other addresses for the next run's objects
        assert once() == first


def _seeded_run(seed: int):
    env, cpu, disp = make(make_spec(cores=2, strands=4, pipelines=2))
    rng = np.random.default_rng(seed)
    done = []

    def proc(k):
        for i in range(40):
            yield env.timeout(rng.exponential(1e-3))
            yield disp.run(rng.exponential(1e6), rng.uniform())
            done.append((env.now, k, i))

    for k in range(12):  # 12 processes on 8 strands: run queue, slicing, placement all used
        env.process(proc(k))
    env.run()
    return done, cpu.strand_time()


def test_same_seed_same_results_bit_for_bit():
    a, b, c = _seeded_run(11), _seeded_run(11), _seeded_run(12)
    assert a == b  # exact equality: times, process order, strand time
    assert a[0] != c[0]  # a different seed does change the run (the check can fail)


# --------------------------------------------------------------------------- one strand, by hand

def _one_strand():
    """One strand alone on its core, no stalls: 1e9 instructions a second, so 1e6 instructions are 1 ms;
    the default quantum."""
    env = simpy.Environment()
    cpu = Cpu(env, make_spec(cores=1, strands=1, pipelines=1))
    cpu.set_behaviour(MemoryBehaviour(0.0, 0.0))
    return env, cpu, Dispatcher(env, cpu)


def _arrivals(env, disp, plan, done):
    """plan: (arrival time in ms, burst in ms); done gets (name, finish time in ms). Each run's event is worth
    the burst's time on the strand, without its wait in the run queue (a strand alone: exactly the burst)."""
    def proc(name, at, ms):
        yield env.timeout(at / 1e3)
        on_cpu = yield disp.run(ms * 1e6)
        assert on_cpu == pytest.approx(ms / 1e3, rel=1e-9)
        done.append((name, round(env.now * 1e3, 9)))

    for name, (at, ms) in plan.items():
        env.process(proc(name, at, ms))


def test_run_queue_and_mpstat_by_hand():
    # A (4 ms) at 0, B (3 ms) at 1 ms, C (2 ms) at 2 ms on one strand: B waits 1-4 ms, C 2-7 ms; the queue
    # holds 1 on 1-2 ms, 2 on 2-4, 1 on 4-7: 8 ms x process over 20 ms = 0.4; the strand busy 9 of 20 ms.
    env, cpu, disp = _one_strand()
    done = []
    _arrivals(env, disp, {"A": (0, 4), "B": (1, 3), "C": (2, 2)}, done)
    env.run(until=0.020)
    assert done == [("A", 4.0), ("B", 7.0), ("C", 9.0)]
    assert disp.mean_run_queue() == pytest.approx(0.4, rel=1e-9)
    assert disp.mean_run_queue() == pytest.approx(0.4, rel=1e-9)   # reading it changes nothing
    assert disp.strand_utilisation() == [pytest.approx(0.45, rel=1e-9)]
    busy, sys = cpu.strand_time()
    assert busy == pytest.approx(0.009, rel=1e-9) and sys == 0.0    # no sys_share given: all usr
    assert disp.involuntary_switches == 0                           # every burst under a quantum


def test_reset_counts_from_the_reset_and_mpstat_never_exceeds_100_pct():
    env, cpu, disp = _one_strand()
    done = []
    _arrivals(env, disp, {"A": (0, 4), "B": (1, 3), "C": (2, 2)}, done)
    env.run(until=0.005)
    disp.reset_stats()   # A done, B on the strand (4-7 ms), C waiting
    env.run(until=0.0075)
    # B's slice (4-7 ms) counts from the reset (2 ms), C's in flight up to now (0.5 ms): busy the whole 2.5 ms
    assert disp.strand_utilisation() == [pytest.approx(1.0, rel=1e-9)]
    env.run(until=0.020)
    # queue after the reset: C alone on 5-7 ms: 2 ms x process over 15 ms
    assert disp.mean_run_queue() == pytest.approx(2 / 15, rel=1e-9)
    # mpstat agrees with the CPU's own clock: busy from the reset to 9 ms (B 5-7, C 7-9); it had counted B's
    # whole slice, started before the reset (5 ms in 15)
    assert disp.strand_utilisation() == [pytest.approx(4 / 15, rel=1e-9)]
    assert cpu.strand_time()[0] == pytest.approx(0.004, rel=1e-9)


def test_a_long_burst_alone_keeps_its_strand_and_a_late_arrival_waits_for_the_next_slice_end():
    env, cpu, disp = _one_strand()
    done = []
    _arrivals(env, disp, {"alone": (0, 100)}, done)
    env.run()
    assert done == [("alone", 100.0)] and disp.involuntary_switches == 0   # ten quanta, nobody to yield to
    env, cpu, disp = _one_strand()
    done = []
    # arriving 25 ms into a 1 s burst (its third 10 ms quantum): on the strand at 30 ms, done at 31 ms;
    # the long burst is preempted once and ends 1 ms late
    _arrivals(env, disp, {"long": (0, 1000), "late": (25, 1)}, done)
    env.run()
    assert done == [("late", 31.0), ("long", 1001.0)] and disp.involuntary_switches == 1
    disp.reset_stats()
    assert disp.involuntary_switches == 0


def test_a_lone_burst_costs_one_slice_end_however_long_and_is_cut_at_its_quantum_when_one_comes_to_wait():
    """Nobody waiting, a 10 s burst runs whole: one slice end, not a thousand. A 1 ms burst arriving at 5,002.5 ms
    waits for the long one's quantum to end (5,010 ms, the thousand-and-first since its start), as sliced runs do."""
    for plan, ends, finish in (({"long": (0, 10_000)}, 1, [("long", 10_000.0)]),
                               ({"long": (0, 10_000), "late": (5_002.5, 1)}, 3,
                                [("late", 5_011.0), ("long", 10_001.0)])):
        env, cpu, disp = _one_strand()
        slice_ends = []
        inner = disp._on_slice_done
        disp._on_slice_done = lambda burst: (slice_ends.append(env.now), inner(burst))
        done = []
        _arrivals(env, disp, plan, done)
        env.run()
        assert done == finish and len(slice_ends) == ends
        assert disp.involuntary_switches == ends - len(plan)
        assert disp.strand_utilisation() == [pytest.approx(1.0, rel=1e-9)] and cpu.strand_time()[0] == pytest.approx(env.now)


def test_a_burst_arriving_just_as_a_quantum_ends_gets_the_strand_then():
    """B arrives at 20 ms, when A (25 ms, alone and running whole) ends its second quantum: A is cut there, as a
    slice ending at that instant would be, and B runs at once (a cut at the next multiple had kept it to 30 ms)."""
    env, _cpu, disp = _one_strand()
    done = []
    _arrivals(env, disp, {"A": (0, 25), "B": (20, 1)}, done)
    env.run()
    assert done == [("B", 21.0), ("A", 26.0)] and disp.involuntary_switches == 1


def test_a_burst_cut_for_a_waiter_that_found_another_strand_keeps_its_strand_and_runs_whole_again():
    """Two strands on two cores, 1e9 instructions/s each, 10 ms slices. A (25 ms) runs whole on strand 0; C
    arriving at 5 ms cuts it back to 10 ms but gets strand 1 at 7 ms when B (7 ms) ends. At 10 ms nobody waits:
    A keeps its strand and runs whole again from there (no switch), so E, arriving at 10.5 ms, cuts it to 20 ms,
    the end of its new slice; E gets strand 1 at 11 ms (C ends) and runs to 20.5. D (12 ms) waits for A's cut
    at 20 ms (one switch) and ends at 21; A ends its last 5 ms on strand 1 at 25.5. Strand 0 was busy 21 ms
    (A 0-20, D 20-21), strand 1 25.5 ms (B 7, C 4, E 9.5, A 5), and each burst's event is worth its own length."""
    env, _cpu, disp = make(make_spec(cores=2, strands=1, pipelines=1), mpi=0.0, stall=0.0)
    done = []
    _arrivals(env, disp, {"A": (0, 25), "B": (0, 7), "C": (5, 4), "E": (10.5, 9.5), "D": (12, 1)}, done)
    env.run()
    assert done == [("B", 7.0), ("C", 11.0), ("E", 20.5), ("D", 21.0), ("A", 25.5)]
    assert disp.involuntary_switches == 1
    assert disp.strand_busy_time == pytest.approx([0.021, 0.0255], rel=1e-9)


def test_a_burst_once_cut_is_not_cut_again_when_it_later_runs_a_plain_slice():
    """One strand. A (39 ms at 1 ms) runs whole; B (18 ms at 14 ms) cuts it at its second quantum's end, 21 ms.
    Then B 21-31, A 31-41, B's last 8 ms to 49, A's last 9 ms from 49 as a plain slice (under a quantum): C
    (25 ms at 51 ms) waits for it, to 58, and runs to 83. Three switches (21, 31, 41). Were A still listed as
    running whole, C would cut it at the multiple of a quantum since its first start, 51 ms, 2 ms in."""
    env, _cpu, disp = _one_strand()
    done = []
    _arrivals(env, disp, {"A": (1, 39), "B": (14, 18), "C": (51, 25)}, done)
    env.run()
    assert done == [("B", 49.0), ("A", 58.0), ("C", 83.0)] and disp.involuntary_switches == 3


def test_a_whole_burst_is_cut_at_a_quantum_of_the_rates_it_runs_at_when_one_comes_to_wait():
    """One strand at 1e9 instructions/s; A = 1e9 instructions runs whole from 0. At 5 ms (5e6 done) misses slow it
    to CPI 2, 5e8/s: a slice is now 5e6 instructions. B (1e6) arrives at 18 ms, vt 5e6 + 6.5e6 = 11.5e6: A is cut
    at the next multiple, 15e6, reached at 25 ms (a slice counted at the first rate, 1e7, cut it at 2e7: 35 ms, B
    waiting 17 ms, more than a quantum). B's 1e6 take 2 ms: done at 27 ms; A's other 985e6 at 5e8/s end at 1,997 ms."""
    env, cpu, disp = _one_strand()
    done = {}

    def proc(name, at, instructions):
        yield env.timeout(at)
        yield disp.run(instructions)
        done[name] = env.now

    def slow_down():
        yield env.timeout(0.005)
        cpu.set_behaviour(MemoryBehaviour(0.01, 100.0))

    env.process(proc("A", 0.0, 1e9))
    env.process(slow_down())
    env.process(proc("B", 0.018, 1e6))
    env.run()
    assert done == pytest.approx({"B": 0.027, "A": 1.997}, abs=1e-9)
    assert disp.involuntary_switches == 1


def test_a_strand_busy_throughout_shows_exactly_100_pct():
    """One strand running 0.7 ms bursts back to back, statistics reset at 2.1 ms, read at 10.7 ms: busy the whole
    span, so mpstat shows exactly 1. The slices' times added up exceed the span by an ulp (1.0000000000000002
    unclamped): the value is capped at 1."""
    env, _cpu, disp = _one_strand()

    def proc():
        while True:
            yield disp.run(0.7e6)

    env.process(proc())
    env.run(until=0.0021)
    disp.reset_stats()
    env.run(until=0.0107)
    assert disp.strand_utilisation() == [1.0]


def _round_robin(plan: dict, quantum: float = 10.0) -> dict:
    """Finish times (ms) of bursts {name: (arrival ms, length ms)} on one strand by round robin, stepped a
    quantum at a time: a slice ends a quantum after it began or when its burst is done; a burst not done goes
    behind those waiting, or runs another quantum when nobody is; arrivals wait in order."""
    arrivals = sorted(plan.items(), key=lambda kv: kv[1][0])
    waiting, done, t, running = [], {}, 0.0, None
    while arrivals or waiting or running:
        if running is None:
            if not waiting:
                t = max(t, arrivals[0][1][0])
                while arrivals and arrivals[0][1][0] <= t:
                    waiting.append([arrivals[0][0], arrivals.pop(0)[1][1]])
            running = waiting.pop(0)
        end = t + min(quantum, running[1])
        while arrivals and arrivals[0][1][0] < end:
            waiting.append([arrivals[0][0], arrivals.pop(0)[1][1]])
        running[1] -= end - t
        t = end
        if running[1] <= 1e-9:
            done[running[0]] = t
            running = None
        elif waiting:
            waiting.append(running)
            running = None
    return done


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.floats(0.0, 120.0), st.floats(0.5, 45.0)), min_size=1, max_size=7))
def test_a_strand_serves_bursts_in_the_round_robin_that_slicing_every_quantum_gives(bursts):
    """Whatever the arrivals, running a lone burst whole and cutting it back when one comes to wait finishes
    every burst when plain round robin, a quantum at a time, does."""
    # arrivals on a nanosecond grid: a subnormal one (5e-324 ms) is 0.0 s in the simulation, level with an arrival
    # at 0 listed after it and so ahead of it, but not in the round robin's milliseconds
    plan = {f"b{i}": (round(at, 6), ms) for i, (at, ms) in enumerate(bursts)}
    env, cpu, disp = _one_strand()
    done = []
    _arrivals(env, disp, plan, done)
    env.run()
    want = _round_robin(plan)
    assert dict(done) == {k: pytest.approx(v, abs=1e-6) for k, v in want.items()}


def test_no_instructions_no_wait_even_on_a_saturated_cpu():
    env, cpu, disp = _one_strand()
    disp.run(1e9)                       # the only strand busy for 1 s
    times = []

    def proc():
        yield env.timeout(0.001)
        ev = disp.run(0.0)
        yield ev
        times.append(env.now)
        assert ev.triggered and ev.ok and ev.value == 0.0   # no time on a strand

    env.process(proc())
    env.run(until=0.002)
    assert times == [0.001] and disp.run_queue_length() == 0


def test_a_finished_burst_is_an_ordinary_processed_event():
    env, cpu, disp = _one_strand()
    ev = disp.run(1e6)
    either = simpy.AnyOf(env, [ev, env.timeout(1.0)])
    env.run(until=either)
    assert env.now == pytest.approx(0.001, rel=1e-9)
    assert ev.triggered and ev.processed and ev.ok and ev.value == pytest.approx(0.001, rel=1e-9)
    assert either.value == {ev: ev.value}


def test_a_finished_burst_wakes_every_process_waiting_on_it_in_the_order_they_waited():
    """Two processes wait on one burst's event: both resume when it ends (1e6 instructions at 1e9/s: 1 ms), in
    the order they began to wait, each getting its 1 ms on a strand."""
    env, _cpu, disp = _one_strand()
    ev = disp.run(1e6)
    log = []

    def waiter(name):
        on_cpu = yield ev
        log.append((name, env.now, on_cpu))

    env.process(waiter("first"))
    env.process(waiter("second"))
    env.run()
    assert log == [("first", pytest.approx(0.001, rel=1e-9), pytest.approx(0.001, rel=1e-9)),
                   ("second", pytest.approx(0.001, rel=1e-9), pytest.approx(0.001, rel=1e-9))]


def test_a_time_slice_stays_a_quantum_long_when_the_strands_slow_down():
    """Two endless bursts on one strand take turns a quantum at a time. When the miss rate triples mid-run
    (memory latency or the code changing) the strand slows, and a slice is still 10 ms: it was counted once
    in instructions at the first rate, so it stretched to the slower strand's ~18 ms."""
    env, cpu, disp = make(make_spec(cores=1, strands=1, pipelines=1), mpi=0.002)
    for _ in range(2):
        disp.run(1e15)
    env.run(until=0.1)
    cpu.set_behaviour(MemoryBehaviour(0.006, STALL))
    before = disp.involuntary_switches
    env.run(until=1.1)
    assert disp.involuntary_switches - before == pytest.approx(100, abs=2)   # 1 s / 10 ms


@pytest.mark.parametrize("profile", ["t5220", "xeon-e5-2643v3-2s", "opteron-2way"])
def test_a_time_slice_lasts_one_quantum_of_time_when_bursts_wait(profile):
    """Twice as many endless bursts as strands: every strand is busy and a burst waits, so each strand switches
    once a quantum, strands / quantum a second. A slice sized for a strand alone on its pipeline had lasted
    rates[1] / rates[n] quanta on the CMT and Hyper-Threading chips (1.4-1.7: 3,776 switches a second on the
    T5220 where 6,400 are due)."""
    from sim.engine import Environment
    from sim.hardware.profile import load_profile
    p = load_profile(profile)
    env = Environment()
    cpu = Cpu(env, p.cpu)
    cpu.set_behaviour(MemoryBehaviour(0.0102, round(p.memory.latency * p.cpu.clock / p.cpu.mlp, 1), p.cpu.mlp))
    disp = Dispatcher(env, cpu, 0.01)
    for _ in range(2 * cpu.cpu_count):
        disp.run(1e12)
    env.run(until=1.0)
    assert disp.involuntary_switches == pytest.approx(cpu.cpu_count / 0.01, rel=0.02)
