"""ToolRegistry: deterministic catalog and hash, schema validation with clear messages."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from vtcode.messages import ToolCall, ToolSpec
from vtcode.tools.base import Tool, ToolContext, ToolResult
from vtcode.tools.registry import (
    InvalidToolArguments,
    ToolRegistry,
    UnknownToolError,
    default_registry,
    portable_parameters,
    spec_json,
)

BUILTINS = [
    "apply_patch",
    "exec_command",
    "grep",
    "list_files",
    "read_file",
    "write_file",
    "write_stdin",
]


class Echo:
    def __init__(self, name: str, description: str = "echo") -> None:
        self._spec = ToolSpec(
            name=name,
            description=description,
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def read_only(self) -> bool:
        return True

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(output=arguments["text"])


def test_builtin_catalog(tool_registry: ToolRegistry) -> None:
    assert tool_registry.names() == BUILTINS
    assert [s.name for s in tool_registry.specs()] == BUILTINS
    ro = {t.spec.name for t in tool_registry if t.read_only}
    assert ro == {"grep", "list_files", "read_file"}
    assert all(isinstance(t, Tool) for t in tool_registry)


def test_catalog_snapshot(tool_registry: ToolRegistry, snapshot_json: SnapshotAssertion) -> None:
    """The specs are the model-facing contract; any change must be deliberate."""
    catalog = [spec_json(s) for s in tool_registry.specs()]
    assert catalog == snapshot_json


def test_specs_and_hash_do_not_depend_on_registration_order() -> None:
    a, b = ToolRegistry(), ToolRegistry()
    for name in ("zeta", "alpha", "mid"):
        a.register(Echo(name))
    for name in ("mid", "zeta", "alpha"):
        b.register(Echo(name))
    assert [s.name for s in a.specs()] == ["alpha", "mid", "zeta"]
    assert a.specs() == b.specs()
    assert a.catalog_hash() == b.catalog_hash()
    body = orjson.dumps([spec_json(s) for s in a.specs()], option=orjson.OPT_SORT_KEYS)
    assert a.catalog_hash() == hashlib.sha256(body).hexdigest()
    assert a.catalog_hash(["mid", "alpha"]) != a.catalog_hash()
    c = ToolRegistry()
    for name in ("zeta", "alpha"):
        c.register(Echo(name))
    c.register(Echo("mid", description="changed"))
    assert c.catalog_hash() != a.catalog_hash()


def test_default_registry_hash_is_stable_across_instances() -> None:
    one, two = default_registry(), default_registry()
    try:
        assert one.catalog_hash() == two.catalog_hash()
        assert one.catalog_hash(["read_file", "grep"]) == two.catalog_hash(["grep", "read_file"])
    finally:
        one.close()
        two.close()


def test_register_rejects_duplicates_and_bad_schemas() -> None:
    reg = ToolRegistry()
    reg.register(Echo("x"))
    with pytest.raises(ValueError, match="already registered"):
        reg.register(Echo("x"))
    bad = Echo("y")
    bad._spec = ToolSpec(name="y", description="", parameters={"type": "nonsense"})
    with pytest.raises(ValueError, match="invalid parameter schema"):
        reg.register(bad)


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("exec_command", {}, r"arguments: 'command' is a required property"),
        ("exec_command", {"command": 3}, r"\$\.command: must satisfy one of: 3 is not of type"),
        ("exec_command", {"command": "ls", "yield_time_ms": -1}, r"\$\.yield_time_ms: -1 is less"),
        ("exec_command", {"command": "ls", "max_output_tokens": 50001}, r"max_output_tokens"),
        ("exec_command", '{"command": ', r"not valid JSON"),
        ("exec_command", "[1]", r"expected a JSON object, got list"),
        ("write_stdin", {"session_id": "run-1"}, r"'action' is a required property; or 'chars'"),
        ("write_stdin", {"session_id": "run-1", "action": "poll"}, r"must satisfy one of"),
        (
            "write_stdin",
            {"session_id": "run-1", "action": "wait", "wait_timeout_seconds": 0},
            r"wait_timeout_seconds: 0 is less than the minimum of 1",
        ),
        (
            "write_stdin",
            {"session_id": "run-1", "action": "wait", "max_output_tokens": 0},
            r"max_output_tokens: 0 is less than the minimum of 1",
        ),
        ("read_file", {"path": "a", "bogus": 1}, r"'bogus' was unexpected"),
    ],
)
def test_invalid_arguments_have_clear_messages(
    tool_registry: ToolRegistry, name: str, arguments: Any, message: str
) -> None:
    with pytest.raises(InvalidToolArguments, match=message) as info:
        tool_registry.validate(name, arguments)
    assert str(info.value).startswith(f"invalid arguments for {name}: ")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "arguments",
    [
        {"session_id": "run-1", "chars": ""},
        {"session_id": "run-1", "chars": "x", "action": "write"},
        {"session_id": "run-1", "action": "wait"},
        {"session_id": 7, "action": "wait", "timeout_seconds": 1},
        {"session_id": "run-1", "action": "poll", "chars": ""},
    ],
)
def test_write_stdin_accepts_upstream_shapes(
    tool_registry: ToolRegistry, arguments: dict[str, Any]
) -> None:
    assert tool_registry.validate("write_stdin", arguments) == arguments


def test_unknown_tool_and_json_text_calls(
    tool_registry: ToolRegistry, tool_ctx: ToolContext
) -> None:
    with pytest.raises(UnknownToolError, match="unknown tool 'nope'; available tools: apply_patch"):
        tool_registry.validate("nope", {})
    (tool_ctx.workspace / "f.txt").write_text("hi\n")
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "f.txt"}')
    assert tool_registry.run_call(call, tool_ctx).output == "hi"


def test_portable_parameters_drop_only_top_level_combinators(
    tool_registry: ToolRegistry,
) -> None:
    params = tool_registry.get("write_stdin").spec.parameters
    portable = portable_parameters(params)
    assert "anyOf" in params and "anyOf" not in portable
    assert portable["required"] == ["session_id"]
    assert portable["properties"] == params["properties"]
    exec_params = tool_registry.get("exec_command").spec.parameters
    assert portable_parameters(exec_params) is exec_params  # nested anyOf is fine everywhere
