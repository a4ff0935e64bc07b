"""Named schema migrations, applied once each and recorded in ``migrations``.

Kept to portable SQL, so that the PostgreSQL backend (store/postgres.py) applies
the same list, with BLOB as BYTEA. Append new migrations; never edit an
applied one.
"""

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_skills",
        """
        CREATE TABLE skills (
            owner TEXT NOT NULL,
            slug TEXT NOT NULL,
            enabled INTEGER NOT NULL DEFAULT 1,
            current_version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (owner, slug)
        );
        CREATE TABLE skill_versions (
            owner TEXT NOT NULL,
            slug TEXT NOT NULL,
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            name BLOB NOT NULL,
            description BLOB NOT NULL,
            instructions BLOB NOT NULL,
            files BLOB NOT NULL,
            approval BLOB NOT NULL,
            metadata BLOB NOT NULL,
            note BLOB NOT NULL,
            PRIMARY KEY (owner, slug, version),
            FOREIGN KEY (owner, slug) REFERENCES skills (owner, slug) ON DELETE CASCADE
        );
        CREATE TABLE keycheck (
            id INTEGER PRIMARY KEY,
            blob BLOB NOT NULL
        )
        """,
    ),
]

MIGRATIONS.append(
    (
        "0002_runs_feedback_rules",
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            status TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            skills TEXT NOT NULL,
            detail BLOB NOT NULL
        );
        CREATE TABLE feedback (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            owner TEXT NOT NULL,
            slug TEXT NOT NULL,
            version INTEGER NOT NULL,
            run_ref TEXT NOT NULL,
            outcome TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE approval_rules (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            owner TEXT NOT NULL,
            tool TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (owner, tool)
        )
        """,
    )
)

MIGRATIONS.append(
    (
        "0003_pending_approvals",
        # Requests waiting for a person, in the database so that any process
        # (the daemon, ``teachd mcp``, a scheduled run) can ask and the
        # daemon's Approvals page can answer. The request text is sealed.
        """
        CREATE TABLE pending_approvals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            owner TEXT NOT NULL,
            run_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            request BLOB NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending'
        )
        """,
    )
)

MIGRATIONS.append(
    (
        "0004_schedules_health",
        # Schedules (what the person asked for), the scheduler's own jobs (when
        # each fires next: APScheduler's state, so a restart keeps it) and the
        # last health check of each skill. Parameters are sealed.
        """
        CREATE TABLE schedules (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            owner TEXT NOT NULL,
            slug TEXT NOT NULL,
            kind TEXT NOT NULL,
            cron TEXT,
            every_s INTEGER,
            params BLOB NOT NULL,
            profile TEXT,
            timeout_s INTEGER NOT NULL,
            paused INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            last_at TEXT,
            last_run_id TEXT,
            last_outcome TEXT,
            last_note TEXT
        );
        CREATE TABLE scheduler_jobs (
            id TEXT PRIMARY KEY,
            next_run_time DOUBLE PRECISION,
            job_state BLOB NOT NULL
        );
        CREATE TABLE skill_health (
            owner TEXT NOT NULL,
            slug TEXT NOT NULL,
            checked_at TEXT NOT NULL,
            ok INTEGER NOT NULL,
            step INTEGER,
            reason TEXT,
            report TEXT NOT NULL,
            PRIMARY KEY (owner, slug)
        )
        """,
    )
)

MIGRATIONS.append(
    (
        "0005_profiles",
        # Assistant profiles: a name binding a subset of the owner's skills;
        # a run, MCP session or schedule with the profile sees exactly those.
        """
        CREATE TABLE profiles (
            owner TEXT NOT NULL,
            name TEXT NOT NULL,
            slug TEXT NOT NULL,
            added_at TEXT NOT NULL,
            PRIMARY KEY (owner, name, slug)
        )
        """,
    )
)

MIGRATIONS.append(
    (
        "0006_people_grants",
        # People with their own daemon tokens (only a token's SHA-256 is kept),
        # groups of them, and grants: a skill shared with a person or a
        # ``@group``, to ``use`` or to ``edit``. Feedback remembers whose skill
        # it was, so the owner's version counts include a grantee's clicks.
        """
        CREATE TABLE users (
            name TEXT PRIMARY KEY,
            token_sha256 TEXT UNIQUE,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        );
        CREATE TABLE user_groups (
            name TEXT PRIMARY KEY,
            created_at TEXT NOT NULL
        );
        CREATE TABLE group_members (
            grp TEXT NOT NULL,
            member TEXT NOT NULL,
            added_at TEXT NOT NULL,
            PRIMARY KEY (grp, member)
        );
        CREATE TABLE grants (
            owner TEXT NOT NULL,
            slug TEXT NOT NULL,
            grantee TEXT NOT NULL,
            can TEXT NOT NULL,
            granted_at TEXT NOT NULL,
            PRIMARY KEY (owner, slug, grantee)
        );
        CREATE INDEX grants_by_grantee ON grants (grantee);
        CREATE INDEX group_members_by_member ON group_members (member);
        ALTER TABLE feedback ADD COLUMN skill_owner TEXT
        """,
    )
)

MIGRATIONS.append(
    (
        "0007_skill_origin",
        # Where a skill came from, recorded by the store (never read from its
        # slug): taught (compiled here from a recording, or an imported one its
        # owner accepted as taught), imported, created. Only taught skills are
        # auto-loaded and lend their scope. Skills stored before this column
        # are 'unknown' until the store reads their history (store/origins.py).
        """
        ALTER TABLE skills ADD COLUMN origin TEXT NOT NULL DEFAULT 'unknown'
        """,
    )
)

MIGRATIONS.append(
    (
        "0008_run_pictures",
        # What the run page shows of each step: the target before it was acted
        # on and the page after (JPEG, secrets painted over by the browser),
        # sealed like a run's detail; who cancelled a run (it stops between
        # steps, in whichever process runs it); a schedule's start address.
        """
        CREATE TABLE run_pictures (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            owner TEXT NOT NULL,
            run_id TEXT NOT NULL,
            n INTEGER NOT NULL,
            kind TEXT NOT NULL,
            image BLOB NOT NULL
        );
        CREATE INDEX run_pictures_run ON run_pictures (owner, run_id, n, kind);
        ALTER TABLE runs ADD COLUMN cancelled_by TEXT;
        ALTER TABLE schedules ADD COLUMN start_url TEXT
        """,
    )
)

MIGRATIONS.append(
    (
        "0009_run_runner",
        # Which process runs a run (host:pid): a daemon that starts again after
        # a kill ends the runs whose process is gone, as aborted (store/orphans.py).
        """
        ALTER TABLE runs ADD COLUMN runner TEXT
        """,
    )
)

MIGRATIONS.append(
    (
        "0010_store_revision",
        # Moved on by every write that can change a manifest (store/revision.py).
        """
        CREATE TABLE store_revision (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
        INSERT INTO store_revision (id, n) VALUES (1, 0)
        """,
    )
)

MIGRATIONS.append(
    (
        "0011_store_changes",
        # Which skill each move of the store's revision changed (none: a grant
        # or a group): a manifest reads again only those (store/revision.py).
        """
        CREATE TABLE store_changes (n INTEGER PRIMARY KEY, owner TEXT, slug TEXT)
        """,
    )
)

MIGRATIONS.append(
    (
        "0012_skill_trust",
        # What a skill was before its owner accepted it as taught (``skills
        # trust``): trust is for one content version, and a new version whose
        # steps, scope or approval differ goes back to this origin. NULL: not
        # trusted (compiled here, or not taught). Taught skills stored before
        # this column are 'unknown' until the store reads their notes
        # (store/skills.py, at their next version).
        """
        ALTER TABLE skills ADD COLUMN trusted_from TEXT;
        UPDATE skills SET trusted_from = 'unknown' WHERE origin = 'taught'
        """,
    )
)

MIGRATIONS.append(
    (
        "0013_approval_point",
        # Where a person showed a halted step's target on the page's picture
        # ("x,y", fractions of its width and height): the answer to a request
        # that asks where (runner/gate.py, ``Gate.point``). NULL for the rest.
        """
        ALTER TABLE pending_approvals ADD COLUMN answer TEXT
        """,
    )
)

MIGRATIONS.append(
    (
        "0014_workers",
        # The machines that take runs from the queue (``teachd worker``, on the
        # team store): what each can run, its slots, its last heartbeat, and
        # the runs it has now (store/workers.py).
        """
        CREATE TABLE workers (
            name TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            runner TEXT NOT NULL,
            slots INTEGER NOT NULL,
            can TEXT NOT NULL,
            state TEXT NOT NULL,
            started_at TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            running TEXT NOT NULL
        )
        """,
    )
)

MIGRATIONS.append(
    (
        "0015_read_indexes",
        # The reads every page and click makes, by what they ask: a skill's ✓/✗
        # (its feedback by slug and version), a click already given (by its run),
        # a person's runs newest first, the running runs the sweeps look for.
        # Without them each was a scan of a table that grows with every run.
        """
        CREATE INDEX feedback_by_skill ON feedback (slug, version);
        CREATE INDEX feedback_by_run ON feedback (owner, run_ref);
        CREATE INDEX runs_by_owner ON runs (owner, started_at);
        CREATE INDEX runs_by_status ON runs (status)
        """,
    )
)

MIGRATIONS.append(
    (
        "0016_safe_to_repeat",
        # The owner's mark that a skill may be run again by itself when its
        # run was interrupted (its worker died): what it writes is safe to
        # write twice. The store's own record, never read from the skill's
        # text, as its origin is (queue/sweep.py).
        """
        ALTER TABLE skills ADD COLUMN repeatable INTEGER NOT NULL DEFAULT 0
        """,
    )
)

MIGRATIONS.append(
    (
        "0017_runs_at_once",
        # The owner's limit on a skill's runs at the same time, across all the
        # people who run it (NULL: none of its own; each person's 3 lanes
        # apply). Taken from the store's record when a run is queued.
        """
        ALTER TABLE skills ADD COLUMN at_once INTEGER
        """,
    )
)

MIGRATIONS.append(
    (
        "0018_secret_asks",
        # A secret a run on a worker asks its person for (store/secret_asks.py):
        # the question, the worker's public key for it and the question sealed
        # with the store's key (``proof``: only a key holder asks), and — once
        # the person typed it on a daemon's page — the value sealed to that
        # public key and then with the store's. Deleted once taken, withdrawn
        # or ended.
        """
        CREATE TABLE secret_asks (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            run_id TEXT NOT NULL,
            name TEXT NOT NULL,
            skills TEXT NOT NULL,
            reader BLOB NOT NULL,
            proof BLOB NOT NULL,
            sealed BLOB,
            created_at TEXT NOT NULL
        );
        CREATE INDEX secret_asks_by_owner ON secret_asks (owner, run_id)
        """,
    )
)
