"""Main memory as a latency: local or remote by interconnect hops, plus queueing at the controllers.

A last-level cache miss costs the strand the memory latency (divided by the misses that
overlap, MLP). The latency has two parts:

- **Unloaded**, by topology. Each socket owns the memory behind its controller; another
  socket's memory is reached over HyperTransport-like links arranged in a ring (2 sockets:
  one link; 4 sockets: the square of a 4-way Opteron, where one node is 2 hops away). The
  profile gives the local latency and the mean over the remote nodes; each hop adds the same
  time. Pages are spread evenly over the nodes (shared memory touched by every process, no
  NUMA placement in the 2.4 kernels of the time), so a miss sees the mean over all nodes.
- **Queueing**, as bandwidth utilisation rises. Each miss moves a line (and, for a share of
  misses, writes a dirty line back) through one of the memory controllers (or one shared
  front-side bus, as on the zx1); a controller is an M/D/1 server whose service time is
  the transfer time of those bytes.

The latency is fed back into the strands' stall time at a fixed simulated interval, not per
event: every INTERVAL the instructions retired give the miss rate, the miss rate gives the
utilisation and the loaded latency, and the cores get the new stall. The iteration is damped
so that it settles on the fixed point (more latency -> fewer instructions -> fewer misses).
"""

from __future__ import annotations

from sim.hardware.cpu import Cpu, MemoryBehaviour
from sim.hardware.profile import CpuSpec, MemorySpec

INTERVAL = 0.02          # s of simulated time between two latency updates
WRITEBACK_SHARE = 0.25   # estimate: dirty lines written back per miss (OLTP: mostly reads; stores to SGA buffers,
                         #   stacks and the redo buffer dirty about one line in four that leave the cache)
_MAX_UTILISATION = 0.95  # an M/D/1 wait is unbounded at 1; real requesters are finite: past it, loaded_latency
_DAMPING = 0.5           # each update moves half way to the latency the last interval implies


def ring_hops(sockets: int) -> list[int]:
    """Hops from one socket to each socket (itself first) on a ring of links."""
    return [min(k, sockets - k) for k in range(sockets)]


