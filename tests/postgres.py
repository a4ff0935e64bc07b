"""A throwaway PostgreSQL cluster for the tests: Debian's ``postgresql``
binaries, ``initdb`` into a temporary folder, ``pg_ctl`` on a free loopback
port, stopped and removed afterwards. As root, the server runs as the
``postgres`` user (PostgreSQL refuses root)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.desktop import free_port
from tests.programs import need


def _bin(name: str) -> str:
    """Debian's PostgreSQL binary (in its versioned folder), or the test fails naming the package."""
    return need(name)


class Cluster(str):
    """The cluster's URL (a str), with its data folder: what it writes to disk."""

    data: Path
    ctl: list[str]  # pg_ctl for this cluster, as the user it runs as

    def stop(self) -> None:
        """The server goes away under its clients (an admin's restart, a crash)."""
        subprocess.run([*self.ctl, "-m", "fast", "-w", "stop"], check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        subprocess.run([*self.ctl, "-w", "start"], check=True, capture_output=True, timeout=60)

    def written(self) -> bytes:
        """Every byte of the cluster's files, after a checkpoint (so the tables are on disk too)."""
        import psycopg

        with psycopg.connect(str(self), autocommit=True) as conn:
            conn.execute("CHECKPOINT")
        return b"".join(p.read_bytes() for p in sorted(self.data.rglob("*")) if p.is_file())


@contextmanager
def postgres_cluster() -> Iterator[Cluster]:
    """Yields a postgresql:// URL for a fresh database on loopback."""
    root = Path(tempfile.mkdtemp(prefix="teachd-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    if as_root:
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
    port = free_port()
    run = dict(check=True, capture_output=True, text=True, timeout=120)
    subprocess.run([*prefix, _bin("initdb"), "-D", str(data), "-U", "teachd", "--auth=trust",
                    "--no-sync", "-E", "UTF8"], **run)  # type: ignore[call-overload]
    opts = f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*prefix, _bin("pg_ctl"), "-D", str(data), "-o", opts, "-w", "-l", str(root / "log"),
                    "start"], **run)  # type: ignore[call-overload]
    cluster = Cluster(f"postgresql://teachd@127.0.0.1:{port}/postgres")
    cluster.data = data
    cluster.ctl = [*prefix, _bin("pg_ctl"), "-D", str(data), "-o", opts, "-l", str(root / "log")]
    try:
        yield cluster
    finally:
        subprocess.run([*prefix, _bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """A new, empty database in the cluster: one per test."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"
