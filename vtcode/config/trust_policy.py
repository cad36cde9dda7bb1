"""What an untrusted workspace `vtcode.toml` may set: one class and one merge rule per key.

vtcode runs unattended on repositories it did not write, so a repository's own config must not
lift the policy of the user running it. Every key of the config model has a class here (a test
walks `keys.iter_specs()` so a new key without one fails):

- `tightening`: the workspace value applies only in the stricter direction. Deny/ask lists add
  to the user's (entries the workspace leaves out are kept); caps keep the stricter value;
  booleans and ordered choices (sandbox mode) apply only when they restrict.
- `neutral`: free to set (context tuning, model choice).
- `loosening`: ignored (allow rules, full-auto bounds, extra writable roots, env passing).
- `egress`: ignored; the key sends data off the machine or writes it outside the workspace.
- `execution`: names a program. Hooks and MCP servers defined by the workspace are kept for
  their own trust gates (`vtcode hooks trust`, VTCODE_TRUST_WORKSPACE), which skip them with
  their own warning; what the loader adds is that the workspace can never replace or empty the
  user's hooks or change the user's servers. Other execution keys are ignored.

A trusted workspace is not filtered at all. The user config, `--config FILE` and `-c` are the
user's own and are never filtered. The rules compare the workspace value with the value below
it (defaults and the user config): a value the rule cannot read (a wrong type) is kept so the
schema reports it with its location.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from vtcode.config import keys
from vtcode.config.tomlscan import KeyPath, format_key

__all__ = [
    "POLICY",
    "TRUST_HINT",
    "Action",
    "KeyClass",
    "Outcome",
    "Rule",
    "filter_workspace",
    "rule_for",
]

TRUST_HINT = "to trust it: `vtcode hooks trust`, or VTCODE_TRUST_WORKSPACE=1 in CI"

_MISSING = object()


class Action(enum.StrEnum):
    """What became of a workspace value: dropped, merged with yours, or left to a trust gate."""

    IGNORED = "ignored"
    MERGED = "merged"
    GATED = "gated"


class KeyClass(enum.StrEnum):
    TIGHTENING = "tightening"
    NEUTRAL = "neutral"
    LOOSENING = "loosening"
    EGRESS = "egress"
    EXECUTION = "execution"


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """What a rule did with one workspace value: keep it, keep a merged value, or drop it."""

    keep: bool
    value: Any = None
    why: str | None = None  # set when the value was dropped or merged, for the warning
    gated: bool = False  # kept for a later trust gate (hooks, MCP servers) that decides at run


Check = Callable[[Any, Any], Outcome]  # (workspace value, value below or _MISSING)


@dataclasses.dataclass(frozen=True, slots=True)
class Rule:
    """A key's class, the merge rule of an untrusted workspace value, and the doc text."""

    cls: KeyClass
    check: Check
    text: str


def _keep(ws: Any, below: Any) -> Outcome:
    return Outcome(True, ws)


def _drop(ws: Any, below: Any) -> Outcome:
    return Outcome(False)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _cap(zero_unlimited: bool) -> Check:
    """Lower is stricter; None (and 0 when it means "no limit") is no cap at all."""

    def limit(v: Any) -> float:
        if v is None or (zero_unlimited and v == 0):
            return math.inf
        return float(v)

    def check(ws: Any, below: Any) -> Outcome:
        if not _is_num(ws) and ws is not None:
            return Outcome(True, ws)
        if below is _MISSING or not (_is_num(below) or below is None):
            return Outcome(True, ws)
        if limit(ws) <= limit(below):
            return Outcome(True, ws)
        return Outcome(False, why=f"a higher limit than yours ({below!r})")

    return check


def _floor(ws: Any, below: Any) -> Outcome:
    """Higher keeps more (records); a lower value would remove the user's history."""
    if not _is_num(ws) or not _is_num(below) or ws >= below:
        return Outcome(True, ws)
    return Outcome(False, why=f"a lower value than yours ({below!r}) would remove records")


def _floor0(ws: Any, below: Any) -> Outcome:
    """Like `_floor`, where 0 means "no limit" and so keeps the most."""

    def kept(v: Any) -> float:
        return math.inf if v == 0 else float(v)

    if not _is_num(ws) or not _is_num(below) or kept(ws) >= kept(below):
        return Outcome(True, ws)
    return Outcome(False, why=f"a lower value than yours ({below!r}) would remove records")


def _only(strict: bool) -> Check:
    def check(ws: Any, below: Any) -> Outcome:
        if not isinstance(ws, bool) or ws is strict or below is _MISSING or ws == below:
            return Outcome(True, ws)
        return Outcome(False, why=f"{_toml(ws)} would loosen your {_toml(below)}")

    return check


