"""`run_chat`: an interactive session is an ordinary run (`run_exec`) with a `ChatSession`.

Same store, lock, dispatch gate, exporters, provider, tools, hooks and transcript as `exec`; the
terminal renderer is one more exporter. `/new` ends the session (`new_session`) and starts the
next one in the same process, keeping the model and effort the user last chose.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from vtcode.config.model import VtcodeConfig
from vtcode.interactive.prompts import CHAT_SYSTEM_PROMPT
from vtcode.interactive.render import ChatRenderer
from vtcode.interactive.session import ChatSession
from vtcode.interactive.terminal import Terminal
from vtcode.runtime.exec_run import ExecRequest, ExecResult, run_exec
from vtcode.tools.tool_limits import ToolLimits

__all__ = ["ChatRequest", "run_chat"]


@dataclasses.dataclass(kw_only=True)
class ChatRequest:
    workspace: Path
    config: VtcodeConfig
    terminal: Terminal
    prompt: str | None = None  # the first user message (then the prompt)
    provider: str | None = None
    model: str | None = None
    script: str | None = None
    max_turns: int | None = None  # default: agent.max_conversation_turns
    max_budget_usd: float | None = None
    session_id: str | None = None
    resume: str | None = None  # continue this session
    reasoning_effort: str | None = None
    events_path: str | None = None
    tool_limits: ToolLimits | None = None  # --tools / --allowed-tools / --disallowed-tools


def run_chat(req: ChatRequest) -> ExecResult:
    """Run sessions until the user leaves for good; the last session's result."""
    from vtcode.runtime.hooks import default_hooks_factory

    cfg = req.config
    effort = req.reasoning_effort
    model = req.model
    session_id, resume, prompt = req.session_id, req.resume, req.prompt
    while True:
        session = ChatSession(req.terminal)
        result = run_exec(
            ExecRequest(
                workspace=req.workspace,
                config=cfg,
                prompt=prompt,
                provider=req.provider,
                model=model,
                script=req.script,
                max_turns=req.max_turns or cfg.agent.max_conversation_turns,
                max_budget_usd=req.max_budget_usd,
                session_id=session_id,
                resume=resume,
                events_path=req.events_path,
                sinks=[ChatRenderer(req.terminal)],
                reasoning_effort=effort,
                hooks_factory=default_hooks_factory,
                interaction=session,
                system_prompt=CHAT_SYSTEM_PROMPT,
                tool_limits=req.tool_limits,
            )
        )
        if not session.new_session or result.error or session.controls.parts is None:
            return result
        runner = session.controls.runner
        effort, model = runner.reasoning_effort, runner.provider.model
        session_id, resume, prompt = None, None, None
