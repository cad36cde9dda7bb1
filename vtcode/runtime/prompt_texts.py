"""The run's own system prompt texts: a replacement for the built-in prompt and appended text.

From `agent.system_prompt[_file]` and `agent.append_system_prompt[_file]` (the flags
`--system-prompt[-file]` and `--append-system-prompt[-file]` of exec, chat and loop run set the
same keys for one run). A replacement replaces only the built-in base prompt: the project
instructions and orientation sections still follow it, so a script's prompt does not lose the
repository's AGENTS.md. Everything is read before the session exists: a missing, unreadable or
oversized file, or both forms of a replacement at once, is exit 2 with nothing written.

An untrusted workspace config cannot set the replacement keys or the appended file (the trust
policy ignores them, docs/config-trust.md); its `append_system_prompt` text applies.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from vtcode.config.model import AgentConfig
from vtcode.errors import UsageError
from vtcode.ownfile import SMALL_TEXT, read_own

__all__ = ["PromptTexts", "prompt_texts"]


@dataclasses.dataclass(frozen=True, slots=True)
class PromptTexts:
    base: str | None = None  # replaces the built-in prompt
    append: str | None = None  # added after the other sections, before orientation


def _read(workspace: Path, name: str, key: str) -> str:
    path = workspace / Path(name).expanduser()
    try:
        data = read_own(os.path.realpath(path), SMALL_TEXT)
    except OSError as e:
        raise UsageError(
            f"{key}: cannot read {path}: {e.strerror or e}",
            hint="give a readable text file (at most 1 MiB)",
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{key}: {path} is not UTF-8 text") from None


def prompt_texts(agent: AgentConfig, workspace: Path) -> PromptTexts:
    """The configured replacement and appended text (None where nothing is set)."""
    if agent.system_prompt is not None and agent.system_prompt_file is not None:
        raise UsageError(
            "agent.system_prompt and agent.system_prompt_file are both set",
            hint="give one of --system-prompt / --system-prompt-file",
        )
    base = agent.system_prompt
    if agent.system_prompt_file is not None:
        base = _read(workspace, agent.system_prompt_file, "agent.system_prompt_file")
    appended = [t for t in (agent.append_system_prompt,) if t]
    if agent.append_system_prompt_file is not None:
        appended.append(
            _read(workspace, agent.append_system_prompt_file, "agent.append_system_prompt_file")
        )
    if base is not None and not base.strip():
        raise UsageError("the replacement system prompt is empty")
    return PromptTexts(base=base, append="\n\n".join(appended) or None)
