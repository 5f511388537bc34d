"""Edges of several codes on one core (sim/hardware/cpu.py MixedPipelineGroup) that tests/test_mixed_codes.py leaves
open, found by a mutation round on its code: each test here fails on a change to it that the others let pass."""

from __future__ import annotations

import itertools

import pytest
import simpy

from sim.analytic import repairman_classes
from sim.hardware.cpu import Cpu, MemoryBehaviour, mixed_rate_table, rate_table
from sim.hardware.memory import INTERVAL
from sim.hardware.profile import CpuSpec
from sim.os.dispatcher import Dispatcher
from test_mixed_codes import t5220_two_codes  # tests/ is on sys.path (rootdir-less prepend mode)

OLTP, COMPRESS, STALL = 0.0102, 0.0028, 150.0   # as tests/test_mixed_codes.py


def _spec(strands: int = 4, clock: float = 1e9, cpi: float = 1.0) -> CpuSpec:
    return CpuSpec(model="t", isa="sparcv9", sockets=1, cores_per_socket=1, strands_per_core=strands,
                   pipelines_per_core=1, clock=clock, cpi_issue=cpi, llc_size=4 * 2**20)


def _mixed(spec: CpuSpec, mpis=(OLTP, COMPRESS), stall=STALL, mlp=1.0, env=None):
    env = env or simpy.Environment()
    cpu = Cpu(env, spec, codes=len(mpis))
    cpu.set_behaviour(MemoryBehaviour(mpis[0], stall, mlp, codes=tuple(mpis)))
    return env, cpu


def test_refuses_a_class_without_its_service_time():
    """A service time short (as test_mixed_codes.py's think short): zip would drop the class without a word."""
    with pytest.raises(ValueError, match="one think and one service time per class"):
        repairman_classes((1, 2), (1.0, 1.0), (1.0,))


@pytest.mark.parametrize("mlp", [1.0, 2.5])
def test_two_codes_that_miss_alike_are_one_code_with_the_stall_split_as_mlp_says(mlp):
    """Two codes with the same miss rate are one code: every mix of them has rate_table's per-strand rate and
    utilisation for that many busy strands (rel 1e-12), with a miss's stall x min(busy, mlp) (the out-of-order
    window split between the strands: with mlp 2.5, x2 at 2 busy, x2.5 at 3 and 4)."""
    table = mixed_rate_table(4, 1.0, (OLTP, OLTP), STALL, 1e9, mlp)
    one = rate_table(4, 1, 1.0, OLTP, STALL, 1e9, mlp)
    for a, b in itertools.product(range(1, 4), repeat=2):
        if a + b <= 4:
            (ra, rb), util = table[a + 5 * b]
            assert ra == pytest.approx(one[0][a + b], rel=1e-12) and rb == pytest.approx(one[0][a + b], rel=1e-12)
            assert util == pytest.approx(one[1][a + b], rel=1e-12)


def test_the_pipeline_is_busy_cpi_issue_cycles_for_each_instruction_of_either_code():
    """A PS server's utilisation is its throughput x service: the pipeline issues cpi_issue cycles per
    instruction, so with cpi_issue 2 it is busy 2 x (instructions per cycle of both codes), for every mix."""
    clock = 1e9
    table = mixed_rate_table(4, 2.0, (OLTP, COMPRESS), STALL, clock)
    for a, b in itertools.product(range(1, 4), repeat=2):
        if a + b <= 4:
            (ra, rb), util = table[a + 5 * b]
            assert util == pytest.approx(2.0 * (a * ra + b * rb) / clock, rel=1e-12) and 0.0 < util < 1.0


def test_a_change_of_miss_rate_mid_burst_moves_its_end():
    """A code-1 burst of 3e9 instructions missing 0.01 per instruction at 100 cycles: a lone strand takes
    1 + 0.01 x 100 = 2 cycles an instruction (0.5e9/s); at t=1 its code stops missing (1e9/s), so the 2.5e9 left
    end at t = 3.5, not at t = 6, where the wake-up counted at the old rate was (as PipelineGroup's
    test_behaviour_change_mid_burst_uses_new_rate_for_the_rest, the other way)."""
    env, cpu = _mixed(_spec(), mpis=(OLTP, 0.01), stall=100.0)
    ends = []
    cpu.groups[0].start(3e9, 0.0, lambda: ends.append(env.now), code=1)

    def change():
        yield env.timeout(1.0)
        cpu.set_behaviour(MemoryBehaviour(OLTP, 100.0, codes=(OLTP, 0.0)))
    env.process(change())
    env.run()
    assert ends == [pytest.approx(3.5, rel=1e-12)]


