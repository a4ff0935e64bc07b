"""Capture of a demonstration: browser pages and targets, desktop input,
screen crops, into a crash-safe append-only Recording (format v1)."""
