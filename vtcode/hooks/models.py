"""JSON payloads a lifecycle hook receives on stdin, and the answer it may print."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Literal

from vtcode.jsontypes import U64, TaggedUnion


@dataclass(frozen=True, slots=True, kw_only=True)
class PreCompactPayload:
    """`hooks.lifecycle.pre_compact`: runs before a compaction boundary is recorded."""

    TYPE: ClassVar[str] = "PreCompact"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    trigger: str
    mode: str
    original_message_count: U64
    compacted_message_count: U64
    history_artifact_path: str | None = field(default=None, metadata={"nullable": True})


@dataclass(frozen=True, slots=True, kw_only=True)
class PostCompactPayload:
    """`hooks.lifecycle.post_compact`: runs after the compaction boundary is recorded (the
    compacted history is in place); the same fields as `pre_compact`."""

    TYPE: ClassVar[str] = "PostCompact"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    trigger: str
    mode: str
    original_message_count: U64
    compacted_message_count: U64
    history_artifact_path: str | None = field(default=None, metadata={"nullable": True})


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStartPayload:
    """`session_start`: `source` is startup, resume, compact or clear."""

    TYPE: ClassVar[str] = "SessionStart"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    source: Literal["startup", "resume", "compact", "clear"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEndPayload:
    """`session_end`: `reason` is the outcome code of the session."""

    TYPE: ClassVar[str] = "SessionEnd"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    reason: str
    subtype: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PreToolUsePayload:
    """`pre_tool_use`: may deny the call (exit code 2, or `{"decision":"deny"}` on stdout)."""

    TYPE: ClassVar[str] = "PreToolUse"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    tool_name: str
    tool_input: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolUsePayload:
    """`post_tool_use`: sees the call and its bounded result."""

    TYPE: ClassVar[str] = "PostToolUse"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    tool_name: str
    tool_input: Any
    tool_response: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolUseFailurePayload:
    """`post_tool_use_failure` (Claude Code's PostToolUseFailure): a tool call that failed."""

    TYPE: ClassVar[str] = "PostToolUseFailure"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    tool_name: str
    tool_input: Any
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UserPromptSubmitPayload:
    """`user_prompt_submit`: may block the prompt (exit 2, or `{"decision":"block"}`) or add
    context (plain stdout, or `hookSpecificOutput.additionalContext`)."""

    TYPE: ClassVar[str] = "UserPromptSubmit"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    prompt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStartPayload:
    """`subagent_start`: a child agent (`vtcode agent run NAME`) is about to run; the common
    fields are the child session's, `agent_type` is NAME."""

    TYPE: ClassVar[str] = "SubagentStart"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    agent_id: str
    agent_type: str
    prompt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStopPayload:
    """`subagent_stop`: the child agent's run has ended (its exit code and last answer)."""

    TYPE: ClassVar[str] = "SubagentStop"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    agent_id: str
    agent_type: str
    stop_hook_active: bool = False
    exit_code: int
    last_assistant_message: str | None = field(default=None, metadata={"nullable": True})


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequestPayload:
    """`permission_request`: an `ask` rule matched a call and nobody can approve (headless);
    `{"decision":"allow"}` runs it, `{"decision":"deny"}` (or nothing) leaves it denied."""

    TYPE: ClassVar[str] = "PermissionRequest"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    tool_name: str
    tool_input: Any
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class NotificationPayload:
    """`notification`: vtcode needs the user (today: a permission only a person could give)."""

    TYPE: ClassVar[str] = "Notification"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    message: str
    notification_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StopPayload:
    """`stop`: the agent is about to finish the thread."""

    TYPE: ClassVar[str] = "Stop"
    TAG_KEY: ClassVar[str] = "hook_event_name"
    session_id: str
    cwd: str
    transcript_path: str | None = field(default=None, metadata={"nullable": True})
    stop_hook_active: bool = False


HOOK_PAYLOAD = TaggedUnion(
    "HookPayload",
    "hook_event_name",
    [
        PreCompactPayload,
        PostCompactPayload,
        SessionStartPayload,
        SessionEndPayload,
        PreToolUsePayload,
        PostToolUsePayload,
        PostToolUseFailurePayload,
        UserPromptSubmitPayload,
        SubagentStartPayload,
        SubagentStopPayload,
        PermissionRequestPayload,
        NotificationPayload,
        StopPayload,
    ],
)


class HookDecision(StrEnum):
    """What a hook's stdout JSON may decide: `pre_tool_use` may deny; `stop` may block (the run
    goes on with the reason as the next user message); `approve` is Claude Code's allow."""

    ALLOW = "allow"
    DENY = "deny"
    BLOCK = "block"
    APPROVE = "approve"


@dataclass(frozen=True, slots=True, kw_only=True)
class HookOutput:
    """Optional JSON a hook prints on stdout."""

    decision: HookDecision | None = None
    reason: str | None = None
    message: str | None = None
    # Claude Code's common fields: `"continue": false` ends the run after the hooks of this
    # event, `stopReason` says why (shown as a warning).
    continue_: bool = field(default=True, metadata={"json_name": "continue"})
    stop_reason: str | None = field(default=None, metadata={"json_name": "stopReason"})
    # `{"additionalContext": "..."}` (user_prompt_submit), as Claude Code nests it
    hook_specific_output: dict[str, Any] | None = field(
        default=None, metadata={"json_name": "hookSpecificOutput"}
    )