def test_a_burst_restarted_after_its_cut_keeps_its_code():
    """A code-1 burst running whole is cut for a waiter; the waiter finds the strand a short code-0 burst leaves
    before that cut comes, so the code-1 burst keeps its strand and runs its rest whole (no switch): all of it,
    still code 1's, misses at code 1's rate: the misses are 100 L x 0.0028 + 0.5 L x 0.0102 (rel 1e-9)."""
    env, cpu = _mixed(_spec(strands=2))
    disp = Dispatcher(env, cpu, 0.001)
    slice_ = disp._slice()
    g = cpu.groups[0]
    (r0, r1), _ = g.table[1 + 3]
    assert 0.3 * slice_ / r0 < slice_ / r1   # the short burst ends before the long one's first slice does

    def proc():
        disp.run(100 * slice_, 0.0, 1)
        disp.run(0.3 * slice_, 0.0, 0)
        yield env.timeout(0.1 * slice_ / r0)
        disp.run(0.2 * slice_, 0.0, 0)
    env.process(proc())
    env.run()
    assert disp.involuntary_switches == 0
    assert cpu.instructions_retired() == pytest.approx(100.5 * slice_, rel=1e-9)
    assert cpu.misses() == pytest.approx(100 * slice_ * COMPRESS + 0.5 * slice_ * OLTP, rel=1e-9)


def test_misses_and_the_memorys_count_restart_at_a_reset_mid_interval():
    """Counters reset halfway through a memory interval, both codes running: the cores count only the misses
    retired since (each code's instructions left, at its rate), and the memory's feedback, at its next ticks and
    the idle ones after the bursts end, the same misses and instructions: none from before the reset, none twice."""
    env, cpu, memory = t5220_two_codes()
    g0, g1 = cpu.groups[0], cpu.groups[1]
    g0.start(3e7, 0.0, lambda: None, code=0)
    g1.start(5e7, 0.0, lambda: None, code=1)
    before = {}

    def reset():
        yield env.timeout(1.5 * INTERVAL)
        cpu.reset_stats()
        memory.reset_stats()
        before.update(oltp=g0.clock(0), comp=g1.clock(1))
        assert cpu.misses() == 0.0
    env.process(reset())
    env.run(until=40 * INTERVAL + 1e-9)
    assert g0.busy == g1.busy == 0 and 0.0 < before["oltp"] < 3e7 and 0.0 < before["comp"] < 5e7
    after = (3e7 - before["oltp"]) * OLTP + (5e7 - before["comp"]) * COMPRESS
    assert cpu.misses() == pytest.approx(after, rel=1e-9)
    assert memory.misses == pytest.approx(after, rel=1e-9)
    assert memory.counted_instructions == pytest.approx(8e7 - before["oltp"] - before["comp"], rel=1e-9)


def test_two_codes_never_hang_at_large_simulated_times():
    """Two codes' bursts chained on one 2-strand group of a slow clock (1e3 Hz), from t = 1e8 s (float spacing
    1.5e-8 s there): code 0's bursts of 300 instructions every 2 s, code 1's of 500 every 3 s, overlapping in turn.
    Time must reach 1e8 + 600 s with every burst done (300 and 200 of them), none stuck in a wake-up that fires a
    hair short of its tag and reschedules itself at the same instant: each code's tags take the float slack of its
    own rate x now (with code 0's, 0 while it is idle, time stuck at 1e8 + 3.7 s)."""
    t_start = 1e8
    env = simpy.Environment(initial_time=t_start)
    env, cpu = _mixed(_spec(strands=2, clock=1e3), env=env)
    g = cpu.groups[0]
    done = [0, 0]

    def chain(code, size, period):
        while True:
            g.start(size, 0.0, lambda c=code: done.__setitem__(c, done[c] + 1), code=code)
            yield env.timeout(period)
    env.process(chain(0, 300.0, 2.0))
    env.process(chain(1, 500.0, 3.0))
    last, same = env.now, 0
    while env.peek() < t_start + 600.0 - 1e-6:
        env.step()
        same = same + 1 if env.now == last else 0
        last = env.now
        assert same < 1000, f"time stuck at {env.now} after {done} bursts"
    assert done == [300, 200]
    # (to 1e-6: an instant there is known to 1.5e-8 s, some 1e-8 of a burst)
    assert cpu.misses() == pytest.approx(300 * 300.0 * OLTP + 200 * 500.0 * COMPRESS, rel=1e-6)


