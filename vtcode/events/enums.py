"""Enum strings of the ThreadEvent 0.11.0 contract, spelled exactly as upstream serializes them.

`OpenEnum`s have an upstream `#[serde(other)] Unknown` catch-all: readers map any other string to
UNKNOWN. The plain `StrEnum`s have none upstream, so an unknown string there is a hard error.
"""

from __future__ import annotations

from enum import StrEnum

from vtcode.jsontypes import OpenEnum


class ThreadCompletionSubtype(OpenEnum):
    """How a thread ended (`thread.completed.subtype`)."""

    SUCCESS = "success"
    ERROR_MAX_TURNS = "error_max_turns"
    ERROR_MAX_BUDGET_USD = "error_max_budget_usd"
    ERROR_DURING_EXECUTION = "error_during_execution"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


class CompactionTrigger(OpenEnum):
    """What started a compaction (`thread.compact_boundary.trigger`)."""

    MANUAL = "manual"
    AUTO = "auto"
    RECOVERY = "recovery"
    MODEL_SWITCH = "model_switch"
    UNKNOWN = "unknown"


class CompactionMode(OpenEnum):
    """Who compacted: vtcode itself (`local`) or the provider's native endpoint (`provider`)."""

    PROVIDER = "provider"
    LOCAL = "local"
    UNKNOWN = "unknown"


class ContextResetTrigger(OpenEnum):
    """Why a `context.reset` happened."""

    PLAN_APPROVAL = "plan_approval"
    UNKNOWN = "unknown"


class PlanApprovalDecision(OpenEnum):
    """The user's answer to a proposed plan."""

    EXECUTE = "execute"
    AUTO_ACCEPT = "auto_accept"
    FRESH_CONTEXT = "fresh_context"
    REVISE = "revise"
    CANCEL = "cancel"
    SWITCH_BUILD = "switch_build"
    SWITCH_AUTO = "switch_auto"
    UNKNOWN = "unknown"


class PermissionDecision(StrEnum):
    """The answer to a permission prompt."""

    ALLOW = "allow"
    DENY = "deny"
    CANCELLED = "cancelled"
    FOLLOWUP = "followup"


class InterjectionSource(StrEnum):
    """Where a user interjection came from."""

    DIRECT = "direct"
    QUEUE = "queue"


class ToolCallStatus(StrEnum):
    """Status of a tool call or command (`completed` is the default)."""

    COMPLETED = "completed"
    FAILED = "failed"
    IN_PROGRESS = "in_progress"


CommandExecutionStatus = ToolCallStatus


class ToolOutcome(StrEnum):
    """Why a tool invocation ended the way it did."""

    SUCCESS = "success"
    ERROR = "error"
    PERMISSION_REJECTED = "permission_rejected"
    PERMISSION_CANCELLED = "permission_cancelled"
    FOLLOWUP = "followup"
    HOOK_DENIED = "hook_denied"
    INVALID_TOOL = "invalid_tool"
    CANCELLED = "cancelled"


class PatchApplyStatus(StrEnum):
    """Status of a file change."""

    COMPLETED = "completed"
    FAILED = "failed"


class FileChangeKind(StrEnum):
    """What happened to one file."""

    ADD = "add"
    DELETE = "delete"
    UPDATE = "update"


class McpToolCallStatus(StrEnum):
    """Status of an MCP tool call."""

    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"


class HarnessEventKind(StrEnum):
    """A harness-level milestone recorded as a `harness` item."""

    PLANNING_STARTED = "planning_started"
    PLANNING_COMPLETED = "planning_completed"
    CONTINUATION_STARTED = "continuation_started"
    CONTINUATION_SKIPPED = "continuation_skipped"
    BLOCKED_HANDOFF_WRITTEN = "blocked_handoff_written"
    EVALUATION_STARTED = "evaluation_started"
    EVALUATION_PASSED = "evaluation_passed"
    EVALUATION_FAILED = "evaluation_failed"
    REVISION_STARTED = "revision_started"
    ESCALATION_TRIGGERED = "escalation_triggered"
    ESCALATION_BYPASSED = "escalation_bypassed"
    VERIFICATION_STARTED = "verification_started"
    VERIFICATION_PASSED = "verification_passed"
    VERIFICATION_FAILED = "verification_failed"
    ERROR_RECOVERED = "error_recovered"
    TOOL_RETRY_ATTEMPTED = "tool_retry_attempted"
    TOOL_LATENCY_RECORDED = "tool_latency_recorded"
    SNAPSHOT_CREATED = "snapshot_created"
    SNAPSHOT_RESTORED = "snapshot_restored"
