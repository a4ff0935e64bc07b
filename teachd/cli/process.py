"""What a long-running process (``teachd serve``, ``teachd worker``) sets
for itself before it starts its threads."""

from __future__ import annotations

import ctypes
import ctypes.util

M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)
ARENAS = 2


def few_malloc_arenas() -> bool:
    """Ask glibc's malloc for at most ``ARENAS`` arenas, as MALLOC_ARENA_MAX=2
    would: by default every thread that allocates may get an arena of its
    own (up to 8 per core), and a daemon answering from a pool of worker
    threads fragments them — its memory rose about 2.4 MB a minute under the
    10-minute soak, its Python objects not at all (tracemalloc). With two
    arenas it rose half as fast and started 20 MB smaller (docs/benchmarks.md).
    Whether it was set: not on a libc without ``mallopt`` (macOS, musl)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = getattr(libc, "mallopt", None)
        return bool(mallopt is not None and mallopt(M_ARENA_MAX, ARENAS) == 1)
    except OSError:
        return False
