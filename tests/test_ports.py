"""The suite's own ports: never from the kernel's ephemeral range, never one
another process of the suite holds (see tests/ports.py for why)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from teachd.core.errors import Failed
from teachd.teach import process
from tests import ports


def test_ports_come_from_the_larger_stretch_outside_the_ephemeral_range() -> None:
    assert process.ephemeral_range("32768\t60999\n") == (32768, 60999)
    assert process.ephemeral_range("garbage") == (32768, 60999)
    assert process.port_candidates(32768, 60999) == range(10_000, 32768)
    assert process.port_candidates(15000, 50000) == range(50001, 65536)
    low, high = process.ephemeral_range()
    assert not low <= process.free_port() <= high  # the product's own, as the demo takes its app's
    with pytest.raises(Failed):  # 10080 free, and nothing else: a browser would refuse to load a page there
        process.free_port(lambda p: p == 10080)
    assert process.free_port(lambda p: p in (10080, 10081)) == 10081


def test_a_port_handed_out_is_outside_the_ephemeral_range_and_held_by_its_process() -> None:
    low, high = process.ephemeral_range()
    mine = {ports.free_port() for _ in range(20)}
    assert len(mine) == 20 and not any(low <= p <= high for p in mine)
    held = subprocess.run(
        [sys.executable, "-c", "import socket, sys\n"
         "from tests.ports import claim_name\n"
         "for p in map(int, sys.argv[1:]):\n"
         "    s = socket.socket(socket.AF_UNIX)\n"
         "    try: s.bind(claim_name(p)); print('took', p)\n"
         "    except OSError: pass\n", *map(str, mine)],
        capture_output=True, text=True, check=True, timeout=60)
    assert held.stdout == ""  # another process of the suite can take none of them


def test_a_machine_whose_ephemeral_range_leaves_too_few_ports_gets_the_kernels_choice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ip_local_port_range "1024 65535" (a common tuning) leaves nothing
    outside it from 10000 up: the kernel's pick, as before, not a crash."""
    monkeypatch.setattr(process, "ephemeral_range", lambda read=None: (1024, 65535))
    assert process.port_candidates(1024, 65535) == range(10_000, 10_000)
    assert 1024 <= process.free_port() <= 65535
    assert 1024 <= ports.free_port() <= 65535
