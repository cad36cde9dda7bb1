"""The tool catalog: registration, ordered specs, a stable catalog hash, argument validation.

Specs are ordered by name so that the catalog a provider sees (and its hash, which the request
segment records as `catalog_hash`) does not depend on registration order. Arguments are checked
against each tool's JSON Schema with a validator built once per tool, and a failure becomes one
clear `InvalidToolArguments` message naming the offending argument (the loop reports it to the
model as an `invalid_tool`-style tool failure).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from vtcode.messages import ToolCall, ToolSpec
from vtcode.tools.base import Tool, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from vtcode.config.model import VtcodeConfig
    from vtcode.tools.exec_sessions import ExecSessionManager


class UnknownToolError(ToolError):
    """The model called a tool that is not in the catalog."""


class InvalidToolArguments(ToolError):
    """The arguments are not JSON or do not match the tool's schema."""


def spec_json(spec: ToolSpec) -> dict[str, Any]:
    """A spec as canonical JSON data (the shape hashed and offered to providers)."""
    return {"name": spec.name, "description": spec.description, "parameters": spec.parameters}


def canonical_json(data: Any) -> bytes:
    """Sorted keys, no whitespace: the same bytes for the same data, run after run."""
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)


_COMBINATORS = ("anyOf", "oneOf", "allOf", "not")


def portable_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """`parameters` without top-level combinators, for providers that reject them.

    Anthropic's `input_schema` refuses a top-level `anyOf`/`oneOf`/`allOf`; write_stdin's
    "chars or action=wait" rule is one. The registry still enforces the full schema locally, so
    a call that breaks the dropped rule gets the same clear `InvalidToolArguments`.
    """
    if not any(k in parameters for k in _COMBINATORS):
        return parameters
    return {k: v for k, v in parameters.items() if k not in _COMBINATORS}


class ToolRegistry:
    """Tools by name. Thread-safe for lookups; registration normally happens once at start."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, Validator] = {}
        self._lock = threading.Lock()
        self.exec_sessions: ExecSessionManager | None = None

    def register(self, tool: Tool, *, built_in: bool = False) -> None:
        """Add `tool`; its schema is checked now so a bad spec fails at start, not mid-run.

        A `built_in` tool's schema is vtcode's own constant, proven valid by
        tests/tools/test_builtin_schemas.py: checking it again at every start cost about
        33 ms, half of a short `exec` run's own time.
        """
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        spec = tool.spec
        if not spec.name:
            raise ValueError("a tool needs a name")
        try:
            if not built_in:
                Draft202012Validator.check_schema(spec.parameters)
        except SchemaError as exc:
            raise ValueError(
                f"tool {spec.name!r} has an invalid parameter schema: {exc.message}"
            ) from exc
        with self._lock:
            if spec.name in self._tools:
                raise ValueError(f"tool {spec.name!r} is already registered")
            self._tools[spec.name] = tool
            self._validators[spec.name] = Draft202012Validator(
                spec.parameters, format_checker=Draft202012Validator.FORMAT_CHECKER
            )

    def get(self, name: str) -> Tool:
        tool = self._tools.get(name)
        if tool is None:
            raise UnknownToolError(
                f"unknown tool {name!r}; available tools: {', '.join(self.names())}"
            )
        return tool

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter([self._tools[n] for n in self.names()])

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def specs(self, names: list[str] | None = None) -> tuple[ToolSpec, ...]:
        """Specs ordered by name (optionally only `names`, e.g. the read-only subset)."""
        chosen = self.names() if names is None else sorted(n for n in names if n in self._tools)
        return tuple(self._tools[n].spec for n in chosen)

    def catalog_hash(self, names: list[str] | None = None) -> str:
        """sha256 (hex) of the canonical JSON of the ordered specs."""
        body = canonical_json([spec_json(s) for s in self.specs(names)])
        return hashlib.sha256(body).hexdigest()

    def validate(self, name: str, arguments: Any) -> dict[str, Any]:
        """Return `arguments` (a dict, or JSON text of one) if schema-valid, else raise."""
        self.get(name)
        if isinstance(arguments, str | bytes):
            try:
                arguments = orjson.loads(arguments) if arguments.strip() else {}
            except orjson.JSONDecodeError as exc:
                raise InvalidToolArguments(
                    f"invalid arguments for {name}: not valid JSON ({exc})"
                ) from exc
        if not isinstance(arguments, dict):
            raise InvalidToolArguments(
                f"invalid arguments for {name}: expected a JSON object, got "
                f"{type(arguments).__name__}"
            )
        validator = self._validators[name]
        errors = list(validator.iter_errors(arguments))
        if errors:
            from jsonschema.exceptions import best_match

            # Plain errors first; an anyOf/oneOf failure is described by all its alternatives
            # (best_match would pick one branch and report, e.g., "'wait' was expected").
            plain = [e for e in errors if e.validator not in ("anyOf", "oneOf")]
            err = best_match(plain) if plain else errors[0]
            where = err.json_path if err.json_path != "$" else "arguments"
            raise InvalidToolArguments(f"invalid arguments for {name}: {where}: {_describe(err)}")
        return arguments

    def run(self, name: str, arguments: Any, ctx: ToolContext) -> ToolResult:
        """Validate, then run. `ToolError` (incl. unknown tool / bad arguments) propagates."""
        args = self.validate(name, arguments)
        return self.get(name).run(args, ctx)

    def run_call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        return self.run(call.name, call.arguments, ctx)

    def close(self) -> None:
        """End everything the tools own (kills and reaps exec sessions)."""
        if self.exec_sessions is not None:
            self.exec_sessions.close_all()


def _describe(err: ValidationError) -> str:
    """One line for an error; `anyOf`/`oneOf` failures list what each alternative wanted."""
    if err.validator in ("anyOf", "oneOf") and err.context:
        wanted = sorted({sub.message for sub in err.context})
        return "must satisfy one of: " + "; or ".join(wanted)
    return err.message


def default_registry(
    config: VtcodeConfig | None = None,
    *,
    exec_sessions: ExecSessionManager | None = None,
    include: list[str] | None = None,
) -> ToolRegistry:
    """The built-in tools: exec_command, write_stdin, the file tools, and web_fetch where the
    network policy can allow a fetch (`net_policy.fetch_offered`; never without a config, as
    under the default one).

    `exec_sessions` lets a caller share one session manager; otherwise a new one is created
    and exposed as `registry.exec_sessions` (call `registry.close()` at session end).
    `include` restricts the catalog to those names. `config` gives a new manager its
    `[shell_environment_policy]` (the default policy without one).
    """
    from vtcode.tools.exec_sessions import ExecSessionManager
    from vtcode.tools.exec_tools import ExecCommandTool, WriteStdinTool
    from vtcode.tools.files import file_tools
    from vtcode.tools.net_policy import fetch_offered

    policy = config.shell_environment_policy if config is not None else None
    manager = exec_sessions or (
        ExecSessionManager(
            env_policy=policy,
            sandbox=config.sandbox,  # [sandbox]
            max_spool_bytes=config.tools.max_spool_bytes,
        )
        if config is not None
        else ExecSessionManager()
    )
    registry = ToolRegistry()
    registry.exec_sessions = manager
    tools: list[Tool] = [ExecCommandTool(manager), WriteStdinTool(manager), *file_tools()]
    if config is not None and fetch_offered(config):  # only where a fetch can be allowed
        from vtcode.tools.web_fetch import WebFetchTool

        tools.append(WebFetchTool())
    for tool in tools:
        if include is None or tool.spec.name in include:
            registry.register(tool, built_in=True)
    return registry
