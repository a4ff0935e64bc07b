"""The SKILL.md format: tolerant parsing (as a runtime loads), strict
validation (as CI checks) and block-style serialization (what we write).

Pure functions over text; the only I/O is reading the files being validated.
"""

from teachd.skills.skillmd.parse import SkillDoc, parse_skill_md, split_frontmatter
from teachd.skills.skillmd.validate import ValidationReport, find_skill_dirs, validate_skill_dir
from teachd.skills.skillmd.write import render_skill_md

__all__ = [
    "SkillDoc",
    "ValidationReport",
    "find_skill_dirs",
    "parse_skill_md",
    "render_skill_md",
    "split_frontmatter",
    "validate_skill_dir",
]
