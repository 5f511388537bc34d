"""The memory account: who holds how much of RAM, what is left for the page cache, paging and
out of memory.

Memory is committed by the kernel, by shared memory (the SGA: only what has been touched is
resident, as SysV shared memory is allocated page by page on first touch) and by processes,
counted by kind (a kind is e.g. "oracle server": count x private bytes, of which a working set
is touched each time the process wakes). What is left of RAM is the OS page cache: Linux and
Solaris give all free memory to it, so `page_cache_size()` is what a page-cache model sizes
itself from.

When committed memory exceeds RAM the kernel pages the excess out, coldest pages first
(LRU): first the pages processes touched once and never again (the part of their private
memory outside the working set), then working sets. A process that wakes after idling (a
user who was thinking) faults its paged-out working-set pages back in: the fraction of the
working set that is out grows with the overcommit beyond the cold pages, and each fault costs
kernel CPU and a read from the swap device (swap-in reads a cluster of pages at once). Past
RAM + swap nothing more can be committed: the run ends as **out of memory**, a result.

Counting is per kind, so a million processes cost one dict entry, not a million objects.

Which pages the page cache keeps (`os.page_replacement`, used by the cache model,
sim/db/buffer_cache.py): "lru", or "fifo" for Solaris 7 and earlier. Before Solaris 8's cyclic
page cache (which frees a file page when segmap releases it), a file page read through segmap
stays in use after the read, so file I/O fills memory until free memory falls to lotsfree and
the page scanner runs (what Solaris 7's optional priority paging was made to tame: McDougall &
Mauro, Solaris Internals, 2000). The scanner is a two-handed clock: the front hand clears a
page's reference bit, the back hand, handspreadpages behind it, frees the page unless it was
referenced in between (Solaris Tunable Parameters Reference Manual: handspreadpages defaults
to fastscan, fastscan to the lesser of 64 MB and half of memory; Appendix A of the VERITAS
brief sets neither). The hands move only as fast as pages are needed: on the UE10000 (6 GB,
page-cache misses ~140-230 pages/s) the back hand comes 8,192 pages (64 MB), ~35-60 s, after
the front one, and a whole turn takes one to one and a half hours. A cached page is
referenced about once in 7-20 minutes, so nearly every page is freed when the back hand
reaches it, whatever its hits: the replacement is in effect first in, first out, with a second
chance only for pages referenced within that short gap (an exact simulation of the clock on
this workload, veritas.io_config_by_sga round 9, is within 0.003 of FIFO). Freed pages keep
their identity on the cache list until reused (also in FIFO order), which adds only the free
reserve (lotsfree, 1/64 of memory) to the residence.

The OS keeps a reserve free for its page scanner (Solaris `lotsfree`, physmem/64; Linux keeps a
comparable min_free), so the page cache never gets that part. The SGA is locked (intimate shared
memory): a kernel plus SGA over RAM cannot start at all. Where an OS comes in 32- and 64-bit
flavours, the profile gives the kernel's footprint for each (memory.kernel, memory.kernel_64).
"""

from __future__ import annotations


PAGE = 4096.0
SWAP_CLUSTER = 8              # pages per swap-in read: Linux 2.4 page_cluster = 3 (2^3 pages of read-around)
FAULT_INSTRUCTIONS = 15_000.0 # estimate: kernel path of a major fault (trap, swap cache lookup, I/O set-up, map)
FREE_RESERVE_SHARE = 1.0 / 64.0   # Solaris lotsfree default: physmem / 64


