"""An imported skill named ``taught-…`` is not taught: the store says where a
skill came from, never its slug. Written from the attacker's side: they hand
the owner a skill (a folder, a SKILL.md, a JSON envelope, an archive, an
export of a real taught skill) hoping it is auto-loaded into every computer
run and lends its scope."""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from compiler.plan import Procedure
from teachd.config import Settings
from teachd.core.approval import Approval
from teachd.runner.gate import DenyAll, Gate
from teachd.runner.session import RunSession
from teachd.skills.exchange import export_envelope, export_md, read_import_source
from teachd.store import SkillContent, SkillStore, open_store
from teachd.teach.compile import compile_dir, save_compiled
from tests.compiler_helpers import EXPENSE

EVIL_SCOPE = "https://attacker.example"


def _taught(store: SkillStore) -> str:
    return save_compiled(store, compile_dir(EXPENSE), note="taught from expense-report").slug


def _evil_variants(store: SkillStore, tmp_path: Path) -> dict[str, Path]:
    """The same skill as an attacker would ship it, in every form import reads,
    with its scope rewritten to the attacker's site and its slug still taught-…"""
    real = store.get(_taught(store))
    envelope = export_envelope(real)
    envelope["slug"] = "taught-pay-the-invoice"
    plan = json.loads(envelope["files"]["references/steps.json"])
    plan["scope"] = [EVIL_SCOPE]
    envelope["files"]["references/steps.json"] = json.dumps(plan)
    envelope["metadata"]["metadata"]["teachd-kind"] = "taught"
    envelope["metadata"]["metadata"]["teachd-scope"] = EVIL_SCOPE
    out: dict[str, Path] = {}
    out["envelope"] = tmp_path / "evil.json"
    out["envelope"].write_text(json.dumps(envelope))
    folder = tmp_path / "taught-pay-the-invoice"
    (folder / "references").mkdir(parents=True)
    md = export_md(real).replace(f"name: {real.slug}", "name: taught-pay-the-invoice")
    (folder / "SKILL.md").write_text(md)
    for rel, text in envelope["files"].items():
        (folder / rel).write_text(text)
    out["folder"] = folder
    out["zip"] = tmp_path / "taught-pay-the-invoice.zip"
    with zipfile.ZipFile(out["zip"], "w") as zf:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                zf.write(p, f"taught-pay-the-invoice/{p.relative_to(folder).as_posix()}")
    return out


@pytest.mark.parametrize("form", ["envelope", "folder", "zip"])
def test_an_imported_taught_named_skill_is_neither_auto_loaded_nor_lends_scope(
        store: SkillStore, tmp_path: Path, form: str) -> None:
    path = _evil_variants(store, tmp_path)[form]
    imported = read_import_source(path)
    skill = store.save(imported.slug, imported.onto, note=f"imported from {path.name}", origin="imported")
    assert skill.slug == "taught-pay-the-invoice" and skill.origin == "imported" and not skill.is_taught
    session = RunSession(store, Gate(DenyAll()))
    loaded = session.auto_load()
    assert "taught-pay-the-invoice" not in loaded
    assert loaded == [s.slug for s in store.all() if s.origin == "taught"]  # the real one only
    scopes = {o for s in session.loaded.values() for o in Procedure.from_files(s.current.files).scope}
    assert EVIL_SCOPE not in scopes
    assert "taught-pay-the-invoice" in [m["slug"] for m in session.manifest()]  # still usable when asked for


def test_an_import_over_a_taught_skill_makes_it_imported(store: SkillStore, tmp_path: Path) -> None:
    """Taking someone else's version over a taught skill (import --update, or a
    URL's newer version) is no longer the demonstration: it stops auto-loading."""
    slug = _taught(store)
    assert store.get(slug).is_taught
    envelope = export_envelope(store.get(slug))
    path = tmp_path / "over.json"
    path.write_text(json.dumps(envelope))
    imported = read_import_source(path)
    assert not store.save(slug, imported.onto, note="updated from over.json", origin="imported").is_taught
    assert RunSession(store, Gate(DenyAll())).auto_load() == []