def test_the_cores_accounts_follow_the_mix_of_codes():
    """A code-0 burst of 2e6 (sys share 0.5) and a code-1 one of 9e6 start together on a 2-strand group, mlp 2:
    until the first ends at t0 = 2e6 / r0(1,1) both run, then the other alone at r1(0,1) to t1. Hand-computed from
    the table (rel 1e-12): the strand-seconds (2 t0 + (t1 - t0)), sys (0.5 t0), the pipeline's issuing time
    (util(1,1) t0 + util(0,1) (t1 - t0)), mid-run the same without an update (areas_now) and the misses up to
    then (Cpu.misses brings the busy groups up to date), and the instructions
    weighted by min(busy, mlp): x2 while both run, x1 after."""
    env, cpu = _mixed(_spec(strands=2), mlp=2.0)
    g = cpu.groups[0]
    (r0, r1), u11 = g.table[1 + 3]
    r1_alone, u01 = g.table[3][0][1], g.table[3][1]
    t0 = 2e6 / r0
    mid = {}

    def look():
        yield env.timeout(t0 / 2)
        mid["now"] = g.areas_now()
        mid["misses"] = cpu.misses()
    env.process(look())
    g.start(2e6, 0.5, lambda: None, code=0)
    g.start(9e6, 0.0, lambda: None, code=1)
    env.run()
    t1 = env.now
    assert t1 == pytest.approx(t0 + (9e6 - r1 * t0) / r1_alone, rel=1e-12)
    assert mid["now"] == pytest.approx((t0, 0.25 * t0, u11 * t0 / 2), rel=1e-12)
    assert mid["misses"] == pytest.approx(t0 / 2 * (r0 * OLTP + r1 * COMPRESS), rel=1e-12)   # (up to that instant)
    busy, sys = cpu.strand_time()
    assert busy == pytest.approx(t0 + t1, rel=1e-12) and sys == pytest.approx(0.5 * t0, rel=1e-12)
    assert cpu.core_utilisation()[0] == pytest.approx((u11 * t0 + u01 * (t1 - t0)) / t1, rel=1e-12)
    both = 2e6 + r1 * t0
    assert cpu.counters() == pytest.approx((11e6, 2 * both + (11e6 - both)), rel=1e-12)


def test_the_cores_retire_each_codes_rate_times_its_busy_strands():
    """Two code-0 bursts and one code-1 burst on a 4-strand group: the group retires 2 r0(2,1) + r1(2,1)
    instructions a second (the rate each busy strand runs at, times how many run it)."""
    env, cpu = _mixed(_spec())
    for code in (0, 0, 1):
        cpu.groups[0].start(1e6, 0.0, lambda: None, code=code)
    (r0, r1), _ = cpu.groups[0].table[2 + 5]
    assert cpu.instruction_rate() == pytest.approx(2 * r0 + r1, rel=1e-12)


def test_a_cut_on_code_1s_heap_moves_the_burst_ahead_of_those_that_end_later():
    """On a 4-strand group a code-0 burst runs throughout; code-1 burst Y (100 L) starts with it, X (0.95 L) when Y
    has retired 1.1 L, and Y is cut back to its next multiple of L, 2 L (from origin 0, in code 1's clock): it
    gives back 98 L and now ends before X. Hand-computed: r1a = r1(1,1) up to tX = 1.1 L / r1a, then r1b = r1(1,2):
    Y ends at tY = tX + 0.9 L / r1b, and X's last 0.05 L run at r1a again: it ends at tY + 0.05 L / r1a (rel 1e-12).
    (Left unordered after the cut, the heap had X at its root, and Y ended with it.)"""
    env, cpu = _mixed(_spec())
    g = cpu.groups[0]
    big = 1e6
    r1a, r1b = g.table[1 + 5][0][1], g.table[1 + 10][0][1]
    t_x = 1.1 * big / r1a
    ends, given_back = {}, []
    g.start(1e9, 0.0, lambda: None, code=0)
    g.start(100 * big, 0.0, lambda arg: ends.__setitem__(arg, env.now), "Y", code=1)

    def later():
        yield env.timeout(t_x)
        g.start(0.95 * big, 0.0, lambda: ends.setdefault("X", env.now), code=1)
        yield env.timeout(0.1 * big / r1b)
        given_back.append(g.cut("Y", big, 0.0))
    env.process(later())
    env.run(until=1.0)
    assert given_back == [pytest.approx(98 * big, rel=1e-12)]
    t_y = t_x + 0.9 * big / r1b
    assert ends == {"Y": pytest.approx(t_y, rel=1e-12), "X": pytest.approx(t_y + 0.05 * big / r1a, rel=1e-12)}


