"""Fixed instruction texts of the loop, and the exec prompt built for one workspace.

The exec prompt is written for the smallest models vtcode is run with (Qwen2.5-Coder 0.5B/1.5B
on llama.cpp, issue 28) as much as for large ones: it names the working folder and the OS (a
small model otherwise invents paths), lists the tool names and the files at the top of the
folder (so a file or function of the task is not mistaken for a tool), says how to call a tool
when the tool-call interface is not used (the form `text_calls` reads), and how to finish. It
stays short: the whole first request, tools included, is measured in docs/eval.md.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from pathlib import Path

EXEC_SYSTEM_PROMPT = """You are running vtcode in non-interactive exec mode.
Work autonomously inside the workspace with the tools you are given: inspect before you change,
run commands to verify, and keep changes minimal. Nobody will answer questions: decide, act and
finish with a short summary of what you did and what remains."""

# The listing of the folder's top level in the exec prompt: at most this many names.
MAX_LISTED_FILES = 40
_HIDDEN = frozenset({".git", ".vtcode"})


def workspace_listing(workspace: Path, limit: int = MAX_LISTED_FILES) -> list[str]:
    """The first `limit` names at the top of `workspace`, sorted (folders end with '/')."""
    try:
        with os.scandir(workspace) as it:
            entries = sorted(
                (e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in it),
                key=str.lower,
            )
    except OSError:
        return []
    shown = [e for e in entries if e.rstrip("/") not in _HIDDEN]
    return shown[:limit] + ([f"... ({len(shown) - limit} more)"] if len(shown) > limit else [])


def exec_system_prompt(workspace: Path, tools: Sequence[str]) -> str:
    """The exec prompt for `workspace` with these tool names."""
    files = workspace_listing(workspace)
    example = "read_file" if "read_file" in tools else (tools[0] if tools else "TOOL")
    return f"""You are vtcode, a coding agent working alone (nobody will answer questions) in the \
folder {workspace} on {platform.system() or os.name}. Paths are relative to it.
Files there: {", ".join(files) if files else "(none)"}.
Tools: {", ".join(tools) if tools else "(none)"}. Use them to do the task yourself: read a file \
before changing it, make the change with a tool, then run a command to check it.
Call a tool through the tool-call interface. If you cannot, reply with only the call as JSON, \
e.g. {{"name": "{example}", "arguments": {{"path": "README.md"}}}}. Only the names above are \
tools; the task's files and functions are not.
When the task is done and checked, reply with a one-line summary and no tool call: that ends \
the run."""


def system_prompt(
    base: str = EXEC_SYSTEM_PROMPT,
    orientation: str | None = None,
    *,
    sections: Sequence[str | None] = (),
) -> str:
    """The frozen system prompt of a request segment: the base instructions, the run's own
    sections (project instructions, appended text), then orientation."""
    parts = [base, *(s for s in sections if s), *([orientation] if orientation else [])]
    return "\n\n".join(parts)


def compact_system_prompt(workspace: Path, tools: Sequence[str]) -> str:
    """The compact harness's prompt (`runtime/harness_profile.py`): for a model too small to
    follow a long one or to write a file into a JSON string. It teaches the file-block form
    (`loop/file_blocks.py`) and nothing else; the example exchange and the files follow it in
    the request (`loop/lead_in.py`). Every sentence added to it in a replay of a recorded
    request (a closing "reply with one short sentence", the tool names) made qwen0.5b answer
    "Done." more often instead of writing the file (docs/eval.md, "Fourth pass")."""
    where = f"the folder {workspace} ({platform.system() or os.name})"
    how = []
    if "write_file" in tools:
        how.append(
            "To create or change a file, write its path on a line by itself, then the file's "
            "complete new content in a fenced code block:\n\nhello.txt\n```\nHello\n```"
        )
    if "exec_command" in tools:
        how.append("To run a shell command, write it in a ```sh block.")
    if not how:
        how.append("You cannot change files or run commands here: answer from the files shown.")
    return (
        f"You are a coding agent working in {where}. You change files by writing them out "
        f"whole.\n\n" + "\n\n".join(how) + " Write only what is needed, then stop."
    )
