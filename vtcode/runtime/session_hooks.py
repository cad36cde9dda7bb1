"""What the parts of one run share: its warnings and its lifecycle hook runner.

Warnings (hook failures, untrusted workspace hooks, a failed summary request, a damaged steering
queue) are `error` items. A part may raise one before the run's recorder exists (while it is
built); those wait here and are emitted at the first orientation, after `thread.started`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vtcode.config.model import VtcodeConfig
from vtcode.hooks.config import plan_hooks
from vtcode.hooks.runner import HookResult, HookRunner
from vtcode.loop.recorder import Recorder

__all__ = ["PartWarnings", "SessionHooks"]


class PartWarnings:
    """Warnings of a run's parts, held until the recorder is attached and then emitted."""

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._recorder: Recorder | None = None
        # read-only tool calls run on worker threads (loop/parallel.py); their hooks' warnings
        # are emitted one at a time
        self._lock = threading.RLock()

    def attach(self, recorder: Recorder) -> None:
        self._recorder = recorder

    def hold(self, message: str) -> None:
        """Keep a warning for the next `flush` (one raised while the run is being built)."""
        self._pending.append(message)

    def warn(self, message: str) -> None:
        """Emit now when the run is going, else hold it."""
        self._pending.append(message)
        self.flush()

    def take(self) -> list[str]:
        """The warnings held so far, for a caller with no recorder (subagent hooks)."""
        with self._lock:
            pending, self._pending = self._pending, []
            return pending

    def flush(self) -> None:
        with self._lock:
            rec = self._recorder
            if rec is None or not self._pending:
                return
            pending, self._pending = self._pending, []
            for w in pending:
                rec.warning(w)


class SessionHooks:
    """The run's `[hooks.lifecycle]` runner (None when nothing is configured); a hook's failure
    becomes a warning, never a failed run."""

    def __init__(
        self,
        *,
        workspace: Path,
        session_id: str,
        config: VtcodeConfig,
        transcript_path: str,
        warnings: PartWarnings,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.workspace = workspace
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.warnings = warnings
        plan = plan_hooks(workspace, config, env=env)
        self.runner = (
            None
            if plan.empty
            else HookRunner(
                plan,
                workspace=workspace,
                session_id=session_id,
                transcript_path=transcript_path,
                parent_env=env,
            )
        )
        for problem in plan.problems:
            warnings.hold(problem)
        if plan.skipped_untrusted:
            warnings.hold(
                f"skipped {plan.skipped_untrusted} hook(s) defined in this workspace's "
                "vtcode.toml: the workspace is not trusted for these exact hooks "
                "(`vtcode hooks trust` records trust; CI: VTCODE_TRUST_WORKSPACE=1)"
            )

    def has(self, event: str) -> bool:
        return self.runner is not None and self.runner.has(event)

    def run(self, event: str, payload: Any, subject: str | None = None) -> list[HookResult]:
        if self.runner is None or not self.runner.has(event):
            return []
        results = self.runner.run(event, payload, subject=subject)
        for r in results:
            failure = r.failure()
            if failure is not None:
                self.warnings.warn(failure)
        return results

    def common(self) -> dict[str, Any]:
        """The fields every hook payload starts with."""
        return {
            "session_id": self.session_id,
            "cwd": str(self.workspace),
            "transcript_path": self.transcript_path,
        }
