"""How each agent is started for one run, and how its own log is read back.

`vtcode` runs as an ordinary `vtcode exec` child (its session log is the record); `codex` runs
`codex exec --json`, `claude` runs `claude -p --output-format stream-json` (their event streams
on stdout are the record); `cmd` runs a shell template and has no record but its exit code.
The peers get the same model and endpoint as vtcode (OPENAI_BASE_URL / ANTHROPIC_BASE_URL, or
the `openai` / `anthropic` provider tables of vtcode.toml), a private home folder each, and
stdin closed; the runner confines them with vtcode's sandbox (see `runner.py`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from vtcode.config.model import VtcodeConfig
from vtcode.config.providers import effective_providers
from vtcode.errors import UsageError
from vtcode.eval.classify import AgentRecord
from vtcode.eval.results import AgentSpec
from vtcode.eval.task import Task

__all__ = [
    "AGENT_KINDS",
    "INSTALL_HINT",
    "Adapter",
    "Invocation",
    "RunContext",
    "adapter_for",
    "peer_endpoints",
    "read_jsonl",
    "read_vtcode_log",
]

AGENT_KINDS = ("vtcode", "codex", "claude")
INSTALL_HINT = "npm install -g @openai/codex @anthropic-ai/claude-code"
CLAUDE_DISALLOWED = "Workflow"
VTCODE_EXITS = frozenset({0, 1, 3, 4, 130})  # documented outcomes; 2 and others: a crash
TOOL_ITEMS = frozenset(
    {"tool_invocation", "command_execution", "mcp_tool_call", "file_change", "web_search"}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunContext:
    """Everything an adapter needs for one run."""

    task: Task
    workspace: Path
    home: Path  # a private folder for the agent's own state (peers' config homes)
    stdout: Path
    session_id: str
    exec_args: Sequence[str] = ()  # vtcode exec options (provider, model, -c, --sandbox, ...)
    config_file: str | None = None
    provider: str | None = None
    model: str | None = None
    endpoints: Mapping[str, str] = field(default_factory=dict)  # "openai"/"anthropic" -> URL


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """What to start: argv, extra environment, text on stdin (None: stdin closed)."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    stdin_text: str | None = None
    sandboxed: bool = True  # confine in vtcode's sandbox (peers and commands)
    writable: tuple[Path, ...] = ()  # besides the workspace


