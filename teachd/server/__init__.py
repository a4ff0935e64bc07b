"""The daemon: `teachd serve` — web UI and HTTP API, behind one security guard."""
