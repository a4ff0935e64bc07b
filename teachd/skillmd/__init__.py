"""The SKILL.md format: tolerant parsing (as a runtime loads), strict
validation (as CI checks) and block-style serialization (what we write).

Pure functions over text; the only I/O is reading the files being validated.
"""

from teachd.skillmd.parse import SkillDoc, parse_skill_md, split_frontmatter
from teachd.skillmd.render import render_skill_md
from teachd.skillmd.validate import ValidationReport, find_skill_dirs, validate_skill_dir

__all__ = [
    "SkillDoc",
    "ValidationReport",
    "find_skill_dirs",
    "parse_skill_md",
    "render_skill_md",
    "split_frontmatter",
    "validate_skill_dir",
]
