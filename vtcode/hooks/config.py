"""Which hooks a run has, where each came from, and whether the workspace ones may run.

`[hooks.lifecycle]` arrays are replaced whole by a higher config layer, so "where did the
`pre_tool_use` hooks come from" is one question per event. The answer is taken from the loader's
own `LoadedConfig.origin()` over the user and workspace files: an event's hooks are
*workspace-defined* when the workspace `vtcode.toml` set them and the run's effective value is
that value (a `-c` or `--config` layer on the command line is the user's own choice, so hooks
that differ from the workspace's came from the user). Anything uncertain counts as workspace:
the gate fails closed.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from vtcode.config.model import HookMatcher, LifecycleHooks, VtcodeConfig
from vtcode.config.rule_syntax import RuleSyntaxError, compile_matcher
from vtcode.config.trust_store import hooks_fingerprint, is_trusted
from vtcode.jsontypes import encode

__all__ = [
    "EVENTS",
    "HookPlan",
    "HookSpec",
    "plan_hooks",
    "workspace_events",
    "workspace_fingerprint",
]

# lifecycle event key -> `hook_event_name` of its payload
EVENTS: dict[str, str] = {
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
    "user_prompt_submit": "UserPromptSubmit",
    "pre_tool_use": "PreToolUse",
    "post_tool_use": "PostToolUse",
    "post_tool_use_failure": "PostToolUseFailure",
    "pre_compact": "PreCompact",
    "post_compact": "PostCompact",
    "stop": "Stop",
    "subagent_start": "SubagentStart",
    "permission_request": "PermissionRequest",
    "notification": "Notification",
    "subagent_stop": "SubagentStop",
}


@dataclasses.dataclass(frozen=True, slots=True)
class HookSpec:
    """One runnable hook: argv resolved, its matcher compiled, where it came from."""

    event: str
    matcher: re.Pattern[str] | None
    argv: tuple[str, ...]
    timeout_seconds: float
    workspace_defined: bool
    label: str  # how messages name it: the command text

    def matches(self, subject: str | None) -> bool:
        return self.matcher is None or (
            subject is not None and bool(self.matcher.fullmatch(subject))
        )


@dataclasses.dataclass(frozen=True, slots=True)
class HookPlan:
    """The hooks that will run, and what was refused (one warning each, reported once)."""

    specs: dict[str, list[HookSpec]]
    problems: list[str]
    skipped_untrusted: int

    def for_event(self, event: str) -> list[HookSpec]:
        return self.specs.get(event, [])

    @property
    def empty(self) -> bool:
        return not any(self.specs.values())


def _argv(cmd_command: str | None, argv: list[str] | None, shell: bool) -> tuple[str, ...]:
    if argv:
        return tuple(argv)
    if cmd_command is None or not cmd_command.strip():
        raise ValueError("a hook needs `argv` or `command`")
    if shell:
        return ("/bin/sh", "-c", cmd_command)
    parts = shlex.split(cmd_command)
    if not parts:
        raise ValueError("empty `command`")
    return tuple(parts)


def workspace_events(
    workspace: Path, config: VtcodeConfig, env: Mapping[str, str] | None = None
) -> set[str]:
    """The lifecycle events whose effective hooks were set by the workspace `vtcode.toml`."""
    from vtcode.config.load import Layer, load_config

    effective = config.hooks.lifecycle
    try:
        files = load_config(workspace=workspace, env=env)
    except Exception:  # unreadable now although it loaded before: trust nothing
        return set(EVENTS)
    out: set[str] = set()
    for event in EVENTS:
        source = files.origin(f"hooks.lifecycle.{event}")
        if source is None or source.layer is not Layer.WORKSPACE:
            continue
        if getattr(files.config.hooks.lifecycle, event) == getattr(effective, event):
            out.add(event)
    return out


def plan_hooks(
    workspace: Path,
    config: VtcodeConfig,
    *,
    env: Mapping[str, str] | None = None,
    workspace_defined: set[str] | None = None,
) -> HookPlan:
    """Resolve every configured hook; drop workspace hooks unless the workspace is trusted."""
    lifecycle: LifecycleHooks = config.hooks.lifecycle
    configured = {e: getattr(lifecycle, e) for e in EVENTS if getattr(lifecycle, e)}
    if not configured:
        return HookPlan({}, [], 0)
    from_ws = (
        workspace_events(workspace, config, env) if workspace_defined is None else workspace_defined
    ) & set(configured)
    ws_defs = {e: [encode(m) for m in configured[e]] for e in sorted(from_ws)}
    trusted = not from_ws or is_trusted(workspace, hooks_fingerprint(ws_defs), env)
    specs: dict[str, list[HookSpec]] = {}
    problems: list[str] = []
    skipped = 0
    for event, matchers in configured.items():
        ws = event in from_ws
        for k, m in enumerate(matchers):
            m_hooks: HookMatcher = m
            if ws and not trusted:
                skipped += len(m_hooks.hooks)
                continue
            try:
                pattern = compile_matcher(m_hooks.matcher)
            except RuleSyntaxError as e:
                problems.append(f"hooks.lifecycle.{event}[{k}].matcher: {e}")
                continue
            for j, h in enumerate(m_hooks.hooks):
                where = f"hooks.lifecycle.{event}[{k}].hooks[{j}]"
                if h.type != "command":
                    problems.append(f"{where}: unsupported hook type {h.type!r} (only 'command')")
                    continue
                if h.shell and ws:
                    problems.append(
                        f"{where}: `shell = true` is only allowed in the user's own config; "
                        "use `argv` in a workspace vtcode.toml"
                    )
                    continue
                try:
                    argv = _argv(h.command, h.argv, h.shell)
                except ValueError as e:
                    problems.append(f"{where}: {e}")
                    continue
                label = h.command if h.command else shlex.join(argv)
                specs.setdefault(event, []).append(
                    HookSpec(event, pattern, argv, float(h.timeout_seconds), ws, label)
                )
    return HookPlan(specs, problems, skipped)


def workspace_fingerprint(
    workspace: Path, config: VtcodeConfig, env: Mapping[str, str] | None = None
) -> tuple[str | None, list[str]]:
    """(fingerprint of the workspace-defined hooks or None when there are none, their events)."""
    lifecycle = config.hooks.lifecycle
    events = sorted(e for e in workspace_events(workspace, config, env) if getattr(lifecycle, e))
    if not events:
        return None, []
    defs = {e: [encode(m) for m in getattr(lifecycle, e)] for e in events}
    return hooks_fingerprint(defs), events
