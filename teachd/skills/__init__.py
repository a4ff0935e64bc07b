"""Skills as files: the SKILL.md format, folders and bundled files, approvals and
History, discovery on disk, ``skill://`` URLs and the exchange forms."""
