from teachd.core.history import append_history, history_line, mark_validated


def test_appends_to_existing_history_section() -> None:
    body = "# T\n\nValidation: not yet replayed.\n\n## History\n"
    out = append_history(body, history_line("2026-11-30", "success", "run-1"))
    assert out == "# T\n\nValidation: not yet replayed.\n\n## History\n\n- 2026-11-30 — success — run run-1\n"
    out2 = append_history(out, history_line("2026-12-01", "failure", "ext:42", "button moved"))
    assert out2.endswith("- 2026-11-30 — success — run run-1\n- 2026-12-01 — failure — run ext:42 — button moved\n")


def test_creates_history_when_missing_and_keeps_later_sections() -> None:
    assert append_history("# T\nbody", "- x").endswith("body\n\n## History\n\n- x\n")
    body = "# T\n## History\n- a\n\n## Notes\nkeep me\n"
    assert append_history(body, "- b") == "# T\n## History\n- a\n- b\n\n## Notes\nkeep me\n"


def test_notes_are_masked_and_validation_line_updates() -> None:
    line = history_line("2026-11-30", "success", "r", "used ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8")
    assert "ghp_" not in line and "[masked]" in line
    assert mark_validated("a\nValidation: not yet replayed.\nb", "2026-11-30", "r1") == (
        "a\nValidation: replayed successfully on 2026-11-30 (run r1).\nb")


def test_the_history_reads_back_as_a_timeline_newest_first_with_a_persons_own_lines_kept() -> None:
    from teachd.core.history import history_entries

    body = append_history("# X\n\nDo it.\n\n## History\n\n- taught on 2026-11-30\n",
                          history_line("2026-12-01", "success", "run-1"))
    body = append_history(body, history_line("2026-12-02", "failure", "mcp:7", "wrong — group"))
    body += "\n## Notes\n\n- not history\n"
    entries = history_entries(body)
    assert [(e["date"], e["outcome"], e["run"], e["note"]) for e in entries] == [
        ("2026-12-02", "failure", "mcp:7", "wrong — group"), ("2026-12-01", "success", "run-1", None),
        (None, None, None, None)]
    assert entries[-1]["text"] == "taught on 2026-11-30" and history_entries("# no history\n") == []
