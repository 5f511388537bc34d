"""Memory as an account, and the OS page cache it leaves.

Physical memory holds the kernel, Oracle's SGA (locked: intimate shared memory is never
paged), every Oracle process's private memory, and whatever is left is the page cache, which
caches file blocks for buffered file systems and Cached Quick I/O. Solaris keeps `lotsfree`
(1/64 of memory) free for the page scanner, so the cache never gets that part.

- Kernel and SGA over physical memory, or everything over memory + swap: the instance cannot
  start (out of memory, a result).
- Processes over what the SGA leaves: their pages go to swap and the page cache shrinks to
  its floor (the result notes the overcommit).

A 64-bit kernel keeps 64-bit pointers in its page structures, hash tables and caches; its
footprint is taken as KERNEL_64_GROWTH times the 32-bit one (estimate: pointer-heavy kernel
data roughly doubles, text and buffers do not).
"""

from __future__ import annotations

from dataclasses import dataclass

LOTSFREE_SHARE = 1.0 / 64.0   # Solaris lotsfree default: physmem / 64
KERNEL_64_GROWTH = 1.25       # estimate, see the module docstring


@dataclass(frozen=True)
class MemoryAccount:
    physical: float
    swap: float
    kernel: float
    sga: float
    processes: float

    @property
    def page_cache(self) -> float:
        """Bytes of file cache the OS can keep."""
        free = self.physical - self.kernel - self.sga - self.processes
        return max(free - LOTSFREE_SHARE * self.physical, 0.0)

    @property
    def overcommit(self) -> float:
        """Bytes of process memory that do not fit in RAM and live in swap."""
        return max(self.kernel + self.sga + self.processes - self.physical, 0.0)

    def refusal(self) -> str | None:
        """Why the instance cannot start, or None."""
        if self.kernel + self.sga > self.physical:
            return (f"SGA of {self.sga / 2**30:.2f} GB plus kernel {self.kernel / 2**30:.2f} GB exceed physical "
                    f"memory {self.physical / 2**30:.2f} GB (the SGA is locked in memory)")
        if self.kernel + self.sga + self.processes > self.physical + self.swap:
            return (f"SGA, processes and kernel need {(self.kernel + self.sga + self.processes) / 2**30:.2f} GB; "
                    f"memory + swap is {(self.physical + self.swap) / 2**30:.2f} GB")
        return None


def account(physical: float, swap: float, kernel_32: float, kernel_bits: int, sga: float,
            processes: int, per_process: float) -> MemoryAccount:
    kernel = kernel_32 * (KERNEL_64_GROWTH if kernel_bits == 64 else 1.0)
    return MemoryAccount(physical, swap, kernel, sga, processes * per_process)
