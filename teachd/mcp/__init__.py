"""teachd as an MCP server: any agent loads taught skills and acts on the
computer through the same gate and scope guard as ``teachd run``.

    server.py    the MCP server (tools, resources, prompts), one per process
    session.py   one MCP session = one recorded run: its loaded skills, gate, browser
    acts.py      ``computer_act``: the actions, their targets, their descriptions
    worker.py    the thread that owns the session's Chromium (Playwright's sync API)
    approver.py  asking the person: MCP elicitation, else the daemon's Approvals page
"""
