"""Every console sample in the documentation is produced or checked here, so
none can drift (issue 42). The samples are found on the pages: a fenced block
with lines starting with ``$ ``, named by a ``<!-- sample: NAME -->`` line
right before its fence (tests/docsamples.py: how a block is read, what is
normalised — times, ids, tokens, temp paths, ports — and nothing else). A
block no check below covers fails the first test, naming it.

How each block is checked (a fresh TEACHD_HOME for each):

- docs/skills.md#managing-skills, #skills-from-anywhere: every command run
  in-process and its output compared; the ``expenses`` folder is made as the
  sample implies; URLs go to the suite's GitHub-shaped fake internet
  (tests/netfake.py, as in tests/test_remote.py), a literal loopback address
  meets the default guard.
- docs/cli.md#teaching: the sample task taught once through ``teachd teach``
  exactly as the page's first line says (text output; Chromium headless over
  DevTools; the person played by the demo's script), then every command run
  in a copy of that home against the sample app — changed as the command's
  comment says — and compared. The page elides (``…``) what would bury the
  point: in the first run the plan's steps 9–17 and 19–27 and the progress
  lines of steps 4–27 (no more questions, each the plan's next step); in the
  reworded-labels run everything before its second question and the end of
  the refusal (the question again); in the unanswered run the plan. Those
  lines are produced and matched as "any lines" — the rest exactly.
- README.md#readme-example: the same teach (its line is cli.md's without
  --cdp-port and --headless, which change only the progress lines it
  elides), then its own run and feedback, compared.
- docs/schedules.md#schedules: the commands in-process; before ``schedule
  list`` (the page's narration: "with teachd serve running, and the app's
  sign-in page changed") the daemon's scheduler syncs the schedules and its
  health check fires at the app with its Sign in button gone.
- docs/daemon.md#serve: ``teachd serve`` as a process (on a free port), and
  the page's curl lines run by bash against it, compared.
- docs/teams.md#teams: commands without output, some for PostgreSQL or
  another machine: each ``teachd`` line parses; those that need neither run
  in order and succeed, and what their comments promise is checked.

Every ``teachd`` line of every block also parses against the real click
command (``make_context``, resilient parsing off).

``TEACHD_SAMPLES_OUT=FILE`` appends what each command really printed to FILE,
as a page shows it: a page that drifted is rewritten from there.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from teachd.cli import cli as root_group
from tests.docsamples import Block, Command, Invocation, console_blocks, differences, teachd_invocation
from tests.docsamples_run import (
    DOC_DAEMON,
    Output,
    TaughtHere,
    bash,
    check_block,
    daemon_as_written,
    health_check_on_a_changed_signin,
    home_copy,
    in_process,
    invoke,
    taught_runner,
    teach_as_written,
)

BLOCKS = {b.key: b for b in console_blocks()}
CHECKED = {  # page#marker → the test that checks it
    "README.md#readme-example": "test_readme_example",
    "docs/cli.md#teaching": "test_teaching_replaying_feedback",
    "docs/skills.md#managing-skills": "test_managing_skills",
    "docs/skills.md#skills-from-anywhere": "test_skills_from_anywhere",
    "docs/schedules.md#schedules": "test_schedules",
    "docs/daemon.md#serve": "test_serve_and_the_api",
    "docs/teams.md#teams": "test_teams_commands_parse_and_run",
    "docs/teams.md#workers": "test_the_workers_commands_parse",
}
needs_a_browser_or_a_daemon = pytest.mark.e2e  # out of `make test-fast` (tests/conftest.py's markers)


def block(key: str) -> Block:
    assert key in BLOCKS, f"no console block {key} on the pages"
    return BLOCKS[key]


def unchecked(blocks: list[Block], checked: dict[str, str]) -> list[str]:
    """What is wrong with the pages' console blocks and their checks, in words."""
    problems = [f"{b.where()}: no `<!-- sample: NAME -->` line right before its fence"
                for b in blocks if b.marker is None]
    keys = [b.key for b in blocks if b.marker]
    problems += [f"two blocks named {k}" for k in sorted({k for k in keys if keys.count(k) > 1})]
    problems += [f"{b.where()}: no test checks it (add one to tests/test_docs_samples.py)"
                 for b in blocks if b.marker and b.key not in checked]
    problems += [f"{k}: checked, but no longer on the pages" for k in sorted(set(checked) - set(keys))]
    return problems


def test_every_console_block_is_checked() -> None:
    problems = unchecked(console_blocks(), CHECKED)
    assert not problems, "\n".join(problems)
    assert all(name in globals() for name in CHECKED.values())


