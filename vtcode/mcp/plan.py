"""Which configured MCP servers a run may start, checked before anything is written.

A server command is code run on the user's machine, so a server defined by the repository's own
`vtcode.toml` starts only in a trusted workspace (the CVE-2025-61260 lesson: a cloned repository
must not run commands just by being opened). Origin and trust follow the hooks gate
(`vtcode/hooks/config.py`, `vtcode/config/trust_store.py`): a server is *workspace-defined* when the
workspace file set anything under `mcp.servers.NAME` and the run's effective definition is that
one (a `-c` or `--config` on the command line is the user's own choice); uncertainty counts as
workspace. Trust comes from `VTCODE_TRUST_WORKSPACE` (CI, cron) or from defining the server in
the user config instead; nothing in the repository decides it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path

from vtcode.config.model import McpServerConfig, VtcodeConfig
from vtcode.errors import ConfigError
from vtcode.mcp.names import server_name_problem
from vtcode.mcp.remote import config_problems

__all__ = ["McpPlan", "ServerPlan", "plan_servers", "workspace_servers"]


@dataclasses.dataclass(frozen=True, slots=True)
class ServerPlan:
    name: str
    config: McpServerConfig
    workspace_defined: bool


@dataclasses.dataclass(frozen=True, slots=True)
class McpPlan:
    """Servers to start (sorted by name) and one notice per refused group."""

    servers: tuple[ServerPlan, ...]
    notices: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()  # workspace servers not started (untrusted)

    @property
    def empty(self) -> bool:
        return not self.servers and not self.notices


def _check(name: str, server: McpServerConfig) -> None:
    where = f"mcp.servers.{name}"
    problem = server_name_problem(name)
    if problem is not None:
        raise ConfigError(problem, location=where)
    for key, problem in config_problems(server):
        raise ConfigError(problem, location=f"{where}.{key}" if key else where)
    for key, value in (
        ("timeout_seconds", server.timeout_seconds),
        ("startup_timeout_seconds", server.startup_timeout_seconds),
    ):
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(
                f"{key} must be a positive number of seconds, got {value}",
                location=f"{where}.{key}",
            )


def _require_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError as e:
        raise ConfigError(
            f"[mcp.servers] is configured but the MCP SDK cannot be imported ({e})",
            location="mcp.servers",
            hint='pip install "vtcode[mcp]" (the mcp extra)',
        ) from e


def workspace_servers(
    workspace: Path, config: VtcodeConfig, env: Mapping[str, str] | None = None
) -> set[str]:
    """Names of the effective servers whose definition came from the workspace `vtcode.toml`."""
    from vtcode.config.load import Layer, load_config

    names = set(config.mcp.servers)
    try:
        files = load_config(workspace=workspace, env=env)
    except Exception:  # unreadable now although it loaded before: trust nothing
        return names
    out: set[str] = set()
    for name in names:
        source = files.origin(f"mcp.servers.{name}")
        if source is None or source.layer is not Layer.WORKSPACE:
            continue
        if files.config.mcp.servers.get(name) == config.mcp.servers[name]:
            out.add(name)
    return out


def plan_servers(
    config: VtcodeConfig, workspace: Path, env: Mapping[str, str] | None = None
) -> McpPlan:
    """Validate `[mcp.servers]` (ConfigError, exit 2) and drop untrusted workspace servers."""
    servers = config.mcp.servers
    for name in sorted(servers):
        _check(name, servers[name])
    if not servers:
        return McpPlan(())
    _require_sdk()
    from vtcode.config.trust_store import TRUST_ENV, env_trust

    from_ws = workspace_servers(workspace, config, env)
    trusted = env_trust(env) is True
    keep: list[ServerPlan] = []
    refused: list[str] = []
    for name in sorted(servers):
        ws = name in from_ws
        if ws and not trusted:
            refused.append(name)
        else:
            keep.append(ServerPlan(name, servers[name], ws))
    notices: tuple[str, ...] = ()
    if refused:
        listed = ", ".join(repr(n) for n in refused)
        notices = (
            f"MCP servers defined in the workspace vtcode.toml were not started ({listed}): "
            f"the workspace is not trusted; set {TRUST_ENV}=1 or define them in your user config",
        )
    return McpPlan(tuple(keep), notices, tuple(refused))
