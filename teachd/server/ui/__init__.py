"""Helpers of the web UI (``teachd.server.pages``): pure functions the
templates use — schedules in plain words, the static files and their hashes,
the views of runs the pages show."""
