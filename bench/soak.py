"""A soak of one daemon: ``teachd serve`` on PostgreSQL, three people, API
clients reading and writing at once, MCP sessions opening, acting,
cancelling and closing, two schedules firing every minute — for minutes, on
this machine's cores. Judged by what the store and the machine say after.

    .venv/bin/python bench/soak.py [--minutes 10] [--clients 20] [--workers 1] [--replay-every 30]

With ``--workers N`` (the default, 1) the daemon takes no runs itself
(``--slots 0``): N ``teachd worker`` processes take the schedules' health
checks and a replay of the sample task put on the run queue every
``--replay-every`` seconds, answered by alice at the daemon — runs off the
request path. ``--workers 0``: the daemon runs them itself.

Prints a table (per route: calls, p50, p99, 5xx) and the checks: 0
responses 5xx; every acknowledged write is a version (none lost, none
doubled); the daemon's RSS after warm-up within 15 % of its first reading;
Chromium back to none after every MCP session and at the end.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachd.config import Settings  # noqa: E402
from teachd.demo.sampleapp import SampleApp  # noqa: E402
from teachd.demo.sampleapp.judge import teachd_env  # noqa: E402
from teachd.store import SkillContent, open_store  # noqa: E402
from teachd.store.runs import RunStore  # noqa: E402
from teachd.store.users import UserStore  # noqa: E402
from tests.drift_suite import SLUG, teach_task  # noqa: E402
from tests.people import PersonAtTheDaemon  # noqa: E402
from tests.postgres import fresh_database, postgres_cluster  # noqa: E402
from tests.security.daemon import chromiums_under  # noqa: E402
from tests.test_server import serve  # noqa: E402

PASSWORD = "bench-soak-Pw-1"
PEOPLE = ("alice", "bob", "carol")
WARM_UP = 120.0  # seconds before the RSS baseline is taken
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "soak", "version": "1"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Tally:
    """Latency and status per route, and every write the daemon acknowledged."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ms: dict[str, list[float]] = collections.defaultdict(list)
        self.at: dict[str, list[float]] = collections.defaultdict(list)  # when each call began (monotonic)
        self.errors: dict[str, int] = collections.Counter()
        self.acked: dict[tuple[str, str], int] = collections.Counter()  # (person, slug) → new versions
        self.notes: list[str] = []

    def call(self, route: str, c: httpx.Client, method: str, url: str, **kw: Any) -> httpx.Response | None:
        """One request, timed under ``route`` (its URL's template)."""
        t = time.perf_counter()
        try:
            r = c.request(method, url, **kw)
        except httpx.HTTPError as exc:
            with self.lock:
                self.errors[route] += 1
                self.notes.append(f"{route}: {type(exc).__name__}")
            return None
        with self.lock:
            self.ms[route].append((time.perf_counter() - t) * 1000)
            self.at[route].append(t)
            if r.status_code >= 500:
                self.errors[route] += 1
                self.notes.append(f"{route}: {r.status_code} {r.text[:120]}")
        return r


