"""YAML bombs: a few hundred bytes of SKILL.md whose aliases expand to
millions of values. Every way a SKILL.md comes in — parse, validate, the
CLI's import, the daemon's import — refuses them quickly, stores nothing,
and keeps the daemon answering other people meanwhile."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from teachd.core.errors import InvalidSkill
from teachd.skills.skillmd import parse_skill_md, validate_skill_dir


def _levels(n: int, width: int = 9, leaf: str = '"lol"') -> str:
    lines = [f"  l0: &l0 [{', '.join([leaf] * width)}]"]
    lines += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, n)]
    return "\n".join(lines)


BOMBS = {
    "billion laughs (9 x 9 levels)": f"---\nname: bomb\ndescription: d\nmetadata:\n{_levels(9)}\n---\nbody\n",
    "doubling (2 x 30 levels)": f"---\nname: bomb\ndescription: d\nmetadata:\n{_levels(30, 2)}\n---\nbody\n",
    "in the description": "---\nname: bomb\nx: &a [" + ", ".join(['"' + "y" * 50 + '"'] * 9) + "]\n"
                          + "\n".join(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}" if i > 1 else "*a"] * 9) + "]"
                                      for i in range(1, 7)) + "\ndescription: d\n---\nbody\n",
    "a mapping merged into itself": "---\nname: bomb\ndescription: d\nmetadata:\n  a: &a {k: v}\n"
                                    + "".join(f"  b{i}: &b{i} {{<<: *{'a' if i == 0 else f'b{i - 1}'}, "
                                              f"c{i}: *{'a' if i == 0 else f'b{i - 1}'}}}\n" for i in range(40))
                                    + "---\nbody\n",
    "huge plain frontmatter": "---\nname: bomb\ndescription: d\nmetadata:\n  big: " + "z" * 200_000 + "\n---\nb\n",
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_yaml_bomb_is_refused_quickly_by_the_parser(name: str) -> None:
    started = time.monotonic()
    with pytest.raises(InvalidSkill, match="refused"):
        parse_skill_md(BOMBS[name])
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_yaml_bomb_fails_validation_in_one_line(name: str, tmp_path: Path) -> None:
    folder = tmp_path / "bomb"
    folder.mkdir()
    (folder / "SKILL.md").write_text(BOMBS[name])
    report = validate_skill_dir(folder)
    assert report.errors and any("refused" in e for e in report.errors)


def test_a_few_aliases_in_an_honest_frontmatter_still_load() -> None:
    doc = parse_skill_md("---\nname: ok\ndescription: &d Files receipts.\nmetadata:\n  summary: *d\n---\nb\n")
    assert doc.metadata["summary"] == "Files receipts."


@pytest.mark.parametrize("name", ["billion laughs (9 x 9 levels)", "doubling (2 x 30 levels)"])
def test_the_cli_import_of_a_bomb_stores_nothing(cli, tmp_path: Path, name: str) -> None:
    folder = tmp_path / "bomb"
    folder.mkdir()
    (folder / "SKILL.md").write_text(BOMBS[name])
    r = cli("skills", "import", str(folder))
    assert r.code != 0 and "refused" in r.err and "Traceback" not in r.err
    assert "no skills" in cli("skills", "list").out


def test_the_daemon_refuses_a_bomb_and_keeps_answering_others(tmp_path: Path) -> None:
    """While bombs arrive from one person, another person's requests are
    answered at once (parsing runs off the event loop, and stops early)."""
    from tests.security.daemon import running_daemon

    with running_daemon(tmp_path) as (api, _base):
        latencies: list[float] = []
        stop = threading.Event()

        def others() -> None:
            while not stop.is_set():
                t = time.monotonic()
                assert api.get("/api/skills").status_code == 200
                latencies.append(time.monotonic() - t)

        watcher = threading.Thread(target=others)
        watcher.start()
        try:
            for name in sorted(BOMBS):
                r = api.post("/api/skills/import", json={"skill_md": BOMBS[name], "folder": "bomb"})
                assert r.status_code == 422 and "refused" in r.json()["error"], (name, r.text)
        finally:
            stop.set()
            watcher.join()
        assert api.get("/api/skills").json() == []
        assert latencies and max(latencies) < 2.0
