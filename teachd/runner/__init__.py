"""Agent runs on the Work computer: which skills a run loads, the approval
gate every gated tool call passes, the scope guard, and the replay executor.

Playwright is imported at module level only by the modules that drive a
browser: the replay executor (``replay.py`` and the parts it is made of,
``locate.py``, ``perform.py`` and ``traffic.py``) and the ``guard.py`` and
``looks.py`` it uses. The rest import it inside a function or for type
checking only, and this package imports none of them: ``import
teachd.runner`` loads no Playwright.
"""
