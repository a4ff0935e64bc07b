"""Skills from URLs, behind the egress guard. The public internet is the one
thing that cannot exist here: tests reach a local TLS server only through an
injected resolver (public-looking names → public addresses) and dialler
(those addresses → the local server). The guard's policy is the real one."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from teachd.core.errors import BadInput, InvalidSkill, LimitExceeded, PolicyStop
from teachd.remote.addresses import literal_ip, name_refusal, refusal
from teachd.remote.egress import Egress, Limits
from teachd.remote.importer import import_url
from teachd.remote.sources import parse_source, resolve
from teachd.store import SkillStore
from tests.netfake import FakeInternet

SKILL = "---\nname: pdf-forms\ndescription: Fills PDF forms. Use when a form must be filled.\n---\n# PDF forms\n\nSee references/fields.md.\n"


@pytest.fixture
def net() -> Iterator[FakeInternet]:
    with FakeInternet() as fake:
        yield fake


REFUSED = ["127.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.0.0.1", "[::1]", "[::ffff:127.0.0.1]",
           "[::ffff:7f00:1]", "[::127.0.0.1]", "10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1",
           "169.254.169.254", "[fe80::1]", "224.0.0.1", "[ff02::1]", "0.0.0.0", "[::]", "[fc00::1]", "[fd12::1]",
           "[64:ff9b::7f00:1]", "[64:ff9b::a00:1]", "[2002:7f00:1::]", "[2002:c0a8:101::]", "198.18.0.1"]


@pytest.mark.parametrize("host", REFUSED)
def test_every_spelling_of_a_private_address_is_refused(host: str) -> None:
    ip = literal_ip(host)
    assert ip is not None and refusal(ip), host


@pytest.mark.parametrize("host", ["93.184.216.34", "[2606:4700::1111]", "[64:ff9b::5db8:d822]",
                                  "[2002:5db8:d822::]"])
def test_public_addresses_and_wrappings_of_public_ones_pass(host: str) -> None:
    ip = literal_ip(host)
    assert ip is not None and refusal(ip) is None


@pytest.mark.parametrize("host", ["localhost", "localhost.", "LOCALHOST", "api.localhost", "x.localhost."])
def test_localhost_names_are_refused_whatever_a_resolver_says(host: str) -> None:
    assert name_refusal(host) == "localhost"
    assert literal_ip("example.com") is None and name_refusal("example.com") is None


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f000001", "0177.0.0.1", "localhost.",
                                  "[::ffff:127.0.0.1]"])
def test_the_default_guard_refuses_the_local_server_by_any_spelling_without_connecting(net: FakeInternet,
                                                                                       host: str) -> None:
    net.text("127.0.0.1", "/SKILL.md", SKILL)
    with pytest.raises(PolicyStop, match="refused"):
        Egress().get(f"https://{host}:{net.port}/SKILL.md", 10_000)
    assert net.log == []


def test_a_dns_answer_mixing_public_and_private_addresses_is_refused(net: FakeInternet) -> None:
    net.text("skills.example", "/SKILL.md", SKILL)
    egress = net.egress({"skills.example": ["93.184.216.34", "10.0.0.7"]})
    with pytest.raises(PolicyStop, match=r"skills.example \(10.0.0.7\) is refused: a private address"):
        egress.get("https://skills.example/SKILL.md", 10_000)
    assert net.log == []


def test_the_guard_connects_to_the_checked_address_keeping_host_and_sni(net: FakeInternet) -> None:
    net.text("skills.example", "/x/SKILL.md", SKILL)
    egress = net.egress()
    got = egress.get("https://skills.example/x/SKILL.md", 10_000)
    assert got.body.decode() == SKILL
    assert net.log == [("skills.example", "/x/SKILL.md")] and net.sni == ["skills.example"]


def test_proxy_variables_are_ignored(net: FakeInternet, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")  # nothing listens there
    net.text("skills.example", "/SKILL.md", SKILL)
    assert net.egress().get("https://skills.example/SKILL.md", 10_000).body.decode() == SKILL


def test_redirects_are_checked_hop_by_hop(net: FakeInternet) -> None:
    net.text("skills.example", "/final/SKILL.md", SKILL)
    net.redirect("skills.example", "/ok", "https://skills.example/final/SKILL.md")
    net.redirect("skills.example", "/to-private", "https://10.0.0.8/SKILL.md")
    net.redirect("skills.example", "/to-http", "http://skills.example/final/SKILL.md")
    for i in range(7):
        net.redirect("skills.example", f"/loop{i}", f"https://skills.example/loop{i + 1}")
    egress = net.egress()
    assert egress.get("https://skills.example/ok", 10_000).url == "https://skills.example/final/SKILL.md"
    with pytest.raises(PolicyStop, match="a private address"):
        egress.get("https://skills.example/to-private", 10_000)
    with pytest.raises(PolicyStop, match="from https to"):
        egress.get("https://skills.example/to-http", 10_000)
    with pytest.raises(PolicyStop, match="more than 5 times"):
        egress.get("https://skills.example/loop0", 10_000)
    assert ("skills.example", "/loop5") in net.log and ("skills.example", "/loop6") not in net.log


def test_size_is_counted_on_raw_bytes_and_compressed_bodies_are_refused(net: FakeInternet) -> None:
    big = "---\n" + "x" * 300_000
    net.routes[("skills.example", "/big-no-length")] = lambda h: (200, {"Connection": "close"}, big.encode())
    net.text("skills.example", "/big", big)
    net.text("skills.example", "/gz", b"\x1f\x8b\x08\x00" + b"\x00" * 20, **{"Content-Encoding": "gzip"})
    egress = net.egress()
    with pytest.raises(LimitExceeded, match="over the 200000-byte limit"):
        egress.get("https://skills.example/big", 200_000)
    with pytest.raises(PolicyStop, match="gzip-compressed"):
        egress.get("https://skills.example/gz", 200_000)


def test_a_server_that_stalls_times_out(net: FakeInternet) -> None:
    import time

    def slow(h: object) -> tuple[int, dict[str, str], bytes]:
        time.sleep(2)
        return 200, {}, SKILL.encode()

    net.routes[("skills.example", "/slow")] = slow
    from teachd.core.errors import Unavailable

    with pytest.raises(Unavailable, match="timed out"):
        net.egress(limits=Limits(connect=1, read=0.5, deadline=5)).get("https://skills.example/slow", 10_000)


def test_only_http_and_https(net: FakeInternet) -> None:
    for url in ("file:///etc/passwd", "ftp://skills.example/SKILL.md", "gopher://x/"):
        with pytest.raises((PolicyStop, BadInput)):
            net.egress().get(url, 100)


# -- URL forms ----------------------------------------------------------------

REPO = {"README.md": "# tools\n", "skills/pdf-forms/SKILL.md": SKILL,
        "skills/pdf-forms/references/fields.md": "Fields.\n", "skills/pdf-forms/scripts/fill.py": "print(1)\n",
        "skills/pdf-forms/assets/logo.png": "PNG", "skills/other/SKILL.md": SKILL.replace("pdf-forms", "other")}


@pytest.mark.parametrize("given", [
    "https://skills.sh/acme/tools/pdf-forms",
    "acme/tools/pdf-forms",
    "https://github.com/acme/tools/tree/main/skills/pdf-forms",
    "https://github.com/acme/tools/blob/main/skills/pdf-forms/SKILL.md",
    "https://raw.githubusercontent.com/acme/tools/main/skills/pdf-forms/SKILL.md",
])
def test_every_url_form_resolves_to_the_skills_folder(net: FakeInternet, given: str) -> None:
    net.github_repo("acme", "tools", REPO)
    plan = resolve(net.egress(), parse_source(given))
    assert plan.origin == "acme/tools@main:skills/pdf-forms"
    assert [p for p, _, _ in plan.files] == ["SKILL.md", "references/fields.md", "scripts/fill.py"]
    assert plan.files[0][1] == "https://raw.githubusercontent.com/acme/tools/main/skills/pdf-forms/SKILL.md"
    assert plan.skipped == ["assets/logo.png (binary: skills hold text only)"]
    assert not any(path.startswith("/acme/tools/main/") for host, path in net.log
                   if host == "raw.githubusercontent.com")  # resolving fetched no file


def test_a_repository_link_needs_a_name_when_it_holds_several_skills(net: FakeInternet) -> None:
    net.github_repo("acme", "tools", REPO)
    with pytest.raises(BadInput, match="holds 2 skills; name one: acme/tools/other, acme/tools/pdf-forms"):
        resolve(net.egress(), parse_source("https://github.com/acme/tools"))
    net.github_repo("acme", "single", {"SKILL.md": SKILL, "notes.md": "n\n"})
    plan = resolve(net.egress(), parse_source("https://github.com/acme/single"))
    assert [p for p, _, _ in plan.files] == ["SKILL.md", "notes.md"]


@pytest.mark.parametrize("text", ["ftp://x/SKILL.md", "https://example.com/page", "just words", "a/b"])
def test_what_is_not_a_skill_address_is_said_in_one_line(text: str) -> None:
    with pytest.raises(BadInput, match="not a skill address|OWNER"):
        parse_source(text)


def test_html_where_a_skill_md_was_expected_is_refused(net: FakeInternet, store: SkillStore) -> None:
    net.text("skills.example", "/page/SKILL.md", "<!doctype html><html><body>Sign in</body></html>",
             content_type="text/html")
    with pytest.raises(InvalidSkill, match="a web page \\(HTML\\), not a SKILL.md"):
        import_url(store, net.egress(), "https://skills.example/page/SKILL.md")
    net.text("skills.example", "/bin/SKILL.md", b"---\n\x00\x01\x02", content_type="application/octet-stream")
    with pytest.raises(LimitExceeded, match="binary"):
        import_url(store, net.egress(), "https://skills.example/bin/SKILL.md")
    assert store.all() == []


# -- importing ---------------------------------------------------------------

def test_import_from_a_url_keeps_the_source_and_never_updates_silently(net: FakeInternet, cli, monkeypatch) -> None:
    from teachd.cli.app import App

    net.github_repo("acme", "tools", REPO)
    monkeypatch.setattr(App, "egress", property(lambda self: net.egress()))
    plan = cli("skills", "import", "acme/tools/pdf-forms", "--resolve-only")
    assert plan.code == 0 and "references/fields.md  ←  https://raw.githubusercontent.com/" in plan.out
    listed = cli("skills", "list", "--json")
    assert json.loads(listed.out) == [], (listed.out, listed.err)
    done = cli("skills", "import", "https://skills.sh/acme/tools/pdf-forms", "--json")
    assert done.code == 0, (done.out, done.err)
    assert json.loads(done.out)["action"] == "imported"
    shown = json.loads(cli("skills", "show", "pdf-forms", "--json").out)
    assert shown["files"] == ["references/fields.md", "scripts/fill.py"]
    assert shown["metadata"]["metadata"]["teachd-source"] == "https://skills.sh/acme/tools/pdf-forms"
    same = cli("skills", "import", "acme/tools/pdf-forms", "--json")
    assert same.code == 0, same.err
    assert json.loads(same.out)["action"] == "unchanged"
    net.github_repo("acme", "tools", {**REPO, "skills/pdf-forms/references/fields.md": "Fields, renamed.\n"})
    refused = cli("skills", "import", "acme/tools/pdf-forms")
    assert refused.code == 5 and "--update" in refused.err and "+Fields, renamed." in refused.err
    assert json.loads(cli("skills", "show", "pdf-forms", "--json").out)["version"] == 1
    taken = cli("skills", "import", "acme/tools/pdf-forms", "--update", "--json")
    assert json.loads(taken.out)["action"] == "updated" and json.loads(taken.out)["skill"]["version"] == 2


def test_a_real_name_that_is_not_a_slug_is_imported_under_a_derived_one(net: FakeInternet, cli,
                                                                        monkeypatch) -> None:
    from teachd.cli.app import App

    odd = "---\nname: MailerLite Automation\ndescription: Automates MailerLite. Use when mailing.\n---\nBody\n"
    net.text("skills.example", "/mailerlite/SKILL.md", odd)
    monkeypatch.setattr(App, "egress", property(lambda self: net.egress()))
    r = cli("skills", "import", "https://skills.example/mailerlite/SKILL.md", "--json")
    assert r.code == 0, r.err
    assert "warning: name 'MailerLite Automation' is not a valid skill name: imported as " \
           "'mailerlite-automation'" in r.err and r.err.count("\n") == 1
    shown = json.loads(cli("skills", "show", "mailerlite-automation", "--json").out)
    assert shown["name"] == "MailerLite Automation"


def test_the_daemon_imports_from_urls_behind_the_same_guard(env: dict[str, str], net: FakeInternet) -> None:
    """The web UI's form calls the API, which goes out through the default guard:
    the local server is refused by its loopback address, and nothing reached it."""
    from tests.test_server import serve

    net.text("127.0.0.1", "/SKILL.md", SKILL)
    daemon = serve(env)
    try:
        api = daemon.api()
        for url in (f"https://127.1:{net.port}/SKILL.md", f"https://[::ffff:127.0.0.1]:{net.port}/SKILL.md",
                    f"https://localhost.:{net.port}/SKILL.md"):
            r = api.post("/api/skills-from-url", json={"url": url})
            assert r.status_code == 403 and "refused" in r.json()["error"], r.text
        bad = api.post("/api/skills-from-url", json={"url": "not a url"})
        assert bad.status_code == 400 and "not a skill address" in bad.json()["error"]
        assert api.get("/api/skills").json() == []
    finally:
        assert daemon.stop() == 0
    assert net.log == []
