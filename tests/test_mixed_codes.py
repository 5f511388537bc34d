"""Several codes on one core (a batch job beside a workload): each runs at its own miss rate.

A fine-grained multithreaded pipeline issues from its ready strands in turn, so strands whose code misses less
are ready more often and get more of the pipeline: a multi-class repairman (a processor-sharing pipeline and a
delay for the stalls), exact by MVA. Checked against an independent continuous-time Markov chain, against the
one-class repairman, and through the event machinery by hand-computed virtual time.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.analytic import repairman, repairman_classes
from sim.hardware.cpu import Cpu, MemoryBehaviour, mixed_rate_table, rate_table
from sim.hardware.memory import INTERVAL, MemorySystem
from sim.hardware.profile import CpuSpec, load_profile
from sim.os.dispatcher import Dispatcher

# the T5220's OLTP code and RMAN's compressors, misses per instruction (workloads/tpcc.py, workloads/rman.py)
OLTP, COMPRESS, STALL = 0.0102, 0.0028, 150.0


def _ctmc(counts, think, service) -> tuple[list[float], float]:
    """The same network as a Markov chain, solved numerically: state = how many of each class are at the PS
    server; with j of them there, each is served at rate 1/(j service_k); each thinking source arrives at
    1/think_k."""
    states = list(itertools.product(*(range(n + 1) for n in counts)))
    index = {s: i for i, s in enumerate(states)}
    q = np.zeros((len(states), len(states)))
    for s in states:
        j = sum(s)
        for k, n in enumerate(counts):
            if s[k] < n:
                up = s[:k] + (s[k] + 1,) + s[k + 1:]
                q[index[s], index[up]] += (n - s[k]) / think[k]
            if s[k] > 0:
                down = s[:k] + (s[k] - 1,) + s[k + 1:]
                q[index[s], index[down]] += s[k] / (j * service[k])
    q -= np.diag(q.sum(axis=1))
    a = np.vstack([q.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1.0
    p = np.linalg.lstsq(a, b, rcond=None)[0]
    x = [sum(p[index[s]] * s[k] / (sum(s) * service[k]) for s in states if s[k]) for k in range(len(counts))]
    busy = sum(p[index[s]] for s in states if sum(s))
    return x, busy


@settings(max_examples=40, deadline=None)
@given(counts=st.lists(st.integers(0, 3), min_size=1, max_size=3),
       data=st.data())
def test_the_multiclass_repairman_is_the_markov_chains(counts, data):
    """Exact MVA and the chain's stationary law agree to solver precision (rel 1e-9) on every class's throughput
    and the server's utilisation, however many classes and sources (the product form holds for PS)."""
    think = data.draw(st.lists(st.floats(0.01, 50.0), min_size=len(counts), max_size=len(counts)))
    service = data.draw(st.lists(st.floats(0.05, 10.0), min_size=len(counts), max_size=len(counts)))
    x, util = repairman_classes(counts, think, service)
    xc, busy = _ctmc(counts, think, service)
    assert util <= 1.0 + 1e-12
    assert util == pytest.approx(busy, rel=1e-9, abs=1e-12)
    for got, want in zip(x, xc):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
def test_one_class_is_the_repairman_and_two_equal_classes_add_up_to_it(n):
    """One class: M/M/1//n's throughput (PS or FCFS, one service time). Two classes with the same times, split
    any way: their throughputs add up to it, each in proportion to its sources (rel 1e-12: float rounding)."""
    x, busy = repairman(n, STALL, 100.0)
    assert repairman_classes((n,), (STALL,), (100.0,))[0][0] == pytest.approx(x, rel=1e-12)
    for a in range(n + 1):
        xs, util = repairman_classes((a, n - a), (STALL, STALL), (100.0, 100.0))
        assert sum(xs) == pytest.approx(x, rel=1e-12) and util == pytest.approx(busy, rel=1e-12)
        assert xs[0] == pytest.approx(x * a / n, rel=1e-12)


def test_refuses_a_class_without_its_times():
    with pytest.raises(ValueError, match="one think and one service time per class"):
        repairman_classes((1, 2), (1.0,), (1.0, 1.0))
    with pytest.raises(ValueError, match="service must be positive"):
        repairman_classes((1,), (1.0,), (0.0,))


