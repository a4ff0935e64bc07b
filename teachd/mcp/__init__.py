"""teachd as an MCP server: any agent loads taught skills and acts on the
computer through the same gate and scope guard as ``teachd run``.

    server.py    the MCP server, one per process: its sessions, and the tools, resources, prompts it serves
    tools.py     the tools (load_skill, computer_act, …), one function each, listed in TOOLS
    resources.py the skill:// resources: listed, and read as read_skill_file reads
    prompts.py   the skill:<slug> prompts (/skill:<slug> [args]): listed, and got as load_skill loads
    session.py   one MCP session = one recorded run: its loaded skills, gate, browser
    acts.py      ``computer_act``: the actions, their targets, their descriptions
    worker.py    the thread that owns the session's Chromium (Playwright's sync API)
    approver.py  asking the person: MCP elicitation, else the daemon's Approvals page
"""
