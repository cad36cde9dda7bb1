"""What slash commands change in a running session: model, effort, mode, tools, and `/status`.

A request segment (`vtcode.context.segments`) freezes instructions, tool catalog, model,
provider and mode; a `/model` switch starts a new one by itself (the model is part of the key).
Reasoning effort changes the request too, so the segment mode carries it (`chat`,
`chat+effort=high`, `plan+effort=high`): `/effort` and plan mode start a new segment as well.
With `agent.harness.compact_on_model_switch` (the default), `/model` also compacts at once with
trigger `model_switch`, so the new model starts from a summary.

The context engineer's parts are reached through the run's hooks and used only if present, so a
build without `vtcode.context` still chats (without compaction or segments).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vtcode.loop.runner import Runner
from vtcode.messages import Message
from vtcode.runtime.exec_run import RunParts
from vtcode.tools.exec_session import ExecSession

__all__ = ["Controls"]


class Controls:
    """Session controls over one run's wired parts (`attach` before use)."""

    def __init__(self) -> None:
        self.parts: RunParts | None = None
        self.mode = "chat"

    def attach(self, parts: RunParts) -> None:
        self.parts = parts
        self.mode = "chat"
        self._sync_segment_mode()

    @property
    def p(self) -> RunParts:
        assert self.parts is not None, "attach() first"
        return self.parts

    @property
    def runner(self) -> Runner:
        return self.p.runner

    @property
    def workspace(self) -> Path:
        return self.p.workspace

    # ------------------------------------------------------------------ mode and tools

    def segment_mode(self) -> str:
        effort = self.runner.reasoning_effort
        return self.mode if not effort else f"{self.mode}+effort={effort}"

    def _sync_segment_mode(self) -> None:
        self.p.hooks.set_segment_mode(self.segment_mode())

    def set_mode(self, mode: str) -> None:
        self.mode = mode
        self._sync_segment_mode()

    def restrict_tools(self, names: tuple[str, ...]) -> list[str] | None:
        """Offer only `names` (those the executor has); returns what to restore."""
        ex = self.p.executor
        saved = ex.allowed
        have = {s.name for s in ex.catalog()}
        ex.allowed = [n for n in names if n in have]
        return saved

    def restore_tools(self, saved: list[str] | None) -> None:
        self.p.executor.allowed = saved

    # ------------------------------------------------------------------ commands of a turn

    def _exec_sessions(self) -> list[ExecSession]:
        manager = self.p.executor.registry.exec_sessions
        return list(manager.sessions()) if manager is not None else []

    def command_ids(self) -> set[str]:
        return {s.session_id for s in self._exec_sessions()}

    def stop_command(self, session_id: str) -> bool:
        """Stop one running command (a `!CMD` the user interrupted); False when not running."""
        for s in self._exec_sessions():
            if str(s.session_id) == session_id and not s.is_exited:
                s.terminate()
                return True
        return False

    def stop_commands_since(self, before: set[str]) -> list[str]:
        """Ctrl-C: stop the commands the cancelled turn started that still run (like a shell's
        foreground job); commands of earlier turns keep running. Returns what was stopped."""
        stopped = []
        for s in self._exec_sessions():
            if s.session_id not in before and not s.is_exited:
                s.terminate()
                stopped.append(f"{s.session_id} ({s.command})")
        return stopped

    # ------------------------------------------------------------------ model and effort

    def set_effort(self, level: str) -> None:
        self.runner.reasoning_effort = level
        self._sync_segment_mode()

    def set_model(self, name: str) -> bool:
        """Switch the model; True when the history should now be compacted (`model_switch`)."""
        runner = self.runner
        changed = runner.provider.model != name
        runner.provider.model = name
        runner.budget.model = name
        compact = self.p.config.agent.harness.compact_on_model_switch
        return changed and compact and bool(runner.history) and self.compaction_available()

    # ------------------------------------------------------------------ context

    def compaction_available(self) -> bool:
        return self.p.hooks.compacts()

    def context_tokens(self) -> int:
        from vtcode.context.tokens import default_estimator

        est = default_estimator()
        runner = self.runner
        messages = [Message(role="system", content=runner.system), *runner.history]
        return est.messages(messages) + est.tools(runner.tools.catalog())

    def context_window(self) -> int:
        from vtcode.context.thresholds import effective_budget

        cfg = self.p.config
        return effective_budget(self.runner.provider.context_window, cfg.context.max_context_tokens)

    def context_percent(self) -> float:
        window = self.context_window()
        return 0.0 if window <= 0 else 100.0 * self.context_tokens() / window

    def fresh_resets(self) -> list[Callable[[], None]]:
        """What clears the transient context state of the run's parts (`fresh_context()`)."""
        return [self.p.hooks.fresh_context]

    # ------------------------------------------------------------------ status

    def status_lines(self) -> list[str]:
        r = self.runner
        u = r.budget.usage
        cost = r.budget.cost
        segment = self.p.hooks.current_segment()
        window = self.context_window()
        tokens = self.context_tokens()
        share = f" ({100 * tokens / window:.0f}% of {window})" if window else ""
        return [
            f"session   {r.session_id}",
            f"model     {r.provider.model} ({r.provider.name})  effort "
            f"{r.reasoning_effort or 'default'}  mode {self.mode}",
            f"turns     {r.chat.count if r.chat else 0} user turns, "
            f"{r.turns_executed} model requests",
            f"tokens    in {u.input_tokens} (cached {u.cached_input_tokens}) / out "
            f"{u.output_tokens}; context about {tokens} tokens{share}",
            "cost      "
            + ("unknown (no pricing for this model)" if cost is None else f"${cost:.4f}"),
            f"segment   {segment or '(none yet)'} mode {self.segment_mode()}",
        ]