class Adapter(Protocol):
    """One agent: how to start a run, how to read its record."""

    spec: AgentSpec

    def preflight(self, model: str | None, endpoints: Mapping[str, str]) -> None:
        """Refuse (UsageError) before anything runs when a run could not start."""

    def invocation(self, ctx: RunContext) -> Invocation: ...

    def read(self, ctx: RunContext, exit_code: int | None) -> tuple[AgentRecord, Path | None]: ...


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file; a torn or foreign line is skipped (the log is the
    agent's, and a killed agent may leave half a line)."""
    try:
        data = path.read_bytes()
    except OSError:
        return
    for line in data.splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ------------------------------------------------------------------------------------ vtcode


class VtcodeAdapter:
    """`vtcode exec` in the workspace; the record is the session's own events.jsonl."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec

    def preflight(self, model: str | None, endpoints: Mapping[str, str]) -> None:
        """vtcode checks its own options (a bad one is exit 2 of each run: agent_crashed)."""

    def invocation(self, ctx: RunContext) -> Invocation:
        argv = [sys.executable, "-m", "vtcode", "-C", str(ctx.workspace)]
        if ctx.config_file:
            argv += ["--config", ctx.config_file]
        argv += ["exec", "-q", "--session-id", ctx.session_id]
        argv += ["--max-turns", str(ctx.task.spec.max_turns), *ctx.exec_args]
        script = ctx.task.script_path
        if ctx.provider in (None, "replay") and "--script" not in ctx.exec_args and script:
            argv += ["--script", str(script)]
        # The prompt on stdin: as an argument, a prompt starting with "resume" or "-" would
        # be read as options or a subcommand.
        return Invocation(argv=[*argv, "-"], stdin_text=ctx.task.spec.prompt, sandboxed=False)

    def log_path(self, ctx: RunContext) -> Path:
        return ctx.workspace / ".vtcode" / "sessions" / ctx.session_id / "events.jsonl"

    def read(self, ctx: RunContext, exit_code: int | None) -> tuple[AgentRecord, Path | None]:
        path = self.log_path(ctx)
        rec = read_vtcode_log(path)
        rec.expected_exit = exit_code in VTCODE_EXITS
        return rec, (path if path.exists() else None)


def read_vtcode_log(path: Path) -> AgentRecord:
    """What a vtcode session's events.jsonl says happened (also read after the eval, by
    bench/eval_audit.py); a missing log is an empty record."""
    rec = AgentRecord(model_requests=0, tool_calls=0)
    for line in read_jsonl(path):
        ev = line.get("event")
        if isinstance(ev, dict):
            _vtcode_event(rec, ev)
    return rec


def _vtcode_event(rec: AgentRecord, ev: dict[str, Any]) -> None:
    kind = ev.get("type")
    item = ev.get("item") if isinstance(ev.get("item"), dict) else {}
    assert isinstance(item, dict)
    if kind == "turn.started":
        rec.model_requests = (rec.model_requests or 0) + 1
    elif kind == "turn.completed" and rec.first_prompt_tokens is None:
        usage = ev.get("usage")
        rec.first_prompt_tokens = (
            _int(usage.get("input_tokens")) if isinstance(usage, dict) else None
        )
    elif kind == "item.completed" and item.get("type") in TOOL_ITEMS:
        rec.tool_calls = (rec.tool_calls or 0) + 1
    elif kind == "item.completed" and item.get("type") == "agent_message":
        rec.last_message = item.get("text") if isinstance(item.get("text"), str) else None
    elif kind in ("turn.failed", "error"):
        msg = ev.get("message")
        if isinstance(msg, str) and msg.startswith("provider error"):
            rec.provider_error = msg
    elif kind == "thread.completed":
        rec.completed = True
        rec.session_id = ev.get("session_id") if isinstance(ev.get("session_id"), str) else None
        rec.outcome_subtype = str(ev.get("subtype"))
        rec.outcome_code = str(ev.get("outcome_code"))
        rec.turns = _int(ev.get("num_turns"))
        usage = ev.get("usage") if isinstance(ev.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        rec.prompt_tokens = _int(usage.get("input_tokens"))
        rec.completion_tokens = _int(usage.get("output_tokens"))
        rec.cached_tokens = _int(usage.get("cached_input_tokens"))
        cost = ev.get("total_cost_usd")
        rec.cost_usd = float(cost) if isinstance(cost, int | float) else None
        rec.hit_limit = rec.outcome_subtype in ("error_max_turns", "error_max_budget_usd") or (
            rec.outcome_code == "tool_loop_limit_reached"
        )
        if rec.outcome_subtype == "success":
            rec.provider_error = None  # a retried failure that the run got past


# ------------------------------------------------------------------------------------- peers


def peer_endpoints(config: VtcodeConfig, provider: str | None) -> dict[str, str]:
    """The endpoints the peers use, so that every agent talks to the same server: the chosen
    provider's base_url for its kind, else the `openai` / `anthropic` tables, else
    OPENAI_BASE_URL / ANTHROPIC_BASE_URL."""
    tables = effective_providers(config)
    out: dict[str, str] = {}
    chosen = tables.get(provider or "")
    for kind, env in (("openai", "OPENAI_BASE_URL"), ("anthropic", "ANTHROPIC_BASE_URL")):
        url = None
        if chosen is not None and chosen.kind is not None and chosen.kind.value.startswith(kind):
            url = chosen.base_url
        table = tables.get(kind)
        url = url or (table.base_url if table is not None else None) or os.environ.get(env)
        if url:
            out[kind] = url
    return out


def _require(program: str) -> str:
    exe = shutil.which(program)
    if exe is None:
        raise UsageError(f"--agent {program}: `{program}` is not on PATH", hint=INSTALL_HINT)
    return exe


def _endpoint(endpoints: Mapping[str, str], kind: str, agent: str) -> str:
    url = endpoints.get(kind)
    if not url:
        env = "OPENAI_BASE_URL" if kind == "openai" else "ANTHROPIC_BASE_URL"
        raise UsageError(
            f"--agent {agent} needs the model's endpoint",
            hint=f"set {env} or providers.{kind}.base_url (the same server vtcode uses)",
        )
    return url


def _model(model: str | None, agent: str) -> str:
    if not model:
        raise UsageError(f"--agent {agent} needs --model (the same model for every agent)")
    return model


class CodexAdapter:
    """`codex exec --json`: no git check, approvals and codex's own sandbox off (vtcode's
    sandbox confines it instead), a custom provider at the same endpoint (Responses API),
    CODEX_HOME private to the run, stdin closed."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec
        self.exe = _require("codex")

    def preflight(self, model: str | None, endpoints: Mapping[str, str]) -> None:
        _model(model, "codex")
        _endpoint(endpoints, "openai", "codex")

    def invocation(self, ctx: RunContext) -> Invocation:
        url = _endpoint(ctx.endpoints, "openai", "codex")
        model = _model(ctx.model, "codex")
        config = {
            "model_provider": '"vtcode-eval"',
            "model_providers.vtcode-eval.name": '"vtcode eval"',
            "model_providers.vtcode-eval.base_url": orjson.dumps(url).decode(),
            "model_providers.vtcode-eval.wire_api": '"responses"',
            "model_providers.vtcode-eval.env_key": '"OPENAI_API_KEY"',
        }
        argv = [self.exe, "exec", "--json", "--skip-git-repo-check", "--ephemeral"]
        argv += ["--dangerously-bypass-approvals-and-sandbox", "--color", "never"]
        argv += ["-C", str(ctx.workspace), "-m", model]
        for key, value in config.items():
            argv += ["-c", f"{key}={value}"]
        env = {
            "CODEX_HOME": str(ctx.home),
            "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY") or "sk-vtcode-eval",
        }
        return Invocation(argv=[*argv, "--", ctx.task.spec.prompt], env=env, writable=(ctx.home,))

    def read(self, ctx: RunContext, exit_code: int | None) -> tuple[AgentRecord, Path | None]:
        rec = AgentRecord(model_requests=0, tool_calls=0, turns=0)
        started = False
        for ev in read_jsonl(ctx.stdout):
            started = started or ev.get("type") == "turn.started"
            _codex_event(rec, ev)
        # codex reports one turn per prompt: a model request per tool call, plus the answer
        # (the one in flight, for a run that did not finish).
        rec.model_requests = (rec.tool_calls or 0) + 1 if started else 0
        rec.turns = rec.model_requests
        rec.expected_exit = exit_code in (0, 1)
        return rec, ctx.stdout


