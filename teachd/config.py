"""Where teachd keeps its state, and the user's settings.

The one reader of the environment: ``settings_from_env`` runs once at the CLI
edge and everything below gets what it needs from ``Settings``.

    TEACHD_HOME      state folder (key, database, recordings, config.yaml)
    TEACHD_OWNER     whose skills (default: the login name)
    TEACHD_DB_URL    a team store: postgresql://… (default: SQLite in TEACHD_HOME)
    TEACHD_KEY       the store's key (64 hex digits), instead of TEACHD_HOME/key
    TEACHD_CHROMIUM  the Chromium to drive (default /usr/bin/chromium)
    DISPLAY          the X display a visible browser shows on
    TEACHD_SECRET_*  secrets for a replay (read when a step needs one)
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
import yaml

from teachd.core import yamlsafe
from teachd.core.errors import BadInput, InvalidSkill


@dataclass(frozen=True)
class Settings:
    home: Path
    owner: str
    db_url: str | None = None
    skill_dirs: tuple[Path, ...] = ()
    sources: Mapping[str, bool] = field(default_factory=dict)
    include: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    profiles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    chromium: str | None = None
    display: str | None = None
    key_env: str | None = field(default=None, repr=False)  # TEACHD_KEY: the key itself, instead of the file
    retention_days: float = 14.0  # raw recordings older than this are purged (the daemon, daily)
    skills_enabled: bool = True  # config.yaml skills.enabled: false → discovery loads nothing
    skill_levels: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)  # skills.<provider>.<level>
    skill_commands: bool = True  # config.yaml skills.enableSkillCommands: false → no /skill: prompts
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)  # for child processes
    # may this person's runs reach the daemon host's loopback and private network? Only its owner's
    # (and the local user's): another person's settings say no (teachd.runner.secret_desk.person_settings),
    # and every browser a run opens holds to it (teachd.runner.policy)
    host_network: bool = True
    # config.yaml team_origins: places on the daemon host's network the owner lets every person's
    # runs reach (a team's own app beside the daemon); nothing else local is theirs
    team_origins: frozenset[str] = frozenset()
    # on the team store, the runs a daemon takes from the run queue itself (teachd serve --slots,
    # TEACHD_SLOTS); None: as many as a worker would (teachd.queue.worker.default_slots); 0: none
    slots: int | None = None

    def secret_from_env(self, name: str) -> tuple[str, str | None]:
        """(variable name, value) of ``TEACHD_SECRET_<NAME>``."""
        var = "TEACHD_SECRET_" + "".join(c if c.isalnum() else "_" for c in name).upper()
        return var, self.environ.get(var) or None

    @property
    def key_path(self) -> Path:
        return self.home / "key"

    @property
    def db_path(self) -> Path:
        return self.home / "teachd.db"

    @property
    def recordings_dir(self) -> Path:
        return self.home / "recordings"


def settings_from_env(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    home = Path(env.get("TEACHD_HOME") or platformdirs.user_data_dir("teachd")).expanduser()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    owner = env.get("TEACHD_OWNER") or _login()
    conf = _load_config(home / "config.yaml")
    return Settings(
        home=home,
        owner=owner,
        db_url=env.get("TEACHD_DB_URL") or None,
        skill_dirs=tuple(Path(p).expanduser() for p in conf.get("skill_dirs", []) or []),
        sources={str(k): bool(v) for k, v in (conf.get("sources") or {}).items()},
        include=tuple(str(g) for g in conf.get("include", []) or []),
        ignore=tuple(str(g) for g in conf.get("ignore", []) or []),
        profiles={str(k): tuple(str(s) for s in (v or [])) for k, v in (conf.get("profiles") or {}).items()},
        key_env=env.get("TEACHD_KEY") or None,
        retention_days=_days(conf.get("retention_days", 14)),
        team_origins=_origins(conf.get("team_origins")),
        **_skills_switches(conf.get("skills")),
        chromium=env.get("TEACHD_CHROMIUM") or None,
        display=env.get("DISPLAY") or None,
        slots=_slots(env.get("TEACHD_SLOTS")),
        environ=dict(env),
    )


def _slots(text: str | None) -> int | None:
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        raise BadInput(f"TEACHD_SLOTS must be a whole number of runs, not {text!r}") from None
    if value < 0:
        raise BadInput("TEACHD_SLOTS must be 0 or more")
    return value


def _skills_switches(section: Any) -> dict[str, Any]:
    """config.yaml ``skills: {enabled: bool, enableSkillCommands: bool,
    <provider>: {user: bool, project: bool}}``."""
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise BadInput("config.yaml: skills must be a mapping")
    enabled, commands = section.get("enabled", True), section.get("enableSkillCommands", True)
    if not isinstance(enabled, bool) or not isinstance(commands, bool):
        raise BadInput("config.yaml: skills.enabled and skills.enableSkillCommands must be true or false")
    levels: dict[str, dict[str, bool]] = {}
    for provider, switches in section.items():
        if provider in ("enabled", "enableSkillCommands"):
            continue
        if not isinstance(switches, dict) or not all(k in ("user", "project") and isinstance(v, bool)
                                                     for k, v in switches.items()):
            raise BadInput(f"config.yaml: skills.{provider} takes user: and project: true/false")
        levels[str(provider)] = dict(switches)
    return {"skills_enabled": enabled, "skill_levels": levels, "skill_commands": commands}


def _origins(value: Any) -> frozenset[str]:
    """config.yaml ``team_origins``: a list of http(s) origins, read as the browser reads them."""
    from compiler.scope import origin_of

    if value is None:
        return frozenset()
    if not isinstance(value, list):
        raise BadInput("config.yaml team_origins must be a list of http(s) origins")
    out = set()
    for item in value:
        origin = origin_of(str(item)) if str(item).lower().startswith(("http://", "https://")) else None
        if origin is None:
            raise BadInput(f"config.yaml team_origins: {item!r} is not an http(s) origin")
        out.add(origin)
    return frozenset(out)


def _days(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise BadInput(f"config.yaml: retention_days must be a positive number of days, not {value!r}")
    return float(value)


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry in some containers
        return "owner"


def _load_config(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = yamlsafe.load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, InvalidSkill) as exc:
        raise BadInput(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BadInput(f"{path} must be a YAML mapping")
    return data
