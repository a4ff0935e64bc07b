"""Agent runs on the Work computer: which skills a run loads, the approval
gate every gated tool call passes, the scope guard, and the replay executor.

Only ``replay.py`` imports Playwright, and only when a replay starts.
"""