def _codex_event(rec: AgentRecord, ev: dict[str, Any]) -> None:
    kind = ev.get("type")
    item = ev.get("item") if isinstance(ev.get("item"), dict) else {}
    assert isinstance(item, dict)
    if kind == "thread.started" and isinstance(ev.get("thread_id"), str):
        rec.session_id = ev["thread_id"]
    elif kind == "item.completed" and item.get("type") in TOOL_ITEMS:
        rec.tool_calls = (rec.tool_calls or 0) + 1
    elif kind == "item.completed" and item.get("type") == "agent_message":
        rec.last_message = item.get("text") if isinstance(item.get("text"), str) else None
    elif kind == "turn.completed":
        rec.completed = True
        rec.outcome_subtype = rec.outcome_code = "success"
        usage = ev.get("usage") if isinstance(ev.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        prompt = _int(usage.get("input_tokens"))
        rec.prompt_tokens = (rec.prompt_tokens or 0) + (prompt or 0)
        rec.completion_tokens = (rec.completion_tokens or 0) + (
            _int(usage.get("output_tokens")) or 0
        )
        rec.cached_tokens = (rec.cached_tokens or 0) + (_int(usage.get("cached_input_tokens")) or 0)
    elif kind in ("turn.failed", "error"):
        err = ev.get("error")
        msg = err.get("message") if isinstance(err, dict) else ev.get("message")
        if kind == "turn.failed":
            rec.completed = True
            rec.outcome_subtype = "error_during_execution"
            rec.outcome_code = "turn_failed"
            rec.provider_error = str(msg) if msg else "turn failed"


class ClaudeAdapter:
    """`claude -p --output-format stream-json --verbose`: permissions skipped (IS_SANDBOX=1:
    vtcode's sandbox confines it), the same model at ANTHROPIC_BASE_URL, a private
    CLAUDE_CONFIG_DIR, no session persistence, stdin closed."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec
        self.exe = _require("claude")

    def preflight(self, model: str | None, endpoints: Mapping[str, str]) -> None:
        _model(model, "claude")
        _endpoint(endpoints, "anthropic", "claude")

    def invocation(self, ctx: RunContext) -> Invocation:
        url = _endpoint(ctx.endpoints, "anthropic", "claude")
        model = _model(ctx.model, "claude")
        argv = [self.exe, "-p", "--output-format", "stream-json", "--verbose"]
        argv += ["--model", model, "--dangerously-skip-permissions", "--no-session-persistence"]
        argv += ["--max-turns", str(ctx.task.spec.max_turns)]
        # llama.cpp cannot compile the Workflow tool's schema to a grammar ("failed to parse
        # grammar": every run fails in < 1 s); without it claude runs (issue 28's measurement).
        argv += [f"--disallowed-tools={CLAUDE_DISALLOWED}"]
        env = {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": os.environ.get("ANTHROPIC_API_KEY") or "sk-vtcode-eval",
            "CLAUDE_CONFIG_DIR": str(ctx.home),
            "IS_SANDBOX": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        return Invocation(argv=[*argv, "--", ctx.task.spec.prompt], env=env, writable=(ctx.home,))

    def read(self, ctx: RunContext, exit_code: int | None) -> tuple[AgentRecord, Path | None]:
        rec = AgentRecord(model_requests=0, tool_calls=0)
        messages: set[str] = set()
        for ev in read_jsonl(ctx.stdout):
            _claude_event(rec, ev, messages)
        rec.model_requests = len(messages)
        rec.expected_exit = exit_code in (0, 1)
        return rec, ctx.stdout


def _claude_event(rec: AgentRecord, ev: dict[str, Any], messages: set[str]) -> None:
    kind = ev.get("type")
    if kind == "system" and isinstance(ev.get("session_id"), str):
        rec.session_id = ev["session_id"]
    elif kind == "assistant" and isinstance(ev.get("message"), dict):
        msg = ev["message"]
        mid = msg.get("id")
        synthetic = msg.get("model") == "<synthetic>"  # claude's own text for an API error
        if isinstance(mid, str) and mid not in messages and not synthetic:
            messages.add(mid)
            usage = msg.get("usage")
            if rec.first_prompt_tokens is None and isinstance(usage, dict):
                rec.first_prompt_tokens = _claude_prompt(usage)
        for block in msg.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                rec.tool_calls = (rec.tool_calls or 0) + 1
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                rec.last_message = block["text"]
    elif kind == "result":
        rec.completed = True
        subtype = ev.get("subtype")
        failed = bool(ev.get("is_error"))
        # claude reports an API error as subtype "success" with is_error: not a success here.
        rec.outcome_subtype = (
            "error_during_execution" if failed and subtype == "success" else (str(subtype))
        )
        status = ev.get("api_error_status")
        rec.outcome_code = (
            (f"api_error_{status}" if isinstance(status, int) else "error")
            if failed
            else str(subtype)
        )
        rec.turns = _int(ev.get("num_turns"))
        usage = ev.get("usage") if isinstance(ev.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        rec.prompt_tokens = _claude_prompt(usage)
        rec.completion_tokens = _int(usage.get("output_tokens"))
        rec.cached_tokens = _int(usage.get("cache_read_input_tokens"))
        cost = ev.get("total_cost_usd")
        rec.cost_usd = float(cost) if isinstance(cost, int | float) else None
        rec.hit_limit = subtype in ("error_max_turns", "error_max_budget_usd")
        if ev.get("is_error") and subtype in ("success", "error_during_execution"):
            result = ev.get("result")
            rec.provider_error = str(result) if result else "error"
        if isinstance(ev.get("result"), str) and not ev.get("is_error"):
            rec.last_message = ev["result"]


def _claude_prompt(usage: dict[str, Any]) -> int | None:
    """Anthropic's input_tokens excludes the cache; the total prompt adds both cache counts."""
    parts = [
        _int(usage.get(k))
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    ]
    return None if parts[0] is None else sum(p or 0 for p in parts)


# ------------------------------------------------------------------------------ a template


class CommandAdapter:
    """`--agent-cmd TEMPLATE`: `{prompt}`, `{workspace}`, `{model}` replaced shell-quoted, run
    by /bin/sh in the workspace. No event stream: only the exit code (0 = it finished)."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec
        template = spec.command or ""
        try:
            shlex.split(template)
        except ValueError as exc:
            raise UsageError(f"--agent-cmd: {exc}") from None
        if "{prompt}" not in template:
            raise UsageError("--agent-cmd needs {prompt} in its template")

    def preflight(self, model: str | None, endpoints: Mapping[str, str]) -> None:
        """Checked when made: the template parses and names {prompt}."""

    def invocation(self, ctx: RunContext) -> Invocation:
        values = {
            "prompt": ctx.task.spec.prompt,
            "workspace": str(ctx.workspace),
            "model": ctx.model or "",
        }
        text = self.spec.command or ""
        for name, value in values.items():
            text = text.replace("{" + name + "}", shlex.quote(value))
        return Invocation(argv=["/bin/sh", "-c", text], writable=(ctx.home,))

    def read(self, ctx: RunContext, exit_code: int | None) -> tuple[AgentRecord, Path | None]:
        ok = exit_code == 0
        rec = AgentRecord(completed=ok, expected_exit=ok)
        rec.outcome_subtype = rec.outcome_code = "success" if ok else f"exit_{exit_code}"
        return rec, None


def adapter_for(spec: AgentSpec) -> Adapter:
    """The adapter of an agent spec; `UsageError` (exit 2) when its program is missing."""
    classes: dict[str, type[VtcodeAdapter | CodexAdapter | ClaudeAdapter | CommandAdapter]] = {
        "vtcode": VtcodeAdapter,
        "codex": CodexAdapter,
        "claude": ClaudeAdapter,
        "cmd": CommandAdapter,
    }
    cls = classes.get(spec.kind)
    if cls is None:
        raise UsageError(f"unknown agent {spec.kind!r}", hint="vtcode, codex, claude")
    return cls(spec)