def test_the_code_that_misses_less_gets_more_of_the_pipeline():
    """A compressing strand beside an OLTP one on a T2 pipeline: the compressor is ready 72% of its time alone,
    the OLTP strand 40%; together each slows, the compressor by less in proportion than it would at OLTP's miss
    rate (what a mean field of the two gave it). A code alone has its own table's rate, to the last digit."""
    mixed = mixed_rate_table(4, 1.0, (OLTP, COMPRESS), STALL, 1.4e9)
    oltp = rate_table(4, 1, 1.0, OLTP, STALL, 1.4e9)
    comp = rate_table(4, 1, 1.0, COMPRESS, STALL, 1.4e9)
    for n in range(5):
        assert mixed[n] == ((oltp[0][n], 0.0), oltp[1][n])
        assert mixed[5 * n] == ((0.0, comp[0][n]), comp[1][n])
    (r_oltp, r_comp), util = mixed[1 + 5]   # one strand of each
    assert comp[0][1] > r_comp > oltp[0][1] > r_oltp
    blend = rate_table(4, 1, 1.0, (OLTP + COMPRESS) / 2, STALL, 1.4e9)[0][2]   # the mean field's per-strand rate
    assert r_comp > blend > r_oltp
    assert util == pytest.approx((r_oltp + r_comp) / 1.4e9, rel=1e-12) and util < 1.0
    assert mixed[3 + 2 * 5] is None   # 5 strands busy on a 4-strand group: no such mix


def _mixed(spec: CpuSpec, mpis=(OLTP, COMPRESS), stall=STALL):
    env = simpy.Environment()
    cpu = Cpu(env, spec, codes=len(mpis))
    cpu.set_behaviour(MemoryBehaviour(mpis[0], stall, codes=tuple(mpis)))
    return env, cpu


def _spec(strands: int = 4, clock: float = 1e9) -> CpuSpec:
    return CpuSpec(model="t", isa="sparcv9", sockets=1, cores_per_socket=1, strands_per_core=strands,
                   pipelines_per_core=1, clock=clock, cpi_issue=1.0, llc_size=4 * 2**20)


def test_each_codes_bursts_run_in_their_own_virtual_time():
    """A short burst of OLTP's and a long one of the compressor's start together: the short one ends at
    I0 / r0(1, 1); by then the long one has retired r1(1, 1) x that, and runs the rest alone at r1(0, 1).
    Hand-computed virtual time, rel 1e-12; the misses are each code's instructions at its own rate."""
    env, cpu = _mixed(_spec())
    g = cpu.groups[0]
    ends = {}
    g.start(2e6, 0.0, lambda: ends.setdefault("oltp", env.now), code=0)
    g.start(9e6, 0.0, lambda: ends.setdefault("comp", env.now), code=1)
    env.run()
    (r0, r1), _ = g.table[1 + 5]
    t0 = 2e6 / r0
    assert ends["oltp"] == pytest.approx(t0, rel=1e-12)
    assert ends["comp"] == pytest.approx(t0 + (9e6 - r1 * t0) / g.table[5][0][1], rel=1e-12)
    assert cpu.instructions_retired() == pytest.approx(11e6, rel=1e-12)
    assert cpu.misses() == pytest.approx(2e6 * OLTP + 9e6 * COMPRESS, rel=1e-12)
    # each code's own counters: its strand-seconds (one strand each, to its end), instructions, the same x the
    # stall factor (1: mlp 1), misses
    for code, want in enumerate([(t0, 2e6, 2e6, 2e6 * OLTP), (ends["comp"], 9e6, 9e6, 9e6 * COMPRESS)]):
        assert cpu.by_code()[code] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("strands, mlp, procs, bursts", [(4, 1.0, 12, 6), (2, 2.0, 5, 5)])
