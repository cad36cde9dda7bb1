"""What plugs into the loop: typed seams between the runner and the parts the runtime wires.

The runner (`vtcode.loop.runner`) depends only on these: a `ToolExecutor` runs calls,
`ToolHooks` run around them, `LoopHooks` parts (orientation, context management, steering,
lifecycle hooks) are called at fixed points, and `UserTurns` is the user side of a chat. The
composition root (`vtcode.runtime`) provides the implementations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from vtcode.events.enums import FileChangeKind, ToolCallStatus, ToolOutcome
from vtcode.events.types import Usage
from vtcode.loop.cancel import CancelToken
from vtcode.loop.outcomes import Outcome
from vtcode.loop.recorder import Recorder
from vtcode.loop.tool_retry import ToolRetry
from vtcode.messages import Message, ModelRequest, ToolCall

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = [
    "LoopHooks",
    "ToolExecutor",
    "ToolHooks",
    "ToolRunOutcome",
    "UserAction",
    "UserTurns",
]


@dataclasses.dataclass(slots=True)
class ToolRunOutcome:
    """What executing one call produced, as the runner needs it."""

    output: str
    status: ToolCallStatus
    outcome: ToolOutcome
    exit_code: int | None = None
    spool_path: str | None = None
    file_changes: list[tuple[str, Any]] = dataclasses.field(default_factory=list)
    rejected: bool = False  # permission/hook/invalid: upstream's rejected-tool sequence
    wait_seconds: float = 0.0
    retries: list[ToolRetry] = dataclasses.field(default_factory=list)  # transient failures


class ToolExecutor:
    """Executes one parsed tool call (registry lookup, permissions, hooks, the tool itself)."""

    def execute(self, call: ToolCall, arguments: Any, cancel: CancelToken) -> ToolRunOutcome:
        raise NotImplementedError

    def catalog(self) -> tuple[Any, ...]:
        return ()

    def is_read_only(self, name: str) -> bool:
        """Whether a call of `name` only reads (it may run concurrently with other reads)."""
        return False

    def item_kind(self, name: str) -> str:
        """How a call of `name` is recorded: `tool_invocation` (+ output) or `mcp_tool_call`."""
        return "tool_invocation"

    def take_notices(self) -> list[str]:
        """Warnings from the tools since the last call (e.g. an MCP server that died)."""
        return []

    def close(self) -> None:
        """Stop every process the tools started."""


class ToolHooks(Protocol):
    """Called around every tool call a run makes (lifecycle `pre_tool_use`/`post_tool_use`).

    Given to the executor when it is built (`RegistryToolExecutor(tool_hooks=...)`), in order:
    the first `pre_tool` that returns a reason denies the call; every `post_tool` sees the result.
    """

    def pre_tool(self, name: str, arguments: Any) -> str | None:
        """None to let the call run, else why it may not (`hook_denied`)."""
        ...

    def post_tool(self, name: str, arguments: Any, response: dict[str, Any]) -> None:
        """After the call: `response` has output, status and exit_code."""
        ...

    def permission_request(self, name: str, arguments: Any, reason: str) -> bool | None:
        """An `ask` rule matched and nobody can approve (headless): True allows the call,
        False denies it, None leaves it denied as headless runs do."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class PromptVerdict:
    """What the parts say about a submitted prompt: `blocked` (the reason) ends the run before
    any request; `context` is added after the prompt, in the same user message."""

    blocked: str | None = None
    context: tuple[str, ...] = ()


class LoopHooks:
    """Extension points the context and orient layers fill in (no-ops by default).

    The runtime composes one per concern (`vtcode.runtime.hooks.CompositeHooks`); the runner
    calls them and never knows which parts a run has.
    """

    def attach(self, recorder: Recorder) -> None:
        """Called once by the Runner, before anything is emitted, with the run's recorder."""

    def tool_hooks(self) -> Sequence[ToolHooks]:
        """What to run around each tool call; read once, when the executor is built."""
        return ()

    def orientation(self) -> str | None:
        return None

    def prompt_submitted(self, prompt: str) -> PromptVerdict:
        """The run's prompt is about to become the first user message (`user_prompt_submit`
        hooks): it may be blocked, or context added after it."""
        return PromptVerdict()

    def finish_request(self, request: ModelRequest) -> ModelRequest:
        """The request as it goes out: a part may add what is not history (the decision
        ledger after it); called before `before_request`, which sees the result."""
        return request

    def before_request(self, request: ModelRequest) -> None:
        """Called right before each model request (context estimation, segment tracking)."""

    def after_response(self, usage: Usage) -> None:
        """Called with each response's usage."""

    def compaction_due(self, *, in_tool_loop: bool) -> bool:
        """Whether to compact before the next request (`in_tool_loop`: tool results pending)."""
        return False

    def compact(self, history: list[Message], *, trigger: str, recorder: Recorder) -> list[Message]:
        return history

    def compacted(self) -> None:
        """Called on every part after a compaction replaced the history."""

    def edit_history(self, history: list[Message], recorder: Recorder) -> list[Message]:
        """Context editing before a request (tool-result clearing); the history as it goes out."""
        return history

    def reset_due(self) -> bool:
        return False

    def reset(self, recorder: Recorder) -> None:
        """Write the context-reset manifest."""

    def on_turn_end(self, *, made_progress: bool) -> None:
        """Progress/stall accounting after each turn."""

    def on_finish(self, outcome: Outcome, recorder: Recorder) -> None:
        """Before the terminal turn event (blocked handoffs, stop hooks)."""

    def follow_ups(self) -> list[Message]:
        """Steering follow-ups to apply after a turn (each becomes a user message)."""
        return []

    def stop_blocked(self) -> str | None:
        """The run is about to end with an answer: a reason to go on instead (a `stop` hook's
        `{"decision":"block"}`), given to the model as the next user message; None to end."""
        return None

    def verify_changes(
        self, changed: Mapping[str, FileChangeKind], answer: str, recorder: Recorder
    ) -> str | None:
        """A headless run that changed files is about to end with `answer` as a success: why
        it may not (a verifier rejected the changes), else None. Reports its own events."""
        return None

    # What a front end (`vtcode chat`) may ask of the parts, typed so it never probes for them.

    def compacts(self) -> bool:
        """Whether this part compacts histories (`/compact`, a model switch, thresholds)."""
        return False

    def fresh_context(self) -> None:
        """Drop transient context state (pressure, pending compaction, segment lineage)."""

    def set_segment_mode(self, mode: str) -> None:
        """The chat's mode and effort changed: the request segment records it."""

    def current_segment(self) -> str | None:
        """The id of the request segment the next request belongs to, if one is tracked."""
        return None


@dataclasses.dataclass(frozen=True, slots=True)
class UserAction:
    """What the user did at the prompt: start a turn, compact now, or leave the session."""

    message: Message | None = None  # start a user turn with this message
    compact: str | None = None  # compact now with this trigger ("manual", "model_switch")
    leave: Outcome | None = None  # end the session with this outcome


class UserTurns:
    """The user side of an interactive run (`vtcode.interactive` implements it)."""

    # A script, not a person (`exec --input-format stream-json`): permissions are decided as
    # in any headless run, and SIGINT ends the session instead of only the user turn.
    headless: bool = False

    def next_action(self, runner: Runner) -> UserAction:
        """Block at the prompt until the user does something the loop must act on."""
        raise NotImplementedError

    def turn_ending(self, runner: Runner) -> None:
        """Called inside the user turn, right before its `turn.completed|failed`."""
