"""Skills from elsewhere: every byte from the network comes through one guard.

    addresses.py  which addresses may be reached: the globally routable ones (pure)
    egress.py     the guard: resolve once, check every address, connect to the checked one,
                  follow redirects itself, count raw bytes, keep to the deadline
    sources.py    the URL forms (skills.sh, GitHub repo/tree/blob, owner/repo/skill, a
                  SKILL.md link) → a plan of files → the files
"""
