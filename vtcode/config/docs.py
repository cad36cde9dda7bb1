"""One-line descriptions of the vtcode.toml keys the model does not annotate with `Doc(...)`.

The model's own `Doc` text (carried into the schema) wins; these fill the rest for the starter
file and vtcode.toml(5), from the upstream reference (§7). Named keys are spelled as dotted
paths; fields of repeated tables (hook matchers, hook commands, MCP servers) as `Type.field`.
A test checks that every entry names a real key and that every key has a description.
"""

from __future__ import annotations

from vtcode.config import keys
from vtcode.config.tomlscan import KeyPath, format_key

DESCRIPTIONS: dict[str, str] = {
    "agent.model": "model name passed to the provider; unset: the provider's default",
    "agent.max_task_retries": "exec retries of a transient provider error (backoff 2 s to 30 s)",
    "agent.max_conversation_turns": "retention limit of the conversation (not the exec turn cap)",
    "agent.idle_turn_limit": "consecutive idle turns before the run is treated as stalled",
    "agent.harness.max_tool_retries": "retries of a failed tool call",
    "agent.harness.auto_compaction_enabled": "compact the context automatically near capacity",
    "agent.harness.auto_compaction_instructions": "prompt override for compaction (Anthropic)",
    "agent.harness.auto_compaction_pause_after": "pause after a compaction (Anthropic)",
    "agent.harness.compact_on_model_switch": "compact when the model changes (model_switch)",
    "agent.harness.tool_result_clearing.enabled": "clear the oldest tool results (local)",
    "agent.harness.tool_result_clearing.trigger_tokens": "context size that triggers clearing",
    "agent.harness.tool_result_clearing.keep_tool_uses": "most recent tool uses always kept",
    "agent.harness.tool_result_clearing.clear_at_least_tokens": "minimum tokens one clearing frees",
    "agent.harness.tool_result_clearing.clear_tool_inputs": "also clear the tool call inputs",
    "agent.harness.budget_warning_threshold": "fraction of max_budget_usd that warns once",
    "agent.harness.context_reset_stall_threshold": "stalled turns before an on_stall reset",
    "agent.harness.max_revision_rounds": "plan/build/evaluate revision rounds",
    "agent.open_responses.enabled": "write the derived Open Responses export",
    "agent.open_responses.emit_events": "emit Open Responses events (needs enabled)",
    "agent.open_responses.include_extensions": "include vtcode extension events",
    "agent.open_responses.map_tool_calls": "map tool calls to Open Responses items",
    "agent.open_responses.include_reasoning": "include reasoning items",
    "automation.full_auto.enabled": "upstream's full-auto switch (vtcode exec is always full-auto)",
    "automation.full_auto.allowed_tools": "tools the model may call in full-auto (a hard gate)",
    "automation.full_auto.require_profile_ack": "require acknowledging the full-auto profile",
    "automation.full_auto.profile_path": "path of the full-auto profile",
    "automation.full_auto.verify_mutations": "a verifier re-reads changed files before a success",
    "context.preserve_recent_turns": "newest messages always kept in the compaction tail",
    "context.dynamic.enabled": "maintain the session memory envelope",
    "context.dynamic.persist_history": "persist the history artifact at compaction",
    "context.dynamic.retained_user_messages": "user messages kept in the continuity tail",
    "context.ledger.enabled": "keep the decision ledger (tool calls and outcomes)",
    "context.ledger.include_in_prompt": "send the ledger after the history of each request",
    "context.ledger.max_entries": "ledger entries kept",
    "context.ledger.preserve_in_compression": "keep the ledger through compaction",
    "hooks.lifecycle.session_start": "hooks run when a session starts",
    "hooks.lifecycle.session_end": "hooks run when a session ends",
    "hooks.lifecycle.user_prompt_submit": "hooks run when a prompt is submitted",
    "hooks.lifecycle.pre_tool_use": "hooks run before a tool call",
    "hooks.lifecycle.post_tool_use": "hooks run after a tool call",
    "hooks.lifecycle.post_tool_use_failure": "hooks run after a tool call that failed",
    "hooks.lifecycle.permission_request": "hooks run when a tool asks for permission",
    "hooks.lifecycle.pre_compact": "hooks run before compaction",
    "hooks.lifecycle.post_compact": "hooks run after compaction (matcher: the trigger)",
    "hooks.lifecycle.stop": "hooks run when the run stops (alias: task_completed, task_completion)",
    "hooks.lifecycle.notification": "hooks run on notifications",
    "hooks.lifecycle.subagent_start": "hooks run when a subagent starts",
    "hooks.lifecycle.subagent_stop": "hooks run when a subagent stops",
    "hooks.lifecycle.quiet_success_output": "hide the output of hooks that succeed",
    "permissions.enabled": "apply the permission rules",
    "permissions.allow": "rules that allow a tool call without asking",
    "permissions.ask": "rules that need approval (denied in headless runs)",
    "permissions.deny": "rules that always deny (checked first)",
    "telemetry.atif_enabled": "write the ATIF trajectory export",
    "telemetry.trajectory_enabled": "write the legacy trajectory log",
    "telemetry.otel.enabled": "export traces over OTLP/HTTP",
    "telemetry.otel.endpoint": "OTLP/HTTP endpoint URL",
    "telemetry.otel.service_name": "service.name of exported traces",
    "fleet.database_url": "PostgreSQL URL of the fleet (user config only; docs/fleet.md)",
    "store.queue_max_events": "events buffered before the store fails closed",
    "store.queue_max_bytes": "bytes buffered before the store fails closed",
    "store.max_event_bytes": "largest single event accepted",
    "store.lock_timeout_secs": "wait for a busy session lock before exit 75",
    "store.retention.max_sessions": "closed sessions kept (0 = every one)",
    "store.retention.max_age_days": "closed sessions older than this are removed (0 = never)",
    "store.retention.keep_loop_steps": "sessions of each loop's last N steps are always kept",
    "mcp.servers": "MCP servers by name (stdio `command` or streamable HTTP `url`)",
    "HookMatcher.matcher": "regex on the event's subject; absent: always",
    "HookMatcher.hooks": "commands to run, in order",
    "HookCommand.type": 'kind of hook; only "command"',
    "HookCommand.command": "command line, split with shlex (a shell only with shell = true)",
    "HookCommand.argv": "explicit argument vector (instead of command)",
    "HookCommand.shell": "run command through sh -c (user config only)",
    "HookCommand.timeout_seconds": "seconds before the hook is killed",
    "McpServerConfig.command": "program to start (stdio; instead of url)",
    "McpServerConfig.args": "its arguments",
    "McpServerConfig.env": "extra environment variables",
}


def describe(path: KeyPath, spec: keys.KeySpec) -> str | None:
    """A named key: the model's `Doc` text, else this table, else its enum type's docstring."""
    return spec.description or DESCRIPTIONS.get(format_key(path)) or _type_doc(spec)


def describe_field(type_name: str, field: str, spec: keys.KeySpec) -> str | None:
    """A field of a repeated table type (`HookCommand.timeout_seconds`)."""
    return spec.description or DESCRIPTIONS.get(f"{type_name}.{field}") or _type_doc(spec)


def _type_doc(spec: keys.KeySpec) -> str | None:
    if spec.enum is None or not spec.type_doc:
        return None  # a table's docstring describes its section, not the key
    return spec.type_doc.rstrip(".")
