"""Runs on many machines: on the team store (PostgreSQL) a replay is a job
on a procrastinate queue in the same database, taken by ``teachd worker``
processes on any machine; on the embedded default (SQLite) it runs in the
daemon's process, as before. The daemon, the Runs page and a schedule
submit runs the same way (``submit.py``); what a worker does with one is
``execute.py``; a worker that died is found by its heartbeat (``sweep.py``)."""
