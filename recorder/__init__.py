"""Capture of a demonstration: browser pages and targets, desktop input,
screen crops, into a crash-safe append-only Recording (format v1).

Imports Playwright and pynput only when a recording starts.
"""

__version__ = "0.1.0"