class VirtualMemory:
    def __init__(self, env, spec, dispatcher=None, swap_device=None, kernel_bits: int = 32,
                 locks_shared_memory: bool = False, page_replacement: str = "lru"):
        self.env, self.spec = env, spec
        self.page_replacement = page_replacement   # which pages the page cache keeps: "lru" or "fifo" (above)
        # Solaris maps the SGA as intimate shared memory: allocated and locked whole at startup.
        # Linux SysV shared memory gets its pages on first touch.
        self.locks_shared_memory = locks_shared_memory
        self.ram, self.swap = spec.size, spec.swap
        self.kernel = spec.kernel_64 if kernel_bits == 64 and spec.kernel_64 is not None else spec.kernel
        self.dispatcher, self.swap_device = dispatcher, swap_device
        self.shared: dict[str, float] = {}
        self.kinds: dict[str, list[float]] = {}   # kind -> [count, private bytes each, working set each]
        self.page_ins = 0
        self.swap_reads = 0
        self._committed: float | None = None   # cached: asked once per transaction, changed at set-up
        # fires when the account first runs out (a process or segment added past RAM + swap, or an SGA past RAM):
        # a job that starts processes as it goes fails then, as a real one would (ENOMEM, or the OOM killer)
        self.exhausted = env.event()

    # ------------------------------------------------------------ the account

    def map_shared(self, name: str, resident: float) -> None:
        """A shared segment (the SGA), counted once however many processes map it."""
        self.shared[name] = float(resident)
        self._committed = None
        self._check()

    def add_processes(self, kind: str, count: int, private: float, working_set: float) -> None:
        """`count` more processes of a kind, each with `private` bytes of which `working_set`
        are touched every time it runs (O(1) whatever the count)."""
        entry = self.kinds.setdefault(kind, [0, float(private), float(min(working_set, private))])
        entry[0] += count
        self._committed = None
        self._check()

    def _check(self) -> None:
        if not self.exhausted.triggered and self.out_of_memory():
            self.exhausted.succeed()

    def committed(self) -> float:
        if self._committed is None:
            self._committed = self.kernel + sum(self.shared.values()) + sum(n * p for n, p, _w in self.kinds.values())
        return self._committed

    def page_cache_size(self) -> float:
        """Free memory, which the OS uses as its page cache (less the scanner's reserve)."""
        return max(0.0, self.ram - self.committed() - FREE_RESERVE_SHARE * self.ram)

    def overcommit(self) -> float:
        return max(0.0, self.committed() - self.ram)

    def out_of_memory(self) -> bool:
        locked = self.kernel + sum(self.shared.values())
        return locked > self.ram or self.committed() > self.ram + self.swap

    def working_set_out(self) -> float:
        """Fraction of a process's working set that is on swap when it wakes."""
        over = self.overcommit()
        cold = sum(n * (p - w) for n, p, w in self.kinds.values())
        hot = sum(n * w for n, _p, w in self.kinds.values())
        if over <= cold or hot <= 0.0:
            return 0.0
        return min(1.0, (over - cold) / hot)

    def describe(self) -> dict:
        """The account in MB, as `free -m` and a process listing would add it up."""
        mb = 1.0 / 2**20
        out = {"ram_mb": self.ram * mb, "swap_mb": self.swap * mb, "kernel_mb": self.kernel * mb}
        out.update({f"{k}_mb": v * mb for k, v in self.shared.items()})
        out.update({f"{k}_mb": n * p * mb for k, (n, p, _w) in self.kinds.items()})
        # committed + the scanner's free reserve + page cache = RAM (unless committed overruns it)
        reserve = min(FREE_RESERVE_SHARE * self.ram, max(0.0, self.ram - self.committed()))
        out.update({"committed_mb": self.committed() * mb, "free_reserve_mb": reserve * mb,
                    "page_cache_mb": self.page_cache_size() * mb,
                    "overcommit_mb": self.overcommit() * mb,
                    "working_set_paged_out_pct": 100.0 * self.working_set_out()})
        return out

    def shortfall_message(self) -> str:
        """What ran out, in MB with its parts: rounded to 0.1 GB the two sides had read the same ("committed memory
        22.0 GB exceeds RAM + swap 22.0 GB", 7,033 users on the opteron-2way, over by 0.4 MB)."""
        mb = 1.0 / 2**20
        parts = [("kernel", self.kernel)] + [(k.replace("_", " "), v) for k, v in self.shared.items()]
        locked = sum(v for _k, v in parts)
        if locked > self.ram:
            held = "locked in memory" if self.locks_shared_memory else "resident"   # (Solaris ISM; Linux SysV shm)
            return (f"kernel and SGA ({locked * mb:,.1f} MB, {held}: "
                    f"{', '.join(f'{k} {v * mb:,.1f}' for k, v in parts)}) exceed physical memory "
                    f"{self.ram * mb:,.1f} MB by {(locked - self.ram) * mb:,.1f} MB")
        parts += [(k.replace("_", " ") if n == 1 else f"{k.replace('_', ' ')} {n:,.0f} x {p * mb:,.2f} =", n * p)
                  for k, (n, p, _w) in self.kinds.items()]
        return (f"committed memory {self.committed() * mb:,.1f} MB exceeds RAM + swap "
                f"{(self.ram + self.swap) * mb:,.1f} MB by {(self.committed() - self.ram - self.swap) * mb:,.1f} MB "
                f"({', '.join(f'{k} {v * mb:,.1f}' for k, v in parts)})")

    # ------------------------------------------------------------ paging, as a process wakes

    def reset_stats(self) -> None:
        self.page_ins = self.swap_reads = 0

    def paging(self, span: float) -> dict:
        """vmstat's paging over a span: pages faulted in from swap a second; si, the KB/s read from swap, read-around
        included (Linux counts every page a swap read brings in, pswpin: the swap device's read MB/s); so, the KB/s
        kswapd writes out to make room for the faulted pages; and the clustered swap reads."""
        return {"page_ins_per_s": self.page_ins / span,
                "swap_in_kb_per_s": self.swap_reads * SWAP_CLUSTER * PAGE / 1024.0 / span,
                "swap_out_kb_per_s": self.page_ins * PAGE / 1024.0 / span,
                "swap_reads_per_s": self.swap_reads / span}

    def expected_faults(self, working_set: float) -> float:
        """Pages a waking process with this working set finds on swap, on average."""
        return self.working_set_out() * working_set / PAGE

    def page_in(self, working_set: float, owed: float = 0.0):
        """Generator: fault back the paged-out part of a waking process's working set (kernel CPU,
        then clustered reads from the swap device; the kernel writes as much out asynchronously).
        Whole pages: `owed`, the part of a page this process's last wake left, is added, and what is
        left this time is returned for its next wake, so that its faults average exactly the expected
        number (rounding each wake up made a process with 0.1 of a page out read a page from swap at
        every wake: ten times the faults where paging begins). Per process, so that one process's
        faults do not depend on the order in which the others wake."""
        due = owed + self.expected_faults(working_set)
        faults = int(due)
        if not faults:
            return due
        self.page_ins += faults
        if self.dispatcher is not None:
            yield self.dispatcher.run(faults * FAULT_INSTRUCTIONS, 1.0)
        if self.swap_device is not None:
            reads = -(-faults // SWAP_CLUSTER)
            for _ in range(reads):
                yield self.swap_device.submit("read", SWAP_CLUSTER * PAGE)
                self.swap_reads += 1   # (as each ends, as the device counts it)
            self.swap_device.submit("write", faults * PAGE)  # kswapd makes room: not waited for
        return due - faults