class MemorySystem:
    """The memory latency the cores see, and its feedback into their stall time."""

    def __init__(self, env, spec: MemorySpec, cpu_spec: CpuSpec, cpu: Cpu | None = None):
        self.env, self.spec, self.cpu_spec, self.cpu = env, spec, cpu_spec, cpu
        sockets = cpu_spec.sockets
        hops = ring_hops(sockets)
        remote = spec.remote_latency if spec.remote_latency is not None else spec.latency
        per_hop = (remote - spec.latency) * (sockets - 1) / sum(hops) if sockets > 1 else 0.0
        self.node_latency = [spec.latency + h * per_hop for h in hops]
        self.unloaded = sum(self.node_latency) / sockets
        self.controllers = spec.controllers or sockets
        self.bandwidth = spec.bandwidth_per_socket * sockets          # all controllers together
        self.bytes_per_miss = spec.line_size * (1.0 + WRITEBACK_SHARE)
        self.service = self.bytes_per_miss / (self.bandwidth / self.controllers)
        self.mpi = 0.0
        # where the cores run several codes (a batch job beside a workload): each one's misses per instruction,
        # by code number; the misses then are the cores' own count (Cpu.misses), each code's at its rate
        self.codes = [0.0] * cpu.codes if cpu is not None and cpu.codes > 1 else None
        self._last_misses = 0.0
        self.latency = self.unloaded
        self._running = False
        self._last_instructions = 0.0
        self._last_weighted = 0.0
        self.reset_stats()

    # ------------------------------------------------------------ the closed forms

    def utilisation(self, miss_rate: float) -> float:
        """Fraction of the memory bandwidth used at `miss_rate` misses per second."""
        return miss_rate * self.bytes_per_miss / self.bandwidth

    def loaded_latency(self, miss_rate: float, latency: float | None = None) -> float:
        """Unloaded latency plus the M/D/1 wait at a controller at this miss rate. Past _MAX_UTILISATION an
        open queue says nothing (its wait is unbounded at 1), but the requesters are finite: misses queue
        until they come no faster than the controllers serve them. So where the strands, stalling for
        `latency` (the present one), miss faster than that, the latency grows by the excess (a strand's
        misses per second fall about as its stall grows), and the feedback settles where they fit: a what-if
        that halves the bandwidth of a saturated memory had reported it used at 200% and the throughput
        barely moved."""
        rho = self.utilisation(miss_rate)
        wait = min(rho, _MAX_UTILISATION)
        queued = self.unloaded + wait * self.service / (2.0 * (1.0 - wait))
        if latency is None:
            return queued
        # (continuous in rho: below the cap at its own fixed point, latency x rho / cap is under the M/D/1 figure)
        return max(queued, latency * rho / _MAX_UTILISATION)

    def stall_cycles(self, latency: float) -> float:
        # rounded to 0.1 cycle so that the cores' rate tables are reused
        return round(latency * self.cpu_spec.clock / self.cpu_spec.mlp, 1)

    # ------------------------------------------------------------ feedback into the cores

    def set_misses_per_instruction(self, mpi: float, code: int = 0) -> None:
        """The running code's LLC misses per instruction (`code`: which one, where the cores run several); starts
        the latency feedback."""
        if self.codes is None:
            if code:
                raise ValueError(f"code {code}: these cores run one code (Cpu(codes=...))")
            self.mpi = mpi
        else:
            self.codes[code] = mpi
            self.mpi = self.codes[0]
        self._apply(self.latency)
        if not self._running and self.cpu is not None and (mpi > 0.0 or any(self.codes or ())):
            self._running = True
            self.env.process(self._feedback())

    def _apply(self, latency: float) -> None:
        self.latency = latency
        if self.cpu is not None:
            self.cpu.set_behaviour(MemoryBehaviour(self.mpi, self.stall_cycles(latency), self.cpu_spec.mlp,
                                                   tuple(self.codes or ())))

    def _feedback(self):
        env, cpu = self.env, self.cpu
        while True:
            yield env.timeout(INTERVAL)
            done, weighted = cpu.counters()
            delta = done - self._last_instructions if done >= self._last_instructions else done  # after a reset
            self._last_instructions = done
            self.stall_weight += weighted - self._last_weighted if weighted >= self._last_weighted else weighted
            self._last_weighted = weighted
            if self.codes is None:
                misses = delta * self.mpi
            else:
                missed = cpu.misses()
                misses = missed - self._last_misses if missed >= self._last_misses else missed
                self._last_misses = missed
            rate = misses / INTERVAL
            self.misses += misses
            self.counted_instructions += delta
            self.miss_latency += misses * self.latency
            self.busy_bandwidth += self.utilisation(rate) * INTERVAL
            self.span += INTERVAL
            target = self.loaded_latency(rate, self.latency)
            new = self.latency + _DAMPING * (target - self.latency)
            if abs(new - self.latency) > 1e-3 * self.latency:
                self._apply(new)
            if env.peek() == float("inf"):
                # Nothing else will ever happen: stop, so that a run to exhaustion (a batch job
                # driven by env.run()) ends; set_misses_per_instruction starts the loop again.
                self._running = False
                return

    # ------------------------------------------------------------ statistics

    def reset_stats(self) -> None:
        self.misses = self.miss_latency = self.busy_bandwidth = self.span = 0.0
        self.counted_instructions = 0.0   # the instructions behind `misses`
        self.stall_weight = 0.0           # those instructions, each x its stall factor min(n, mlp) (Cpu)

    def mean_latency(self) -> float:
        """Miss-weighted mean latency (s) since the last reset."""
        return self.miss_latency / self.misses if self.misses else self.latency

    def cpi_stack(self, strand_seconds: float, instructions: float, mpi: float, overlap: float = 1.0,
                  latency: float | None = None) -> dict:
        """Cycles per instruction of `instructions` that held strands `strand_seconds`, as issue + data stalls +
        other (waiting for the pipeline while other strands issue), at `mpi` misses per instruction: a miss stalls
        latency / mlp on a strand alone, and min(n, mlp) times that with n strands of its pipeline busy
        (Hyper-Threading splits the window), whose mean over the instructions is `overlap`."""
        spec = self.cpu_spec
        lat = self.mean_latency() if latency is None else latency
        cpi = strand_seconds * spec.clock / instructions
        stall = mpi * lat * spec.clock / spec.mlp * overlap
        # (other: what is left, never below 0: the sum can come out -1e-13 below)
        return {"cpi": cpi, "cpi_issue": spec.cpi_issue, "cpi_data_stall": stall,
                "cpi_other": max(0.0, cpi - spec.cpi_issue - stall), "data_stall_share_pct": 100.0 * stall / cpi}

    def report(self, busy_strand_seconds: float, instructions: float) -> dict:
        """The CPI stack and the memory figures, as a performance-counter tool would show them."""
        spec = self.cpu_spec
        lat = self.mean_latency()
        out = {
            "memory_latency_ns": lat * 1e9,
            "memory_latency_cycles": lat * spec.clock,
            "memory_unloaded_latency_ns": self.unloaded * 1e9,
            "memory_bandwidth_util_pct": 100.0 * self.busy_bandwidth / self.span if self.span else 0.0,
        }
        if instructions > 0.0:
            # each interval's misses at the rate it ran at (a workload may change it mid-run: RMAN's compressors
            # sharing the LLC), not the rate set last
            mpi = self.misses / self.counted_instructions if self.counted_instructions else self.mpi
            overlap = self.stall_weight / self.counted_instructions if self.counted_instructions else 1.0
            out.update(self.cpi_stack(busy_strand_seconds, instructions, mpi, overlap, lat))
        return out