def print_by_minute(tally: Tally, route: str) -> None:
    """The route's calls, p50 and p99 minute by minute: whether the daemon
    slows as the store grows (thousands of versions and clicks a skill)."""
    if not tally.at[route]:
        return
    first = min(tally.at[route])
    minutes: dict[int, list[float]] = collections.defaultdict(list)
    for began, ms in zip(tally.at[route], tally.ms[route], strict=True):
        minutes[int((began - first) // 60)].append(ms)
    print(f"\n{route}, minute by minute: " + "; ".join(
        f"{m}: {len(v)} calls, p50 {statistics.median(v):.0f}, p99 {sorted(v)[int(len(v) * 0.99)]:.0f}"
        for m, v in sorted(minutes.items())))


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def api_client(base: str, token: str, tally: Tally, person: str, slugs: list[str], stop: float) -> None:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        while time.monotonic() < stop:
            slug = random.choice(slugs)
            op = random.random()
            if op < 0.4:
                tally.call("GET /api/skills", c, "GET", "/api/skills")
            elif op < 0.7:
                tally.call("GET /api/skills/{slug}", c, "GET", f"/api/skills/{slug}")
            elif op < 0.85:
                outcome = random.choice(["success", "failure"])
                r = tally.call("POST /api/runs/{ref}/feedback", c, "POST",
                               f"/api/runs/soak-{uuid.uuid4().hex[:12]}/feedback",
                               json={"slug": slug, "outcome": outcome})
                if r is not None and r.status_code == 200 and r.json().get("recorded"):
                    with tally.lock:
                        tally.acked[(person, slug)] += 1
            else:
                r = tally.call("PUT /api/skills/{slug}/files/{path}", c, "PUT",
                               f"/api/skills/{slug}/files/references/soak-{random.randrange(4)}.md",
                               json={"text": f"edited {uuid.uuid4().hex}\n"})
                if r is not None and r.status_code == 200:
                    with tally.lock:
                        tally.acked[(person, slug)] += 1


def mcp_call(tally: Tally, route: str, c: httpx.Client, n: int, arguments: dict[str, Any]) -> None:
    tally.call(route, c, "POST", "/mcp", json={"jsonrpc": "2.0", "id": n, "method": "tools/call",
                                               "params": {"name": "computer_act", "arguments": arguments}})


def mcp_sessions(base: str, tokens: dict[str, str], app_url: str, daemon_pid: int, tally: Tally,
                 stop: float, leaks: list[str]) -> int:
    """Sessions one after another, alice's and bob's in turn: open; act — bob
    takes a snapshot, alice's goto waits on the Approvals page (her taught
    skill asks) and is cancelled a second later; close (DELETE). The
    session's browser must be gone within 20 s."""
    sessions = 0
    for person in itertools.cycle(("alice", "bob")):
        if time.monotonic() >= stop:
            break
        auth = {"Authorization": f"Bearer {tokens[person]}", **MCP_HEADERS}
        with httpx.Client(base_url=base, headers=auth, timeout=60) as c:
            r = tally.call("POST /mcp initialize", c, "POST", "/mcp", json=INIT)
            if r is None or r.status_code != 200:
                time.sleep(1)
                continue
            c.headers.update({"Mcp-Session-Id": r.headers["mcp-session-id"],
                              "MCP-Protocol-Version": "2025-11-25"})
            c.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            if person == "bob":
                mcp_call(tally, "POST /mcp computer_act", c, 2, {"action": "snapshot"})
            else:
                goto = {"action": "goto", "url": f"{app_url}/login"}
                asked = threading.Thread(target=mcp_call, daemon=True,
                                         args=(tally, "POST /mcp computer_act (cancelled)", c, 3, goto))
                asked.start()
                time.sleep(1.0)
                c.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": 3, "reason": "soak"}})
                asked.join(30)
            tally.call("DELETE /mcp", c, "DELETE", "/mcp")
        sessions += 1
        deadline = time.monotonic() + 20
        while chromiums_under(daemon_pid) > schedule_browsers_allowance() and time.monotonic() < deadline:
            time.sleep(0.5)
        if chromiums_under(daemon_pid) > schedule_browsers_allowance():
            leaks.append(f"session {sessions}: {chromiums_under(daemon_pid)} browsers 20 s after it closed")
    return sessions


def worker_home(root: Path, i: int) -> Path:
    """A worker's home of its own (another machine's: the DSN and the key are all it shares)."""
    made = root / f"worker-{i}"
    made.mkdir(mode=0o700, exist_ok=True)
    return made


def key_hex(home: Path) -> str:
    from teachd.store.crypto import read_key

    return read_key(home / "key").hex()


def queued_replays(base: str, token: str, every: float, stop: float, replays: list[str]) -> None:
    """A replay of the sample task on the run queue every ``every`` seconds,
    alice at the daemon answering what it asks."""
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c, \
            PersonAtTheDaemon(c, [], {}):
        while time.monotonic() < stop:
            r = c.post("/api/runs", json={"slug": SLUG, "params": {"amount": f"{len(replays) + 1}.00"}})
            if r.status_code == 200:
                replays.append(r.json()["run_id"])
            time.sleep(every)
        deadline = time.monotonic() + 120  # the last ones end (or are answered) before the daemon stops
        while time.monotonic() < deadline and any(
                c.get(f"/api/runs/{r}").json()["status"] == "running" for r in replays):
            time.sleep(1)


def schedule_browsers_allowance() -> int:
    """A scheduled health check may hold a browser of its own at any moment (two schedules)."""
    return 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--warm-up", type=float, default=WARM_UP, help="seconds before the RSS baseline")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (0: the daemon runs the runs)")
    ap.add_argument("--replay-every", type=float, default=30.0, help="seconds between queued replays")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="teachd-soak-"))
    with postgres_cluster() as cluster:
        url = fresh_database(cluster, "soak")
        home, user = root / "home", root / "user"
        home.mkdir(mode=0o700)
        user.mkdir()
        env = {**teachd_env(home, user), "TEACHD_DB_URL": url}
        env.pop("DISPLAY", None)  # headless browsers: a soak has no one watching
        taught = teach_task(home, PASSWORD, env)
        store = open_store(Settings(home=home, owner="alice", db_url=url))
        tokens = {p: UserStore(store.db).add(p) for p in PEOPLE[1:]}
        slugs: dict[str, list[str]] = {}
        for person in PEOPLE:
            mine = store if person == "alice" else store.as_person(person)
            slugs[person] = [f"{person}-soak-{i}" for i in range(4)]
            for slug in slugs[person]:
                mine.create(slug, SkillContent(name=slug, description=f"A soak skill of {person}.",
                                               instructions=f"# {slug}\n\nDo it.\n"))
        before = {(p, s): len((store if p == "alice" else store.as_person(p)).versions(s))
                  for p in PEOPLE for s in slugs[p]}
        with SampleApp(password=PASSWORD, port=taught.port) as app:
            server = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD},
                           *(("--slots", "0") if args.workers else ()))
            tokens["alice"] = server.token
            worker = [sys.executable, "-m", "teachd", "worker", "--slots", "1", "--can", "secrets"]
            secret = {"TEACHD_SECRET_PASSWORD": PASSWORD, "TEACHD_KEY": key_hex(home)}
            fleet = [subprocess.Popen(worker, env={**env, "TEACHD_HOME": str(worker_home(root, i)), **secret},
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                     for i in range(args.workers)]
            pid = server.proc.pid
            tally = Tally()
            leaks: list[str] = []
            try:
                with server.api() as api:
                    for _ in range(2):
                        r = api.post("/api/schedules", json={"slug": SLUG, "every": "1m", "check": True})
                        assert r.status_code == 200, r.text
                started = time.monotonic()
                stop = started + args.minutes * 60
                workers = [threading.Thread(target=api_client, daemon=True,
                                            args=(server.url, tokens[p], tally, p, slugs[p], stop))
                           for p, _ in zip(itertools.cycle(PEOPLE), range(args.clients), strict=False)]
                replays: list[str] = []
                workers.append(threading.Thread(target=queued_replays, daemon=True, args=(
                    server.url, server.token, args.replay_every, stop, replays)))
                sessions_done: list[int] = []
                workers.append(threading.Thread(target=lambda: sessions_done.append(mcp_sessions(
                    server.url, tokens, app.url, pid, tally, stop, leaks)), daemon=True))
                for w in workers:
                    w.start()
                rss: list[tuple[float, int]] = []
                while time.monotonic() < stop:
                    rss.append((time.monotonic() - started, rss_kb(pid)))
                    time.sleep(15)
                for w in workers:
                    w.join(120)
                time.sleep(5)
                end_browsers = 0
                for _ in range(60):  # the last health check may be under way: let it end
                    end_browsers = chromiums_under(pid)
                    if end_browsers == 0:
                        break
                    time.sleep(1)
                with server.api() as api:
                    checks = [s.get("last_outcome") for s in api.get("/api/schedules").json()]
            finally:
                for proc in fleet:
                    proc.send_signal(signal.SIGTERM)
                for proc in fleet:
                    proc.wait(120)
                server.stop()
            replayed = [RunStore(store).one(r)["status"] for r in replays]
        after = {(p, s): len((store if p == "alice" else store.as_person(p)).versions(s))
                 for p in PEOPLE for s in slugs[p]}
    lost = {k: (before[k] + tally.acked[k], after[k]) for k in before
            if before[k] + tally.acked[k] != after[k]}
    warm = [kb for t, kb in rss if t >= args.warm_up] or [kb for _t, kb in rss]
    growth = (max(warm) - warm[0]) / warm[0] * 100 if warm else 0.0
    print(f"{'route':<38} {'calls':>7} {'p50 ms':>8} {'p99 ms':>8} {'5xx':>5}")
    for route in sorted(tally.ms):
        times = sorted(tally.ms[route])
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        p50 = statistics.median(times)
        print(f"{route:<38} {len(times):>7} {p50:>8.1f} {p99:>8.1f} {tally.errors[route]:>5}")
    print_by_minute(tally, "GET /api/skills")
    print(f"\nminutes {args.minutes:g}, API clients {args.clients}, people {len(PEOPLE)}, "
          f"MCP sessions {sum(sessions_done)}, schedules 2 (every 1m, health checks; outcomes {checks})")
    print(f"replays put on the run queue: {len(replays)}, taken by {args.workers or 'the daemon'} "
          f"worker(s): {dict(collections.Counter(replayed))}")
    print(f"responses 5xx or failed: {sum(tally.errors.values())}")
    print(f"acknowledged writes {sum(tally.acked.values())}; "
          f"versions lost or doubled: {len(lost)} {lost or ''}")
    print(f"daemon RSS: first after warm-up {warm[0] / 1024:.0f} MB, highest {max(warm) / 1024:.0f} MB "
          f"(+{growth:.1f} %); samples {[round(kb / 1024) for _t, kb in rss]}")
    print(f"browsers left after sessions: {len(leaks)} {leaks[:3]}; at the end: {end_browsers}")
    for note in tally.notes[:10]:
        print("  ", note)
    ok = not tally.errors and not lost and growth <= 15 and not leaks and end_browsers == 0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
