import os
import time

from teachd.teach.retention import purge_recordings


def test_old_recordings_are_purged_recent_ones_kept(tmp_path) -> None:
    old, new = tmp_path / "rec-old", tmp_path / "rec-new"
    for folder in (old, new):
        (folder / "frames").mkdir(parents=True)
        (folder / "events.jsonl").write_text("{}\n")
    past = time.time() - 15 * 86400
    for p in [old, *old.rglob("*")]:
        os.utime(p, (past, past))
    assert purge_recordings(tmp_path) == ["rec-old"]
    assert not old.exists() and new.exists()
    assert purge_recordings(tmp_path, days=0, now=time.time() + 60) == ["rec-new"]
