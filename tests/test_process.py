"""A long-running teachd process keeps glibc's malloc to two arenas
(teachd/cli/process.py): threads that allocate at once share them instead of
each fragmenting one of its own. Counted by glibc itself (``malloc_info``),
with a control that shows the count differs without it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROBE = r"""
import ctypes, ctypes.util, sys, tempfile, threading
if sys.argv[1] == "few":
    from teachd.cli.process import few_malloc_arenas
    assert few_malloc_arenas()
held, barrier = [], threading.Barrier(8)
def work():
    barrier.wait()
    held.append([bytearray(200) for _ in range(20000)])
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.fopen.restype = ctypes.c_void_p
path = tempfile.mktemp()
f = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, ctypes.c_void_p(f))
libc.fclose(ctypes.c_void_p(f))
print(open(path).read().count("<heap nr="))
"""


def _arenas(how: str) -> int:
    done = subprocess.run([sys.executable, "-c", PROBE, how], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parent.parent, check=True)
    return int(done.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc (Debian, as CI is)")
def test_eight_threads_allocating_at_once_share_two_malloc_arenas() -> None:
    assert _arenas("few") <= 2
    assert _arenas("default") > 2  # the control: without it, the threads make arenas of their own