def _toml(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else repr(v)


def _order(*strict_first: str) -> Check:
    def check(ws: Any, below: Any) -> Outcome:
        if ws not in strict_first or below not in strict_first:
            return Outcome(True, ws)
        if strict_first.index(ws) <= strict_first.index(below):
            return Outcome(True, ws)
        return Outcome(False, why=f"{ws!r} is looser than your {below!r}")

    return check


def _union(ws: Any, below: Any) -> Outcome:
    if not isinstance(ws, list) or not isinstance(below, list):
        return Outcome(True, ws)
    merged = below + [x for x in ws if x not in below]
    removed = [x for x in below if x not in ws]
    why = f"your entries {removed!r} are kept (a workspace can only add)" if removed else None
    return Outcome(True, merged, why)


def _subset(ws: Any, below: Any) -> Outcome:
    if not isinstance(ws, list) or not isinstance(below, list):
        return Outcome(True, ws)
    extra = [x for x in ws if x not in below]
    if not extra:
        return Outcome(True, ws)
    return Outcome(False, why=f"it adds {extra!r} to yours")


def _not_over_user(ws: Any, below: Any) -> Outcome:
    """Gated execution: a new workspace definition waits for its trust gate; yours stay."""
    if below is _MISSING or below in ([], {}, None):
        return Outcome(True, ws, "it runs only once the workspace is trusted", gated=True)
    return Outcome(False, why="it would replace the definition in your own config")


def _t(check: Check, text: str) -> Rule:
    return Rule(KeyClass.TIGHTENING, check, text)


NEUTRAL = Rule(KeyClass.NEUTRAL, _keep, "applies")
LOOSENING = Rule(KeyClass.LOOSENING, _drop, "ignored")
EGRESS = Rule(KeyClass.EGRESS, _drop, "ignored")
EXECUTION = Rule(KeyClass.EXECUTION, _drop, "ignored")
GATED = Rule(
    KeyClass.EXECUTION,
    _not_over_user,
    "runs only once trusted (hook/MCP trust gate); never replaces yours",
)
CAP = _t(_cap(False), "stricter (lower) limit wins")
CAP0 = _t(_cap(True), "stricter (lower) limit wins; 0 = no limit counts as the highest")
FLOOR = _t(_floor, "applies only when it keeps more (higher)")
FLOOR0 = _t(_floor0, "applies only when it keeps more (higher; 0 = no limit keeps the most)")
UNION = _t(_union, "entries add to yours")
SUBSET = _t(_subset, "applies only when it narrows yours")
ONLY_TRUE = _t(_only(True), "applies only when true (or equal to yours)")
ONLY_FALSE = _t(_only(False), "applies only when false (or equal to yours)")


def _ordered(*strict_first: str) -> Rule:
    return _t(_order(*strict_first), "applies only when as strict: " + " < ".join(strict_first))


# Key patterns: dotted paths, `*` standing for any name of a map (subagents, servers).
POLICY: dict[str, Rule] = {
    "agent.provider": NEUTRAL,  # endpoints and keys come from the user's environment only
    "agent.model": NEUTRAL,
    "agent.reasoning_effort": NEUTRAL,
    "agent.max_task_retries": CAP,
    "agent.task_retry_backoff_secs": NEUTRAL,
    "agent.max_conversation_turns": CAP0,
    "agent.request_timeout_secs": CAP0,
    "agent.stream_idle_timeout_secs": CAP0,
    "agent.idle_turn_limit": CAP0,
    # a file whose content is sent to the provider: a workspace could name a secret JSON file
    "agent.output_schema": EGRESS,
    "agent.output_schema_retries": CAP,
    # Instructions are content, never policy (docs/security.md): a workspace may choose them.
    "agent.instructions.enabled": NEUTRAL,
    "agent.instructions.fallback_files": NEUTRAL,
    "agent.instructions.max_bytes": NEUTRAL,
    # An untrusted workspace may append to the system prompt, not replace it; a file it names
    # could be any file the user can read, sent to the provider.
    "agent.system_prompt": LOOSENING,
    "agent.system_prompt_file": LOOSENING,
    "agent.append_system_prompt": NEUTRAL,
    "agent.append_system_prompt_file": EGRESS,
    "agent.harness.max_tool_calls_per_turn": CAP0,
    "agent.harness.max_tool_wall_clock_secs": CAP0,
    "agent.harness.max_tool_retries": CAP,
    "agent.harness.max_parallel_tool_calls": CAP0,
    "agent.harness.auto_compaction_enabled": NEUTRAL,
    "agent.harness.auto_compaction_threshold_tokens": NEUTRAL,
    "agent.harness.auto_compaction_instructions": NEUTRAL,
    "agent.harness.auto_compaction_pause_after": NEUTRAL,
    "agent.harness.compact_on_model_switch": NEUTRAL,
    "agent.harness.tool_result_clearing.enabled": NEUTRAL,
    "agent.harness.tool_result_clearing.trigger_tokens": NEUTRAL,
    "agent.harness.tool_result_clearing.keep_tool_uses": NEUTRAL,
    "agent.harness.tool_result_clearing.clear_at_least_tokens": NEUTRAL,
    "agent.harness.tool_result_clearing.clear_tool_inputs": NEUTRAL,
    "agent.harness.max_budget_usd": CAP,
    "agent.harness.require_budget": ONLY_TRUE,
    "agent.harness.budget_warning_threshold": NEUTRAL,
    "agent.harness.continuation_policy": _ordered("off", "exec_only", "all"),
    "agent.harness.profile": NEUTRAL,
    "agent.harness.first_reply_draws": CAP,
    "agent.harness.context_reset_mode": NEUTRAL,
    "agent.harness.context_reset_stall_threshold": NEUTRAL,
    "agent.harness.event_log_path": EGRESS,  # a copy of every event at a path of its choosing
    "agent.harness.orchestration_mode": NEUTRAL,
    "agent.harness.max_revision_rounds": CAP,
    "agent.harness.long_running_command_ceiling_secs": CAP,
    "agent.open_responses.enabled": NEUTRAL,  # written inside the session folder
    "agent.open_responses.emit_events": NEUTRAL,
    "agent.open_responses.include_extensions": NEUTRAL,
    "agent.open_responses.map_tool_calls": NEUTRAL,
    "agent.open_responses.include_reasoning": NEUTRAL,
    "agent.subagents.*.description": NEUTRAL,
    "agent.subagents.*.prompt": NEUTRAL,
    "agent.subagents.*.isolation": NEUTRAL,
    "agent.subagents.*.read_only": ONLY_TRUE,
    "agent.subagents.*.provider": NEUTRAL,
    "agent.subagents.*.script": NEUTRAL,
    "agent.subagents.*.model": NEUTRAL,
    "agent.subagents.*.max_turns": CAP,
    "automation.full_auto.enabled": ONLY_FALSE,
    "automation.full_auto.max_turns": CAP,
    "automation.full_auto.allowed_tools": SUBSET,
    "automation.full_auto.require_profile_ack": ONLY_TRUE,
    "automation.full_auto.profile_path": LOOSENING,
    "automation.full_auto.verify_mutations": ONLY_TRUE,
    "tools.max_tool_loops": CAP0,
    "tools.max_spool_bytes": CAP,
    "context.max_context_tokens": NEUTRAL,
    "context.preserve_recent_turns": NEUTRAL,
    "context.dynamic.enabled": NEUTRAL,
    "context.dynamic.persist_history": NEUTRAL,
    "context.dynamic.retained_user_messages": NEUTRAL,
    "context.ledger.enabled": NEUTRAL,
    "context.ledger.include_in_prompt": NEUTRAL,
    "context.ledger.max_entries": NEUTRAL,
    "context.ledger.preserve_in_compression": NEUTRAL,
    **{
        f"hooks.lifecycle.{event}": GATED
        for event in (
            "session_start",
            "session_end",
            "user_prompt_submit",
            "pre_tool_use",
            "post_tool_use",
            "post_tool_use_failure",
            "permission_request",
            "pre_compact",
            "post_compact",
            "stop",
            "notification",
            "subagent_start",
            "subagent_stop",
        )
    },
    "hooks.lifecycle.quiet_success_output": EXECUTION,  # would silence the user's guard hooks
    "permissions.enabled": ONLY_TRUE,
    "permissions.allow": LOOSENING,
    "permissions.ask": UNION,
    "permissions.deny": UNION,
    "telemetry.atif_enabled": NEUTRAL,  # written inside the session folder
    "telemetry.trajectory_enabled": NEUTRAL,
    "telemetry.otel.enabled": EGRESS,
    "telemetry.otel.endpoint": EGRESS,
    "telemetry.otel.service_name": EGRESS,
    "fleet.database_url": EGRESS,  # where every session's events would be sent
    "store.durability": _ordered("event", "turn", "os"),
    "store.queue_max_events": NEUTRAL,
    "store.queue_max_bytes": NEUTRAL,
    "store.max_event_bytes": NEUTRAL,
    "store.max_events": FLOOR,
    "store.lock_timeout_secs": NEUTRAL,
    "store.reserve_bytes": NEUTRAL,
    "store.retention.max_sessions": FLOOR0,
    "store.retention.max_age_days": FLOOR0,
    "store.retention.keep_loop_steps": FLOOR,
    "mcp.servers.*": GATED,
    # A workspace may choose among the user's providers (agent.provider) and tune a model, but
    # not say where requests go, which key they carry or which wire API (the kind picks the
    # default key variable): those are egress. Prices feed the budget, so a lower one loosens.
    "providers.*.kind": EGRESS,
    "providers.*.base_url": EGRESS,
    "providers.*.api_key_env": EGRESS,
    "providers.*.headers": EGRESS,
    "providers.*.model": NEUTRAL,
    "providers.*.context_window": NEUTRAL,
    "providers.*.max_output_tokens": NEUTRAL,
    "providers.*.images": NEUTRAL,
    "providers.*.pricing": LOOSENING,
    "sandbox.mode": _ordered("read-only", "workspace-write", "danger-full-access"),
    "sandbox.network": ONLY_FALSE,
    "sandbox.writable_roots": LOOSENING,
    "sandbox.require": ONLY_TRUE,
    "sandbox.allow_unix_sockets": LOOSENING,
    "shell_environment_policy.inherit": _ordered("none", "core", "all"),
    "shell_environment_policy.ignore_default_excludes": ONLY_FALSE,
    "shell_environment_policy.exclude": UNION,
    "shell_environment_policy.set": EXECUTION,  # LD_PRELOAD, PATH, BASH_ENV
    "shell_environment_policy.include_only": LOOSENING,
}

_EXACT: dict[tuple[str, ...], Rule] = {
    tuple(k.split(".")): r for k, r in POLICY.items() if "*" not in k
}
_WILD: list[tuple[tuple[str, ...], Rule]] = [
    (tuple(k.split(".")), r) for k, r in POLICY.items() if "*" in k
]


def rule_for(path: KeyPath) -> Rule | None:
    """The rule of a key path (map names match `*`); None for tables and unknown keys."""
    if all(isinstance(part, str) for part in path):
        rule = _EXACT.get(path)  # type: ignore[arg-type]
        if rule is not None:
            return rule
    for pattern, rule in _WILD:
        if len(pattern) == len(path) and all(
            p == "*" or p == part for p, part in zip(pattern, path, strict=True)
        ):
            return rule
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """One workspace key not applied as written: `--origin` shows each; all but gated ones warn
    (a gated hook or server is reported by its own gate when a run skips it)."""

    path: KeyPath
    cls: KeyClass
    action: Action
    why: str

    @property
    def key(self) -> str:
        return format_key(self.path)


_WHY = {
    KeyClass.LOOSENING: "it would loosen your policy",
    KeyClass.EGRESS: "it could send data off the machine or outside the workspace",
    KeyClass.EXECUTION: "it could run a program or change how one runs",
}


def _below(data: Mapping[str, Any], path: KeyPath) -> Any:
    node: Any = data
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def filter_workspace(
    ws: Mapping[str, Any], below: Mapping[str, Any]
) -> tuple[dict[str, Any], list[Decision]]:
    """The workspace data an untrusted workspace may apply, and what was not applied as written."""
    decisions: list[Decision] = []
    out = _filter(ws, below, (), decisions)
    return out, decisions


def _filter(
    node: Mapping[str, Any], below: Mapping[str, Any], path: KeyPath, decisions: list[Decision]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in node.items():
        sub = (*path, name)
        alias = keys.ALIASES.get(sub)
        target = sub if alias is None else (*path, alias)  # judged as the key it stands for
        rule = rule_for(target)
        if rule is None:
            # a table: decide inside it; anything else is unknown or mistyped, which
            # validation reports with its location, so it is kept
            out[name] = _filter(value, below, sub, decisions) if isinstance(value, dict) else value
            continue
        result = rule.check(value, _below(below, target))
        if result.keep:
            out[name] = result.value
            if result.why:
                action = Action.GATED if result.gated else Action.MERGED
                decisions.append(Decision(sub, rule.cls, action, result.why))
            continue
        why = result.why or _WHY[rule.cls]
        decisions.append(Decision(sub, rule.cls, Action.IGNORED, why))
    return out


def iter_policy() -> Iterator[tuple[str, Rule]]:
    """Every key pattern and its rule, in table order (docs/config-trust.md is made from this)."""
    yield from POLICY.items()