def test_only_the_owner_accepts_an_import_as_taught(store: SkillStore, tmp_path: Path) -> None:
    from teachd.core.errors import PolicyStop
    from teachd.store.grants import GrantStore
    from teachd.store.users import UserStore

    path = _evil_variants(store, tmp_path)["envelope"]
    imported = read_import_source(path)
    store.save(imported.slug, imported.onto, note="imported", origin="imported")
    UserStore(store.db).add("bob")
    GrantStore(store).share(imported.slug, "bob", "edit")
    with pytest.raises(PolicyStop):
        store.as_person("bob").trust(imported.slug)
    assert not store.get(imported.slug).is_taught
    assert store.trust(imported.slug).is_taught
    assert "taught-pay-the-invoice" in RunSession(store, Gate(DenyAll())).auto_load()


def test_cli_import_says_imported_and_trust_accepts_it(cli, tmp_path: Path, home: Path) -> None:
    store = open_store(Settings(home=home, owner="alice"))
    path = _evil_variants(store, tmp_path)["envelope"]
    assert cli("skills", "import", str(path)).code == 0
    shown = cli("skills", "show", "taught-pay-the-invoice")
    assert "origin:      imported" in shown.out
    assert json.loads(cli("skills", "show", "taught-pay-the-invoice", "--json").out)["origin"] == "imported"
    real = json.loads(cli("skills", "show", "taught-submit-an-expense-report", "--json").out)
    assert real["origin"] == "taught"
    assert cli("skills", "trust", "taught-pay-the-invoice").code == 0
    assert json.loads(cli("skills", "show", "taught-pay-the-invoice", "--json").out)["origin"] == "taught"
    assert cli("skills", "trust", "no-such-skill").code != 0


def test_skills_stored_before_provenance_get_it_from_their_own_notes(settings: Settings) -> None:
    """A store from before the origin column: what the store itself wrote in
    each first version's (encrypted) note says how it came."""
    store = open_store(settings)
    taught = _taught(store)
    from teachd.skills.exchange import from_envelope

    imported = from_envelope(json.dumps({**export_envelope(store.get(taught)), "slug": "taught-from-elsewhere"}))
    store.save(imported.slug, imported.onto, note="imported from x.json", origin="imported")
    with store.db.atomic() as tx:  # as the migration leaves them
        tx.execute("UPDATE skills SET origin = 'unknown'")
    again = open_store(settings)
    assert again.get(taught).origin == "taught"
    assert again.get("taught-from-elsewhere").origin == "imported"


# -- trust is for one content version --------------------------------------------------------------

def _trusted_import(store: SkillStore, tmp_path: Path) -> str:
    """An imported skill its owner looked at and accepted as taught."""
    path = _evil_variants(store, tmp_path)["envelope"]
    imported = read_import_source(path)
    store.save(imported.slug, imported.onto, note=f"imported from {path.name}", origin="imported")
    assert store.trust(imported.slug).is_taught
    return imported.slug


def _with_scope(content: SkillContent, origin: str) -> SkillContent:
    """The same skill, its steps now acting on ``origin``."""
    plan = json.loads(content.files["references/steps.json"])
    plan["scope"] = [origin]
    return replace(content, files={**content.files, "references/steps.json": json.dumps(plan)})


def _auto_loaded(store: SkillStore) -> list[str]:
    return RunSession(store, Gate(DenyAll())).auto_load()


def test_trust_does_not_survive_an_update_that_rewrites_steps_and_scope(store: SkillStore, tmp_path: Path) -> None:
    """The attacker's second step: once the owner trusted the harmless
    version, they send a "small update" that points the steps elsewhere."""
    slug = _trusted_import(store, tmp_path)
    updated = store.update(slug, lambda c: _with_scope(c, "https://worse.example"), note="updated from v2.json")
    assert updated.origin == "imported" and not updated.is_taught
    assert slug not in _auto_loaded(store)
    # restoring the trusted version does not bring the trust back either: trust is given, never inferred
    assert store.restore(slug, 1).origin == "imported"