def test_one_code_on_mixed_cores_is_the_plain_cores_to_the_last_bit(strands, mlp, procs, bursts):
    """Cores built for two codes that only ever run one give the same finish times as plain cores, to the bit,
    through the dispatcher with time slicing (more processes than strands: the run queue, cuts and slices); with
    mlp 2 too (Hyper-Threading's split window: the slice is sized from code 0's own table, mlp included)."""
    ends = []
    for codes in (1, 2):
        env = simpy.Environment()
        cpu = Cpu(env, _spec(strands=strands), codes=codes)
        cpu.set_behaviour(MemoryBehaviour(OLTP, STALL, mlp, codes=(OLTP, COMPRESS) if codes == 2 else ()))
        disp = Dispatcher(env, cpu, 0.001)
        log = []

        def proc(k, disp=disp, env=env, log=log):
            for size in itertools.islice(itertools.cycle((0.7e6, 3.3e6, 9.1e6, 0.2e6)), k, k + bursts):
                yield disp.run(size)
                log.append((k, env.now))
        for k in range(procs):
            env.process(proc(k))
        env.run()
        ends.append(log)
    assert ends[0] == ends[1] and len(ends[0]) == procs * bursts


def test_two_codes_sliced_by_the_dispatcher_lose_no_instruction():
    """Two codes' processes on a saturated core, time-sliced: every instruction given is retired, each code's
    misses at its rate, the bursts' strand time the strands' (none lost, within the span), and a compressor's
    instruction takes less of it than OLTP's, about as the table has it with four of each code on the 8-strand
    pipeline (7.42 ns against 8.68; measured 7.41 against 8.48: the mix drifts from 4:4 as bursts end)."""
    env, cpu = _mixed(_spec(strands=8))
    disp = Dispatcher(env, cpu, 0.001)
    took = {0: [], 1: []}

    def proc(code, sizes):
        for size in sizes:
            on_cpu = yield disp.run(size, 0.0, code)
            took[code].append(on_cpu)
    rng = np.random.default_rng(7)
    given_by = {0: 0.0, 1: 0.0}
    for k in range(16):
        sizes = rng.uniform(1e5, 5e6, 20)
        given_by[k % 2] += sizes.sum()
        env.process(proc(k % 2, sizes))
    env.run()
    assert cpu.instructions_retired() == pytest.approx(given_by[0] + given_by[1], rel=1e-9)
    assert cpu.misses() == pytest.approx(given_by[0] * OLTP + given_by[1] * COMPRESS, rel=1e-9)
    busy, _sys = cpu.strand_time()
    assert busy <= 8 * env.now * (1 + 1e-9)
    assert busy == pytest.approx(sum(on_cpu for code in took for on_cpu in took[code]), rel=1e-9)
    (r0, r1), _ = cpu.groups[0].table[4 + 4 * 9]
    share = [np.sum(took[c]) / given_by[c] for c in (0, 1)]   # strand seconds per instruction, each code's
    assert share[1] < share[0] and share[0] / share[1] == pytest.approx(r1 / r0, rel=0.05)


def t5220_two_codes(mpis=(OLTP, COMPRESS)):
    """A T5220's cores built for two codes, its memory, and each code's misses per instruction set (None: unset)."""
    p = load_profile("t5220")
    env = simpy.Environment()
    cpu = Cpu(env, p.cpu, codes=2)
    memory = MemorySystem(env, p.memory, p.cpu, cpu)
    for code, mpi in enumerate(mpis):
        if mpi is not None:
            memory.set_misses_per_instruction(mpi, code)
    return env, cpu, memory


def test_the_memory_counts_each_codes_misses_at_its_own_rate():
    """The memory's feedback sees the cores' own count of misses: two codes retiring known instructions give
    I0 x m0 + I1 x m1 misses, and the latency it feeds back moves as that rate does."""
    env, cpu, memory = t5220_two_codes()
    assert cpu.groups[0].mpis == (OLTP, COMPRESS)
    g0, g1 = cpu.groups[0], cpu.groups[1]
    g0.start(3e6, 0.0, lambda: None, code=0)
    g1.start(5e6, 0.0, lambda: None, code=1)
    env.run(until=3 * INTERVAL + 1e-9)
    assert memory.counted_instructions == pytest.approx(8e6, rel=1e-9)
    assert memory.misses == pytest.approx(3e6 * OLTP + 5e6 * COMPRESS, rel=1e-9)


def test_a_one_code_memory_refuses_a_second_code():
    p = load_profile("t5220")
    memory = MemorySystem(simpy.Environment(), p.memory, p.cpu, Cpu(simpy.Environment(), p.cpu))
    with pytest.raises(ValueError, match="one code"):
        memory.set_misses_per_instruction(0.01, 1)
