"""`subagent_start` / `subagent_stop` hooks around a child agent run (`vtcode agent run NAME`).

The hooks are the workspace's `[hooks.lifecycle]` under the same trust and timeout rules as a
session's (one `SessionHooks`); the payload's common fields are the child session's, as Claude
Code gives a subagent's. A hook cannot stop the child; a failed hook is a warning on stderr
(the child's own log is its run's, not the hook's).
"""

from __future__ import annotations

import sys
from pathlib import Path

from vtcode.config.model import VtcodeConfig
from vtcode.hooks.models import SubagentStartPayload, SubagentStopPayload
from vtcode.runtime.session_hooks import PartWarnings, SessionHooks
from vtcode.store.layout import session_dir
from vtcode.store.transcript import TRANSCRIPT_NAME

__all__ = ["SubagentHooks"]


class SubagentHooks:
    """The start and stop hooks of one child run."""

    def __init__(
        self, workspace: Path, config: VtcodeConfig, *, name: str, child_ws: Path, session_id: str
    ) -> None:
        root = Path(child_ws).absolute()
        self.name = name
        self.session_id = session_id
        self._warnings = PartWarnings()
        self.hooks = SessionHooks(
            workspace=Path(workspace).absolute(),
            session_id=session_id,
            config=config,
            transcript_path=str(session_dir(root, session_id) / TRANSCRIPT_NAME),
            warnings=self._warnings,
        )
        self._cwd = str(root)

    def _common(self) -> dict[str, object]:
        return {**self.hooks.common(), "cwd": self._cwd}

    def started(self, task: str) -> None:
        if self.hooks.has("subagent_start"):
            payload = SubagentStartPayload(
                **self._common(),  # type: ignore[arg-type]
                agent_id=self.session_id,
                agent_type=self.name,
                prompt=task,
            )
            self.hooks.run("subagent_start", payload, self.name)
        self._report()

    def stopped(self, exit_code: int, last_message: str | None) -> None:
        if self.hooks.has("subagent_stop"):
            payload = SubagentStopPayload(
                **self._common(),  # type: ignore[arg-type]
                agent_id=self.session_id,
                agent_type=self.name,
                exit_code=exit_code,
                last_assistant_message=last_message,
            )
            self.hooks.run("subagent_stop", payload, self.name)
        self._report()

    def _report(self) -> None:
        for message in self._warnings.take():
            print(f"warning: {message}", file=sys.stderr)