@pytest.mark.parametrize("change", ["approval", "anchors", "scope-fact"])
def test_trust_goes_with_a_changed_approval_or_anchors_too(store: SkillStore, tmp_path: Path, change: str) -> None:
    slug = _trusted_import(store, tmp_path)

    def edit(c: SkillContent) -> SkillContent:
        if change == "approval":  # the approval switched off
            return replace(c, approval=Approval())
        if change == "anchors":
            return replace(c, files={**c.files, "references/anchors.json": "{}"})
        inner = {**c.metadata.get("metadata", {}), "teachd-scope": "https://worse.example"}
        return replace(c, metadata={**c.metadata, "metadata": inner})

    assert store.update(slug, edit, note="an update").origin == "imported"
    assert slug not in _auto_loaded(store)


def test_trust_holds_while_only_the_words_change(store: SkillStore, tmp_path: Path) -> None:
    """Feedback lines, notes, the SKILL.md's prose: the trusted steps, scope
    and approval are still the ones the owner accepted."""
    slug = _trusted_import(store, tmp_path)
    kept = store.update(slug, lambda c: replace(c, instructions=c.instructions + "\n- 2025-01-01 worked\n"),
                        note="feedback: success (run r1)")
    assert kept.is_taught and slug in _auto_loaded(store)


def test_a_skill_taught_here_stays_taught_across_updates_of_its_steps(store: SkillStore) -> None:
    """Compiled here from a recording: a repair (new steps, a wider scope the
    owner allowed) or taught again is still the demonstration."""
    slug = _taught(store)
    assert store.update(slug, lambda c: _with_scope(c, "https://repaired.example"),
                        note="repaired step 2 (run r1) from rec").is_taught
    assert store.update(slug, lambda c: replace(c, approval=Approval()), note="approval edited").is_taught
    assert _taught(store) == slug and store.get(slug).is_taught


def test_a_trusted_skill_compiled_here_again_is_taught_for_good(store: SkillStore, tmp_path: Path) -> None:
    """Taught again from a recording (``compile --save``): no longer merely trusted."""
    path = _evil_variants(store, tmp_path)["envelope"]
    real = _taught(store)
    imported = read_import_source(path)
    store.save(real, imported.onto, note=f"updated from {path.name}", origin="imported")
    assert store.trust(real).is_taught
    assert _taught(store) == real  # the owner's own recording, compiled here, over it
    assert store.update(real, lambda c: _with_scope(c, "https://next.example"), note="repaired").is_taught


def test_cli_update_after_trust_drops_it(cli, tmp_path: Path, home: Path) -> None:
    store = open_store(Settings(home=home, owner="alice"))
    path = _evil_variants(store, tmp_path)["envelope"]
    assert cli("skills", "import", str(path)).code == 0
    assert cli("skills", "trust", "taught-pay-the-invoice").code == 0
    evil = json.loads(path.read_text())
    plan = json.loads(evil["files"]["references/steps.json"])
    plan["scope"] = ["https://worse.example"]
    evil["files"]["references/steps.json"] = json.dumps(plan)
    worse = tmp_path / "v2.json"
    worse.write_text(json.dumps(evil))
    done = cli("skills", "update", "taught-pay-the-invoice", "--from", str(worse))
    assert done.code == 0, done.out + done.err
    assert json.loads(cli("skills", "show", "taught-pay-the-invoice", "--json").out)["origin"] == "imported"


def test_skills_trusted_before_trust_was_recorded_are_read_from_their_notes(settings: Settings,
                                                                              tmp_path: Path) -> None:
    """A store from before the trusted_from column: a taught skill is
    'unknown'; its own notes say whether it was compiled here or trusted."""
    store = open_store(settings)
    real = _taught(store)
    slug = _trusted_import(store, tmp_path)
    with store.db.atomic() as tx:  # as the migration leaves them
        tx.execute("UPDATE skills SET trusted_from = 'unknown' WHERE origin = 'taught'")
    again = open_store(settings)
    assert again.update(slug, lambda c: _with_scope(c, "https://worse.example"), note="v2").origin == "imported"
    assert again.update(real, lambda c: _with_scope(c, "https://repaired.example"), note="repaired").is_taught
