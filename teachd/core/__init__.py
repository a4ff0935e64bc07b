"""The leaf every other package stands on: what a skill, a version and an
approval are, the limits, the path and name rules, the SKILL.md fields, the
schedule specs and the errors. Pure rules over data; nothing here imports
the rest of teachd (import-linter holds it: ``make lint``)."""
