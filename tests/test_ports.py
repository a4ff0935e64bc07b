"""The suite's own ports: never from the kernel's ephemeral range, never one
another process of the suite holds (see tests/ports.py for why)."""

from __future__ import annotations

import subprocess
import sys

from teachd.teach import process
from tests import ports


def test_ports_come_from_the_larger_stretch_outside_the_ephemeral_range() -> None:
    assert process.ephemeral_range("32768\t60999\n") == (32768, 60999)
    assert process.ephemeral_range("garbage") == (32768, 60999)
    assert process.port_candidates(32768, 60999) == range(10_000, 32768)
    assert process.port_candidates(15000, 50000) == range(50001, 65536)
    low, high = process.ephemeral_range()
    assert not low <= process.free_port() <= high  # the product's own, as the demo takes its app's


def test_a_port_handed_out_is_outside_the_ephemeral_range_and_held_by_its_process() -> None:
    low, high = process.ephemeral_range()
    mine = {ports.free_port() for _ in range(20)}
    assert len(mine) == 20 and not any(low <= p <= high for p in mine)
    held = subprocess.run(
        [sys.executable, "-c", "import fcntl, sys\n"
         "from tests.ports import LOCKS\n"
         "for p in map(int, sys.argv[1:]):\n"
         "    with open(LOCKS / f'{p}.lock', 'ab') as h:\n"
         "        try: fcntl.flock(h, fcntl.LOCK_EX | fcntl.LOCK_NB); print('took', p)\n"
         "        except OSError: pass\n", *map(str, mine)],
        capture_output=True, text=True, check=True, timeout=60)
    assert held.stdout == ""  # another process of the suite can take none of them
