"""The chat prompt on a real terminal: prompt_toolkit with a history file and Tab completion.

Only used when stdin and stdout are both the process's TTYs (`Terminal` falls back to plain
lines on any other stream). The history lives in the user's state folder, never in the
repository: `$VTCODE_HOME/chat_history`, else `$XDG_STATE_HOME/vtcode/chat_history`, else
`~/.local/state/vtcode/chat_history`; the file is created 0600, known credentials are redacted
before a line is stored, and a history that cannot be opened only means no history. Tab
completes slash commands (and `/effort`'s levels); answers to questions (permissions, plan
approval) are not remembered.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.output import ColorDepth

from vtcode.fsutil import ensure_private_dir
from vtcode.interactive.commands import COMMANDS, EFFORTS
from vtcode.ownfile import open_own
from vtcode.redact import Redactor

__all__ = ["LineEditor", "SlashCompleter", "history_path"]

HISTORY_NAME = "chat_history"


def history_path(env: Mapping[str, str] | None = None) -> Path | None:
    """Where chat history is kept (None: no home to keep it in)."""
    env = os.environ if env is None else env
    home = env.get("VTCODE_HOME")
    if home:
        return Path(home) / HISTORY_NAME
    state = env.get("XDG_STATE_HOME")
    if state and Path(state).is_absolute():
        return Path(state) / "vtcode" / HISTORY_NAME
    try:
        return Path.home() / ".local" / "state" / "vtcode" / HISTORY_NAME
    except RuntimeError:
        return None


class _RedactedHistory(FileHistory):
    """A history file that never keeps a credential the run knows (`vtcode.redact`): a key
    pasted into a chat line is recalled as [REDACTED], like everything else vtcode writes."""

    def store_string(self, string: str) -> None:
        super().store_string(Redactor.from_environ().text(string))


def _history(path: Path | None) -> History:
    if path is None:
        return InMemoryHistory()
    try:
        ensure_private_dir(path.parent)
        # a FIFO, folder or link planted there is refused without blocking (`vtcode.ownfile`)
        os.close(open_own(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    except OSError:
        return InMemoryHistory()  # a read-only home: the chat works, without history
    return _RedactedHistory(str(path))


class SlashCompleter(Completer):
    """Completes `/name` from the command table, then `/effort`'s levels."""

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or text.startswith("//"):
            return
        head, space, rest = text[1:].partition(" ")
        if not space:
            for spec in COMMANDS:
                if spec.name.startswith(head.lower()):
                    yield Completion(
                        f"/{spec.name}", start_position=-len(text), display_meta=spec.help
                    )
        elif head.lower() == "effort" and " " not in rest:
            for level in EFFORTS:
                if level.startswith(rest.lower()):
                    yield Completion(level, start_position=-len(rest))


class LineEditor:
    """Reads one line with editing, history and completion; raises EOFError (Ctrl-D) and
    KeyboardInterrupt (Ctrl-C) as `input()` does, so `Terminal` handles both the same way."""

    def __init__(self, history: Path | None, *, color: bool) -> None:
        depth = None if color else ColorDepth.MONOCHROME  # --no-color: no colour in menus either
        self.chat: PromptSession[str] = PromptSession(
            history=_history(history),
            completer=SlashCompleter(),
            complete_while_typing=False,
            enable_suspend=False,
            color_depth=depth,
        )
        self.question: PromptSession[str] = PromptSession(
            history=InMemoryHistory(), color_depth=depth
        )

    def read(self, prompt: str, *, chat: bool) -> str:
        session = self.chat if chat else self.question
        return session.prompt(prompt)