def test_a_new_sample_is_named_until_a_check_covers_it(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# x\n\n```\nmake test\n```\n", encoding="utf-8")
    (tmp_path / "docs" / "new.md").write_text(
        "# New\n\n- a step:\n\n  ```\n  $ teachd skills list\n  no skills\n  ```\n\n"
        "<!-- sample: named -->\n~~~\n$ teachd skills templates\n~~~\n", encoding="utf-8")
    found = console_blocks(tmp_path)
    assert [(b.page, b.marker, [c.line for c in b.commands]) for b in found] == [
        ("docs/new.md", None, ["teachd skills list"]), ("docs/new.md", "named", ["teachd skills templates"])]
    assert unchecked(found, {"docs/gone.md#old": "test_x"}) == [
        "docs/new.md:5 (no marker): no `<!-- sample: NAME -->` line right before its fence",
        "docs/new.md:11 (sample: named): no test checks it (add one to tests/test_docs_samples.py)",
        "docs/gone.md#old: checked, but no longer on the pages"]


def test_the_comparison_is_exact_but_for_what_varies() -> None:
    page = ["  v1    2026-11-30T04:46:37+00:00  ✓0 ✗0  taught from rec-20261130-080533-702783",
            "…   (anything)", "run run-…: aborted — not approved: step 7: …", "Compiling…"]
    now = ("  v1    2027-01-02T03:04:05+01:00  ✓0 ✗0  taught from rec-20270102-030405-abcdef\n"
           "one\ntwo\nrun run-20270102-030406-0a1b2c: aborted — not approved: step 7: the Amount field\n"
           "Compiling…\n")
    assert differences(page, now) is None
    assert differences(page[2:], "run run-x: aborted — not approved: step 7: …\nCompiling…\n") is None
    for drifted in (now.replace("✓0 ✗0", "✓0 ✗1"), now.replace("step 7", "step 8"), now + "more\n",
                    now.replace("Compiling…", "Compiling… done"), now.replace("  v1", " v1")):
        assert differences(page, drifted) is not None, drifted


def test_every_teachd_line_parses_against_the_real_command() -> None:
    bad = []
    for b in BLOCKS.values():
        for c in b.commands:
            inv = teachd_invocation(c.line)
            if inv is None:
                continue
            try:
                parsed(inv.argv)
            except click.ClickException as exc:
                bad.append(f"{b.page}:{c.lineno}: teachd {' '.join(inv.argv)}: {exc.format_message()}")
    assert not bad, "\n".join(bad)


def parsed(argv: list[str]) -> click.Context:
    """The command's context, as ``teachd ARGV`` parses it (no callback runs)."""
    cmd: click.Command = root_group
    name, args, parent = "teachd", list(argv), None
    while True:
        ctx = cmd.make_context(name, list(args), parent=parent, resilient_parsing=False)
        if not isinstance(cmd, click.Group):
            return ctx
        sub_name, sub, rest = cmd.resolve_command(ctx, args)  # no group option in the samples
        assert sub is not None and sub_name is not None
        cmd, name, args, parent = sub, sub_name, rest, ctx


# -- docs/skills.md ---------------------------------------------------------------------------------

# The folder the managing-skills sample starts from: a description with an unquoted ':' (invalid
# YAML, which validate reports and import and discovery repair), and the file its instructions cite.
EXPENSES_SKILL_MD = ("---\nname: expenses\n"
                     "description: Use when: the user sends receipts and wants an expense report filed\n---\n\n"
                     "# File an expense report\n"
                     "1. Open the expenses site. See references/fields.md for the form fields.\n")
EXPENSES_FIELDS = "- amount: the receipt total\n"


def test_managing_skills(env: dict[str, str], tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "expenses" / "references").mkdir(parents=True)
    (work / "expenses" / "SKILL.md").write_text(EXPENSES_SKILL_MD, encoding="utf-8")
    (work / "expenses" / "references" / "fields.md").write_text(EXPENSES_FIELDS, encoding="utf-8")
    check_block(block("docs/skills.md#managing-skills"), in_process(env, work))


def test_skills_from_anywhere(env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from teachd.cli.app import App
    from teachd.remote.egress import Egress
    from tests.netfake import FakeInternet
    from tests.test_remote import REPO

    with FakeInternet() as net:
        net.github_repo("acme", "tools", REPO)

        def run(c: Command, inv: Invocation | None) -> Output:
            assert inv is not None
            # names reach the fake GitHub; a literal address meets the default guard, as anywhere
            literal = re.match(r"https?://(\[|[\d.]+[:/])", inv.argv[-1])
            monkeypatch.setattr(App, "egress", property(lambda self: Egress() if literal else net.egress()))
            return invoke(env, inv, tmp_path)

        check_block(block("docs/skills.md#skills-from-anywhere"), run)


# -- what starts from the taught sample task --------------------------------------------------------

@pytest.fixture(scope="module")
def taught_here(tmp_path_factory: pytest.TempPathFactory) -> TaughtHere:
    """docs/cli.md's first line, run: the sample task taught through `teachd teach`."""
    return teach_as_written(block("docs/cli.md#teaching").commands[0].line, tmp_path_factory.mktemp("taught"))


@needs_a_browser_or_a_daemon
def test_teaching_replaying_feedback(taught_here: TaughtHere, tmp_path: Path) -> None:
    env = home_copy(taught_here, tmp_path)
    check_block(block("docs/cli.md#teaching"), taught_runner(taught_here, env, tmp_path))


@needs_a_browser_or_a_daemon
def test_readme_example(taught_here: TaughtHere, tmp_path: Path) -> None:
    """The README's teach line is docs/cli.md's less --cdp-port and --headless (which change
    only the progress lines the README elides): the module's teach stands for it. Its run gets
    --headless here (no window in a test); that changes nothing it prints."""
    env = home_copy(taught_here, tmp_path)
    taught_as = teachd_invocation(block("docs/cli.md#teaching").commands[0].line)
    assert taught_as is not None
    without_flags = list(taught_as.argv)
    del without_flags[without_flags.index("--cdp-port"):without_flags.index("--cdp-port") + 2]
    without_flags.remove("--headless")
    runner = taught_runner(taught_here, env, tmp_path)

    def run(c: Command, inv: Invocation | None) -> Output:
        assert inv is not None
        if inv.argv[0] == "teach":
            assert inv.argv == without_flags, "the README teaches otherwise than docs/cli.md"
        if inv.argv[0] == "run":
            inv.argv.append("--headless")
        return runner(c, inv)

    check_block(block("README.md#readme-example"), run)


@needs_a_browser_or_a_daemon
def test_schedules(taught_here: TaughtHere, tmp_path: Path) -> None:
    env = home_copy(taught_here, tmp_path)
    checked: list[str] = []

    def run(c: Command, inv: Invocation | None) -> Output:
        assert inv is not None
        if inv.argv[:2] == ["schedule", "list"] and not checked:
            # the narration: "with teachd serve running, and the app's sign-in page changed (its
            # button gone)" — the health check is schedule 2, the page's second command
            health_check_on_a_changed_signin(taught_here, env, 2)
            checked.append(c.line)
        return invoke(env, inv, tmp_path)

    check_block(block("docs/schedules.md#schedules"), run)


@needs_a_browser_or_a_daemon
def test_serve_and_the_api(taught_here: TaughtHere, tmp_path: Path) -> None:
    env = home_copy(taught_here, tmp_path)
    commands = block("docs/daemon.md#serve").commands
    first = teachd_invocation(commands[0].line)
    assert first is not None and first.argv == ["serve"], commands[0].line
    with daemon_as_written(env, first) as (said, port):

        def run(c: Command, inv: Invocation | None) -> Output:
            if c is commands[0]:
                return said  # the daemon's first line; it goes on serving
            assert inv is None, c.line
            return bash(c.line.replace(DOC_DAEMON, f"127.0.0.1:{port}"), env)

        check_block(block("docs/daemon.md#serve"), run)


def test_the_workers_commands_parse() -> None:
    """The run queue's commands need a team's PostgreSQL and run until stopped
    (tests/test_queue.py runs each for real): here each line is a command
    teachd knows, with options it takes."""
    from teachd.cli import cli

    seen = []
    for c in block("docs/teams.md#workers").commands:
        assert not c.expected, f"docs/teams.md:{c.lineno}: output shown: check it as the other samples are"
        inv = teachd_invocation(c.line)
        if inv is None:
            assert c.line.startswith("export "), c.line
            continue
        name, *args = inv.argv
        command = cli.get_command(click.Context(cli), name)
        assert command is not None, f"docs/teams.md:{c.lineno}: no command {name}"
        command.make_context(name, list(args))  # a usage error raises here
        seen.append(name)
    assert sorted(set(seen)) == ["serve", "worker", "workers"], seen


# Lines of the teams sample that are not run here, and why (each teachd line still parses).
NOT_RUN = {
    "export TEACHD_DB_URL=": "PostgreSQL: the lines below run here on the embedded SQLite store "
                             "(tests/test_teams.py runs them on both engines)",
    "scp ": "another machine's key file",
    "teachd serve ": "a daemon that runs until stopped: docs/daemon.md's sample starts one",
    "teachd mcp ": "an MCP server on stdio, waiting for its agent: tests/test_mcp.py drives one",
}


@needs_a_browser_or_a_daemon
def test_teams_commands_parse_and_run(taught_here: TaughtHere, tmp_path: Path) -> None:
    """A list of commands with no output shown: each line that needs neither PostgreSQL, nor
    another machine, nor a client to talk to runs, in order, and succeeds; what the comments
    promise of their output is checked."""
    env = home_copy(taught_here, tmp_path)
    said: dict[str, str] = {}
    for c in block("docs/teams.md#teams").commands:
        assert not c.expected, f"docs/teams.md:{c.lineno}: output shown: check it as the other samples are"
        if any(c.line.startswith(prefix) for prefix in NOT_RUN):
            continue
        inv = teachd_invocation(c.line)
        assert inv is not None, f"docs/teams.md:{c.lineno}: say in NOT_RUN why it is not run: {c.line}"
        got = invoke(env, inv, tmp_path)
        assert got.code == 0, f"docs/teams.md:{c.lineno}: $ {c.line}\n{got.shown}"
        said[" ".join(inv.argv)] = got.shown
    # "prints bob's token, once"
    assert re.fullmatch(r"bob's token \(shown once; [^\n]*\):\n[A-Za-z0-9_-]{32,}\n", said["users add bob"])
    # "gone from their manifests now": what stays shared is bob's own grant
    assert said["skills unshare taught-file-a-report-and-add-approvers --with @finance"].endswith(
        "shared with: bob (edit)\n")
