"""The sample app's second task, "Publish a post", taught once per test
session through the real recorder (the person played over DevTools), and a
fresh copy of that teachd home per test, as tests/sample_task.py does for the
first task."""

from __future__ import annotations

from pathlib import Path

from tests.drift_suite import POSTS_SLUG, Taught, replay_cli, teach_posts_task
from tests.sample_task import APPROVE_ALL, PASSWORD, copy_home, teach_sample

__all__ = ["PASSWORD", "POSTS_SLUG", "copy_home", "replay_posts", "teach_posts"]


def teach_posts(base: Path) -> Taught:
    return teach_sample(base, teach_posts_task)


def replay_posts(env: dict[str, str], *args: str) -> tuple[int, dict, str]:
    """``teachd run taught-publish-a-post --headless --json`` with every approval granted."""
    return replay_cli(env, *args, password=PASSWORD, approvals=APPROVE_ALL, slug=POSTS_SLUG)
