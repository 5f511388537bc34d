"""Tests for sim/hardware/cpu.py: pipeline groups doing processor sharing in virtual time.

Checked against closed forms (machine repairman, M/M/1-PS) and hand-computed virtual-time
arithmetic. Every tolerance is stated next to its assertion with the reason for its size.

Units: where a test runs for long simulated times it uses a slow clock (1e3 or 1e6 Hz) so
that rate x ulp(env.now) stays far below the group's 1e-6-instruction finish slack; see
test_group_does_not_hang_at_large_simulated_times for what happens otherwise.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import simpy

from sim.analytic import repairman
from sim.hardware.cpu import Cpu, MemoryBehaviour, rate_table
from sim.hardware.profile import CpuSpec
from sim.os.dispatcher import Dispatcher


def make_spec(cores: int = 1, strands: int = 4, pipelines: int = 1, clock: float = 1e9,
              cpi: float = 1.0) -> CpuSpec:
    return CpuSpec(model="t", isa="sparcv9", sockets=1, cores_per_socket=cores, strands_per_core=strands,
                   pipelines_per_core=pipelines, clock=clock, cpi_issue=cpi, llc_size=4 * 2**20)


def make_cpu(spec: CpuSpec, mpi: float, stall: float, quantum: float = 0.010):
    env = simpy.Environment()
    cpu = Cpu(env, spec)
    cpu.set_behaviour(MemoryBehaviour(mpi, stall))
    return env, cpu, Dispatcher(env, cpu, quantum)


def closed_loop(env, dispatcher, n: int, sizes=(0.7e6, 1.3e6, 2.9e6, 0.45e6, 1.9e6), sys_share=0.0):
    """n CPU-bound processes, each running bursts back to back (no think time)."""
    def proc(k):
        for size in itertools.cycle(sizes[k % len(sizes):] + sizes[:k % len(sizes)]):
            yield dispatcher.run(size, sys_share)
    for k in range(n):
        env.process(proc(k))


# Memory behaviour with compute share p = cpi / (cpi + mpi*stall) = 1 / (1 + 0.01*150) = 0.4,
# the T5220 OLTP value of DESIGN.md section 2. Repairman service = cpi/mpi = 100 cycles.
MPI, STALL = 0.01, 150.0


# --------------------------------------------------------------------------- rate table

def test_single_strand_runs_at_the_cpi_stack():
    """One strand alone: CPI = cpi_issue + mpi*stall (DESIGN.md section 2)."""
    rates, utils = rate_table(4, 1, 1.0, MPI, STALL, 1e9)
    # closed form, only float rounding in the repairman's normalisation: rel 1e-12
    assert rates[1] == pytest.approx(1e9 / (1.0 + MPI * STALL), rel=1e-12)
    assert utils[1] == pytest.approx(0.4, rel=1e-12)
    assert rates[0] == 0.0 and utils[0] == 0.0


# --------------------------------------------------------------------------- 1. repairman

@pytest.mark.parametrize("n", [1, 2, 4])
def test_closed_jobs_on_one_group_run_at_repairman_rate(n):
    spec = make_spec(strands=4, pipelines=1)
    env, cpu, disp = make_cpu(spec, MPI, STALL)
    closed_loop(env, disp, n)
    env.run(until=0.5)
    assert cpu.groups[0].busy == n  # strands >= n: nobody queues
    assert disp.run_queue_length() == 0
    rate = cpu.instructions_retired() / env.now
    rates, _ = rate_table(4, 1, spec.cpi_issue, MPI, STALL, spec.clock)
    # deterministic: the only error is float summation of rate*dt over ~1e3 events: rel 1e-6
    assert rate == pytest.approx(n * rates[n], rel=1e-6)
    x, _busy = repairman(n, STALL, spec.cpi_issue / MPI)
    # same quantity through the closed form (runs/cycle x instructions/run x clock): rel 1e-9
    # (cpu.instruction_rate() is the instantaneous value, no time summation involved)
    assert cpu.instruction_rate() == pytest.approx(x * (1.0 / MPI) * spec.clock, rel=1e-9)
    assert rate == pytest.approx(x * (1.0 / MPI) * spec.clock, rel=1e-6)


@pytest.mark.parametrize("n, split", [(2, (1, 1)), (3, (2, 1)), (4, (2, 2)), (8, (4, 4))])
def test_closed_jobs_on_t2_core_spread_over_both_pipelines(n, split):
    """T2 core: 8 strands, 2 pipelines = 2 groups of 4; the dispatcher balances the groups."""
    spec = make_spec(strands=8, pipelines=2)
    env, cpu, disp = make_cpu(spec, MPI, STALL)
    closed_loop(env, disp, n)
    env.run(until=0.5)
    assert tuple(g.busy for g in cpu.groups) == split
    rates, _ = rate_table(4, 1, spec.cpi_issue, MPI, STALL, spec.clock)
    expected = sum(k * rates[k] for k in split)
    closed = sum(repairman(k, STALL, spec.cpi_issue / MPI)[0] for k in split) / MPI * spec.clock
    # deterministic, float summation only: rel 1e-6 (time average) and 1e-9 (instantaneous)
    assert cpu.instructions_retired() / env.now == pytest.approx(expected, rel=1e-6)
    assert cpu.instruction_rate() == pytest.approx(closed, rel=1e-9)
    # spreading matters: two strands on two pipelines beat two strands on one (sanity of the model)
    if n == 2:
        assert expected > 2 * rates[2] * 1.01


# --------------------------------------------------------------------------- 3. saturation

def test_t2_core_with_eight_busy_strands_is_exact_repairman_and_below_peak():
    spec = make_spec(strands=8, pipelines=2, clock=1.4e9)
    env, cpu, disp = make_cpu(spec, MPI, STALL)
    closed_loop(env, disp, 8)
    env.run(until=0.5)
    x4, busy4 = repairman(4, STALL, spec.cpi_issue / MPI)
    # exact closed form, deterministic: rel 1e-9 instantaneous, 1e-6 time-averaged
    assert cpu.instruction_rate() == pytest.approx(2 * x4 / MPI * spec.clock, rel=1e-9)
    assert cpu.core_utilisation()[0] == pytest.approx(busy4, rel=1e-6)
    # four strands at p = 0.4 do not saturate a pipeline: 0.952 of peak, clearly below
    peak = spec.pipelines_per_core * spec.clock / spec.cpi_issue
    assert cpu.instruction_rate() < 0.96 * peak
    assert busy4 == pytest.approx(0.95204, abs=1e-5)  # hand value of the M/M/1//4 chain


def test_saturated_core_approaches_issue_rate():
    """16 strands on 2 pipelines (8 per group) with p = 0.4: stall/issue = 1.5 << 8."""
    spec = make_spec(strands=16, pipelines=2)
    env, cpu, disp = make_cpu(spec, MPI, STALL)
    closed_loop(env, disp, 16)
    env.run(until=0.2)
    peak = 2 * spec.clock / spec.cpi_issue
    rate = cpu.instructions_retired() / env.now
    # the M/M/1//8 chain leaves the pipeline idle 1.4e-4 of the time: within 1% of peak
    assert rate == pytest.approx(peak, rel=0.01)
    assert rate < peak
    assert min(cpu.core_utilisation()) > 0.99
    assert max(cpu.core_utilisation()) <= 1.0


def test_corestat_differs_from_mpstat_with_one_strand_per_pipeline():
    spec = make_spec(strands=8, pipelines=2)
    env, cpu, disp = make_cpu(spec, MPI, STALL)
    closed_loop(env, disp, 2)
    T = 1.0
    env.run(until=T)
    p = spec.cpi_issue / (spec.cpi_issue + MPI * STALL)
    # corestat: pipelines issue only the compute share of the time; deterministic: rel 1e-6
    assert cpu.core_utilisation()[0] == pytest.approx(p, rel=1e-6)
    busy, _sys = cpu.strand_time()
    assert busy == pytest.approx(2 * T, rel=1e-9)  # two strands busy all the time
    util = disp.strand_utilisation()
    busy_strands = [s for s, u in enumerate(util) if u > 0]
    assert len(busy_strands) == 2
    assert {cpu.group_of_strand[s].index for s in busy_strands} == {0, 1}
    # mpstat: 100% busy, minus at most the burst (or slice) in flight at the end, which is
    # counted when it ends: the largest burst, 2.9e6 instructions at the one-strand rate
    # 0.4e9/s, is 7.25 ms (< one quantum) out of T = 1 s
    in_flight_max = max(2.9e6 / cpu.groups[0].rates[1], disp.quantum)
    for s in busy_strands:
        assert 1.0 - in_flight_max / T - 1e-9 <= util[s] <= 1.0


# --------------------------------------------------------------------------- 2. M/M/1-PS

def _ps_run(rho: float, njobs: int, seed: int):
    """Poisson arrivals of Exp(1 s) work to one pipeline with 64 strands (no run queue:
    P(N > 64) = rho^65 < 1e-6). mpi = 0: n busy strands share the pipeline equally, M/M/1-PS
    with mu = 1/s. Clock 1e3 Hz keeps rate x ulp(now) ~1e-8 instructions, far below the slack."""
    spec = make_spec(strands=64, pipelines=1, clock=1e3)
    env, cpu, disp = make_cpu(spec, 0.0, 0.0, quantum=1e12)  # no slicing needed: runq stays empty
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1.0 / rho, njobs)
    work = rng.exponential(1.0, njobs)  # seconds at full speed
    sojourn = np.full(njobs, np.nan)
    max_busy = [0]

    def source():
        for i in range(njobs):
            yield env.timeout(gaps[i])
            t0 = env.now
            ev = disp.run(work[i] * spec.clock / spec.cpi_issue)
            ev.callbacks.append(lambda _e, i=i, t0=t0: sojourn.__setitem__(i, env.now - t0))
            max_busy[0] = max(max_busy[0], cpu.groups[0].busy)

    env.process(source())
    env.run()
    assert max_busy[0] < 64, "a run queue formed: not pure PS"
    assert not np.isnan(sojourn).any()
    return sojourn, work


def _batch_mean_se(values: np.ndarray, weights: np.ndarray, batches: int = 30):
    """Mean of per-batch ratio estimates and its standard error (batch means)."""
    means = np.array([v.sum() / w.sum() for v, w in zip(np.array_split(values, batches),
                                                          np.array_split(weights, batches))])
    return means.mean(), means.std(ddof=1) / math.sqrt(batches)


@pytest.mark.parametrize("rho, njobs", [(0.5, 60_000), (0.8, 150_000)])
def test_mm1_ps_sojourn_matches_closed_form(rho, njobs):
    sojourn, work = _ps_run(rho, njobs, seed=20240611)
    warm = 2000  # the queue relaxes in ~1/(mu (1-sqrt rho)^2) = 90 jobs at rho 0.8
    sojourn, work = sojourn[warm:], work[warm:]
    ones = np.ones_like(sojourn)
    # 30 batches of 1900-4900 jobs, each >> the relaxation time, so batch means are ~independent.
    mean, se = _batch_mean_se(sojourn, ones)
    theory = 1.0 / (1.0 - rho)  # 1/(mu - lambda) with mu = 1
    assert se < 0.03 * theory  # the check below is not vacuous (se is ~1.2% and ~1.8%)
    assert abs(mean - theory) < 3 * se  # 3 standard errors

    # Conditional mean under PS: E[T | x] = x / (1 - rho), linear in x. Per bin, the residual
    # T - x/(1-rho) has mean 0; its standard error again by batch means.
    for lo, hi in [(0.0, 0.25), (2.5, math.inf)]:  # small jobs, large jobs (units of the mean)
        sel = ((work >= lo) & (work < hi)).astype(float)
        resid = np.where(sel > 0, sojourn - work / (1.0 - rho), 0.0)
        m, s = _batch_mean_se(resid, sel)
        scale = (work * sel).sum() / sel.sum() / (1.0 - rho)  # the bin's E[T]
        assert s < 0.03 * scale  # not vacuous: se is 0.8-2% of the bin's mean sojourn
        assert abs(m) < 3 * s, (lo, hi, m, s, scale)  # 3 standard errors


# --------------------------------------------------------------------------- 6. virtual time

def _group_with_bursts(mpi, stall, bursts, changes=()):
    """Start bursts (time, strand, instructions) directly on the CPU; return finish times."""
    spec = make_spec(strands=4, pipelines=1, clock=1e9)
    env = simpy.Environment()
    cpu = Cpu(env, spec)
    cpu.set_behaviour(MemoryBehaviour(mpi, stall))
    finished = {}

    def starter(t, strand, instr, name):
        yield env.timeout(t)
        cpu.execute(strand, instr, 0.0, lambda: finished.__setitem__(name, env.now))

    for k, (t, strand, instr) in enumerate(bursts):
        env.process(starter(t, strand, instr, k))

    def changer(t, mem):
        yield env.timeout(t)
        cpu.set_behaviour(mem)

    for t, mem in changes:
        env.process(changer(t, mem))
    env.run()
    return finished, cpu


def test_stale_timeout_ignored_when_second_burst_joins_no_stall():
    # mpi = 0: 1 busy strand runs at 1e9/s, 2 share it at 0.5e9/s each.
    # A = 3e9 at t=0 (would end at t=3); at t=1 A has 1e9 done, B = 1e9 joins.
    # B ends at 1 + 1e9/0.5e9 = 3 (A has 2e9 done then); A's last 1e9 alone ends at t=4.
    # A's original timeout (t=3) is stale and coincides with B's finish: it must not end A.
    finished, cpu = _group_with_bursts(0.0, 0.0, [(0.0, 0, 3e9), (1.0, 1, 1e9)])
    assert finished[1] == pytest.approx(3.0, abs=1e-9)  # hand arithmetic, float only: 1e-9 s
    assert finished[0] == pytest.approx(4.0, abs=1e-9)
    assert cpu.instructions_retired() == pytest.approx(4e9, rel=1e-12)


def test_stale_timeout_ignored_with_repairman_rates():
    # mpi = 0.01, stall = 100, cpi = 1: one strand CPI 2 -> 0.5e9/s. Two strands: repairman
    # M/M/1//2 with Z = S = 100 cycles: p0:p1:p2 = 1:2:2, pipeline busy 0.8 -> 0.8 IPC total,
    # 0.4e9/s each. A = 3e9 at t=0 (stale timeout at t=6); at t=1 A has 0.5e9 done, B = 1e9
    # joins; B ends at 1 + 1e9/0.4e9 = 3.5 with A at 1.5e9 done; A's last 1.5e9 at 0.5e9/s:
    # ends at 6.5.
    finished, _ = _group_with_bursts(0.01, 100.0, [(0.0, 0, 3e9), (1.0, 1, 1e9)])
    assert finished[1] == pytest.approx(3.5, abs=1e-9)  # hand arithmetic, float only: 1e-9 s
    assert finished[0] == pytest.approx(6.5, abs=1e-9)


def test_behaviour_change_mid_burst_uses_new_rate_for_the_rest():
    # A = 3e9 at 1e9/s (mpi = 0); at t=1 memory slows it to CPI 2 (0.5e9/s): 2e9 left -> t=5.
    finished, _ = _group_with_bursts(0.0, 0.0, [(0.0, 0, 3e9)],
                                     changes=[(1.0, MemoryBehaviour(0.01, 100.0))])
    assert finished[0] == pytest.approx(5.0, abs=1e-9)  # hand arithmetic, float only: 1e-9 s


# --------------------------------------------------------------------------- bug: livelock

def _run_guarded(env, until: float, max_same_time_events: int = 1000) -> None:
    """env.run(until) that gives up (instead of hanging) if time stops advancing."""
    last, same = env.now, 0
    while env.peek() < until:
        env.step()
        if env.now == last:
            same += 1
            if same > max_same_time_events:
                return
        else:
            last, same = env.now, 0


def test_group_does_not_hang_at_large_simulated_times():
    # One strand, 10% busy: 1e6-instruction bursts (1 ms at 1e9 instr/s) each followed by 9 ms
    # idle, from t=0. Nothing else happens, so simulated time must reach 60 s (6,000 bursts).
    # (It sticks at t = 32.001 s: vt, advanced only while busy, is ~10x smaller than
    # rate*now, so its resolution is finer than that of rate*now.)
    spec = make_spec(strands=1, pipelines=1, clock=1e9)
    env = simpy.Environment()
    cpu = Cpu(env, spec)
    cpu.set_behaviour(MemoryBehaviour(0.0, 0.0))
    done = [0]

    def chain():
        done[0] += 1
        env.timeout(0.009).callbacks.append(lambda _e: cpu.execute(0, 1e6, 0.0, chain))

    cpu.execute(0, 1e6, 0.0, chain)
    _run_guarded(env, 60.0)
    assert env.peek() >= 60.0, f"time stuck at {env.now} after {done[0]} bursts"
    # and a lone burst started at t = 1000 s (a routine point of a long run) must finish
    env2 = simpy.Environment(initial_time=1000.0)
    cpu2 = Cpu(env2, spec)
    cpu2.set_behaviour(MemoryBehaviour(0.0, 0.0))
    out = []
    cpu2.execute(0, 1e6, 0.0, lambda: out.append(env2.now))
    _run_guarded(env2, 1001.0)
    assert out == [pytest.approx(1000.001, abs=1e-9)]