def test_the_memorys_feedback_starts_again_for_a_code_set_after_the_simulation_ran_out():
    """The feedback stops where nothing is left to happen (a batch run to exhaustion) and a new miss rate starts it
    again, even a code's of 0 while the other's is not: a code-0 burst of 5e7 then runs at OLTP's rate with its
    misses counted by the memory (5e7 x 0.0102, rel 1e-9)."""
    env, cpu, memory = t5220_two_codes((OLTP, None))
    env.run()
    assert not memory._running and memory.misses == 0.0
    memory.set_misses_per_instruction(0.0, 1)
    cpu.groups[0].start(5e7, 0.0, lambda: None, code=0)
    env.run(until=env.now + 20 * INTERVAL)
    assert memory.misses == pytest.approx(5e7 * OLTP, rel=1e-9)


def test_a_run_without_a_background_job_is_on_the_plain_cores():
    """Without a background job the System's cores are the plain PipelineGroups (one code: the arithmetic of before,
    to the bit, and the memory's misses as instructions x mpi); with one, cores for two codes."""
    from sim import scenario
    from sim.hardware.cpu import MixedPipelineGroup, PipelineGroup
    from sim.system import System

    def system(settings):
        return System(scenario.load(None, {"users": "4", **settings}, profile="t5220", workload="tpcc"))
    plain = system({})
    assert plain.cpu.codes == 1 and plain.memory.codes is None
    assert all(type(g) is PipelineGroup for g in plain.cpu.groups)
    beside = system({"background.workload": "rman", "background.params.channels": 2})
    assert beside.cpu.codes == 2 and all(type(g) is MixedPipelineGroup for g in beside.cpu.groups)


def test_a_code_1_burst_is_cut_at_its_slice_end_in_its_own_virtual_time():
    """One strand (ue10000-like: a table of 2 entries plus an impossible mix). A code-0 burst of 2.5 slices runs
    first (code 0's clock moves to 2.5 L0, L0 = r0 x quantum: 2.5 quanta); then a code-1 burst of 10 L1 runs whole
    from its own clock's 0; a waiter comes when it has retired 1.3 L1: it is cut at 2 L1 (its next slice end from
    its own start, 2 quanta), the waiter's 0.5 L0 runs (half a quantum), then its 8 L1 left (8 quanta)."""
    env, cpu = _mixed(_spec(strands=1))
    g = cpu.groups[0]
    assert len(g.table) == 4 and g.table[3] is None   # 1 strand: (0,0), (1,0), (0,1); both busy cannot be
    r0, r1 = g.table[1][0][0], g.table[2][0][1]
    assert r1 > r0
    q = 0.001
    disp = Dispatcher(env, cpu, q)
    ends = {}

    def proc():
        yield disp.run(2.5 * r0 * q, 0.0, 0)
        disp.run(10 * r1 * q, 0.0, 1).callbacks.append(lambda _e: ends.setdefault("long", env.now))
        yield env.timeout(1.3 * q)
        yield disp.run(0.5 * r0 * q, 0.0, 0)
        ends["waiter"] = env.now
    env.process(proc())
    env.run()
    assert ends == {"waiter": pytest.approx(5.0 * q, rel=1e-12), "long": pytest.approx(13.0 * q, rel=1e-12)}
    assert disp.involuntary_switches == 1


def test_a_time_slice_is_a_quantum_of_either_codes_time():
    """One strand, two bursts of 9.5 slices each that alternate: the time slice is a quantum of time whatever the
    code (an OS switches by the clock), so the code-1 burst, started first, ends after 18.5 quanta and the code-0
    one after 19 (rel 1e-9), each switched out 9 times. Sized by code 0's rate for both, the compressor's slices
    lasted r0/r1 of a quantum (0.54 on an UltraSPARC II): it got about half its share of a saturated CPU."""
    env, cpu = _mixed(_spec(strands=1))
    g = cpu.groups[0]
    r0, r1 = g.table[1][0][0], g.table[2][0][1]
    q = 0.001
    disp = Dispatcher(env, cpu, q)
    ends = {}
    disp.run(9.5 * r1 * q, 0.0, 1).callbacks.append(lambda _e: ends.setdefault(1, env.now))
    disp.run(9.5 * r0 * q, 0.0, 0).callbacks.append(lambda _e: ends.setdefault(0, env.now))
    env.run()
    assert ends == {1: pytest.approx(18.5 * q, rel=1e-9), 0: pytest.approx(19 * q, rel=1e-9)}
    assert disp.involuntary_switches == 18
