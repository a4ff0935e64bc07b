"""teachd: show the computer a task once, get a taught Agent Skill.

Public surface: the ``teachd`` command (``teachd.cli``), the store
(``teachd.store.open_store``) and the SKILL.md format (``teachd.skills.skillmd``).
Everything else is private to the package.
"""

__version__ = "0.1.0"
