"""Loopback ports for the suite's servers that nothing else can take meanwhile.

The product's ``free_port`` (teachd/teach/process.py) takes a port from
outside the kernel's ephemeral range, where the kernel never hands one out
by itself (a sample app's port, let go between tests, was taken by some
connection meanwhile: "Address already in use", stop 60's CI). The suite
also claims each port it took for the life of its process — a socket bound
to an abstract Unix name for it, which the kernel lets go when the process
ends, however it ends, and which no file or symlink can stand in for — so
that another xdist worker, or another run of the suite on the machine,
never takes the same one. A teach process the suite starts is given a
DevTools port from here (``Teach`` in tests/desktop.py), not its own pick.
"""

from __future__ import annotations

import socket

from teachd.teach import process

_held: list[socket.socket] = []  # the claims of the ports this process took, open for its life


def claim_name(port: int) -> str:
    return f"\0teachd-test-port-{port}"


def _take(port: int) -> bool:
    claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        claim.bind(claim_name(port))
    except OSError:  # another process of the suite has it
        claim.close()
        return False
    if not process.bindable(port):
        claim.close()
        return False
    _held.append(claim)
    return True


def free_port() -> int:
    """A loopback port outside the ephemeral range, free now, and this
    process's until it ends (nobody else in the suite takes it)."""
    return process.free_port(_take)
