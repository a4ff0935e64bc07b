"""The scheduler inside ``teachd serve``: scheduled runs, health checks and
retention, on APScheduler, its jobs kept in the store's own database.

    specs.py     a schedule as data: ``--cron`` / ``--every``, its trigger, missed runs (pure)
    jobstore.py  APScheduler's job store over teachd's ``Database`` (SQLite or PostgreSQL)
    health.py    the read-only probe: resolve anchors, never act
    service.py   the scheduler's life in the daemon: one per deployment, the jobs it fires
"""
