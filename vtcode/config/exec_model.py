"""vtcode.toml's tables for what runs outside the model: `[sandbox]`, `[shell_environment_policy]`
and `[mcp]` (part of `model.py`'s one definition, split out to keep that module under 500 lines;
`vtcode.config.model` re-exports every name, so callers import them from there)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated

from vtcode.jsontypes import Doc, FloatRange
from vtcode.redact import SECRET_NAME_PATTERNS


class SandboxMode(StrEnum):
    """How far exec_command may write (Codex's names)."""

    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"
    DANGER_FULL_ACCESS = "danger-full-access"


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxConfig:
    """`[sandbox]`: the OS sandbox around exec_command (Landlock + a network namespace on Linux)."""

    mode: SandboxMode = SandboxMode.WORKSPACE_WRITE
    network: Annotated[
        bool,
        Doc(
            "allow network access from commands and web_fetch "
            "(off: only web_fetch(domain:HOST) rules open a host)"
        ),
    ] = False
    writable_roots: Annotated[
        list[str], Doc("extra folders commands may write (workspace-write)")
    ] = field(default_factory=list)
    require: Annotated[
        bool, Doc("exit 2 before anything runs when no supported sandbox exists")
    ] = False
    allow_unix_sockets: Annotated[
        list[str],
        Doc("unix sockets (or folders of them) commands may connect to with network off"),
    ] = field(default_factory=list)


class EnvInherit(StrEnum):
    """Which of vtcode's environment variables a command starts from."""

    ALL = "all"
    CORE = "core"
    NONE = "none"


DEFAULT_ENV_EXCLUDES = SECRET_NAME_PATTERNS  # the names the redactor treats as secrets, too


@dataclass(frozen=True, slots=True, kw_only=True)
class ShellEnvironmentPolicy:
    """`[shell_environment_policy]` (Codex's shape): the environment of exec_command children."""

    inherit: EnvInherit = EnvInherit.ALL
    ignore_default_excludes: Annotated[
        bool, Doc("drop the default excludes (*KEY*, *SECRET*, *TOKEN*, *PASS*, *AUTH*, ...)")
    ] = False
    exclude: Annotated[
        list[str], Doc("case-insensitive glob patterns of names removed (after the defaults)")
    ] = field(default_factory=list)
    set: Annotated[dict[str, str], Doc("variables set explicitly (applied last)")] = field(
        default_factory=dict
    )
    include_only: Annotated[
        list[str], Doc("when non-empty, keep only names matching one of these globs")
    ] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerConfig:
    """`[mcp.servers.NAME]`: an MCP server, a local program (`command`, stdio) or a remote
    endpoint (`url`, streamable HTTP); exactly one of the two."""

    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: Annotated[
        str,
        Doc('streamable HTTP endpoint (instead of command), e.g. "https://mcp.example.com/mcp"'),
    ] = ""
    headers: Annotated[
        dict[str, str], Doc("HTTP headers sent with every request to url (values hidden)")
    ] = field(default_factory=dict)
    bearer_token_env_var: Annotated[
        str,
        Doc("environment variable whose value is sent as `Authorization: Bearer` to url"),
    ] = ""
    timeout_seconds: Annotated[
        float,
        FloatRange(0),
        Doc("seconds to wait for the answer to one tool call or resource read"),
    ] = 30.0
    startup_timeout_seconds: Annotated[
        float,
        FloatRange(0),
        Doc("seconds to connect (spawn, or reach url), initialize and list tools; not per call"),
    ] = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class McpConfig:
    """`[mcp]`."""

    servers: dict[str, McpServerConfig] = field(default_factory=dict)
