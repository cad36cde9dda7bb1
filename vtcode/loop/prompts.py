"""Fixed instruction texts of the loop."""

from __future__ import annotations

EXEC_SYSTEM_PROMPT = """You are running vtcode in non-interactive exec mode.
Work autonomously inside the workspace with the tools you are given: inspect before you change,
run commands to verify, and keep changes minimal. Nobody will answer questions: decide, act and
finish with a short summary of what you did and what remains."""


def system_prompt(base: str = EXEC_SYSTEM_PROMPT, orientation: str | None = None) -> str:
    """The frozen system prompt of a request segment: instructions, then orientation."""
    return base if not orientation else f"{base}\n\n{orientation}"
