"""MCP discovery in process: names, the trust plan, the loop bridge, the catalog, results.

The servers are real processes (`tests/mcp_servers/toolbox.py`, written with the same SDK);
the end-to-end runs through `vtcode exec` live in `test_mcp_exec.py`.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import types

from vtcode.config.load import load_config
from vtcode.config.model import McpServerConfig
from vtcode.errors import ConfigError
from vtcode.mcp.manager import McpManager
from vtcode.mcp.names import (
    server_name_problem,
    split_name,
    tool_name,
    tool_name_problem,
)
from vtcode.mcp.plan import McpPlan, ServerPlan, plan_servers, workspace_servers
from vtcode.mcp.runtime import CallCancelled, CallTimeout, LoopThread
from vtcode.mcp.tools import render_result
from vtcode.tools.base import ToolContext, ToolError
from vtcode.tools.registry import ToolRegistry, default_registry

TOOLBOX = Path(__file__).parents[1] / "mcp_servers" / "toolbox.py"


def _server(*flags: str, timeout: float = 20.0) -> McpServerConfig:
    """`timeout` bounds both a call and the start (start-up has its own key since issue 11)."""
    return McpServerConfig(
        command=sys.executable,
        args=[str(TOOLBOX), *flags],
        timeout_seconds=timeout,
        startup_timeout_seconds=timeout,
    )


def _plan(**servers: McpServerConfig) -> McpPlan:
    return McpPlan(tuple(ServerPlan(n, c, False) for n, c in servers.items()))


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, session_id="s", spool_dir=tmp_path / "spool")


@pytest.fixture
def started(tmp_path: Path) -> Iterator[tuple[McpManager, ToolRegistry]]:
    """One toolbox server (`tb`, exits on its 3rd call) over the built-in registry."""
    registry = default_registry()
    manager = McpManager.start(
        _plan(tb=_server("--exit-after", "2", "--odd-names")), registry, tmp_path
    )
    try:
        yield manager, registry
    finally:
        manager.close()
        registry.close()


# ------------------------------------------------------------------ names


def test_catalog_names_round_trip_and_cannot_collide() -> None:
    assert tool_name("git-hub_v2", "search") == "mcp__git-hub_v2__search"
    assert split_name("mcp__git-hub_v2__search_code") == ("git-hub_v2", "search_code")
    assert split_name("mcp__s__a__b") == ("s", "a__b")  # the first `__` ends the server name
    assert split_name("exec_command") is None
    assert split_name("mcp__onlyserver") is None
    for bad in ("a__b", "_a", "a_", "a.b", "", "a b"):
        assert server_name_problem(bad) is not None, bad
    assert server_name_problem("a" * 60) is not None  # no room left for a tool name
    assert server_name_problem("git-hub_v2") is None
    assert tool_name_problem("s", "dotted.name") is not None
    assert tool_name_problem("s", "x" * 60) is not None
    assert tool_name_problem("s", "ok_name-2") is None


# ------------------------------------------------------------------ plan and trust


def _workspace(tmp_path: Path, toml: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "vtcode.toml").write_text(toml)
    return ws


TIMEOUT_KEY = "mcp.servers.ok.timeout_seconds"
SERVER_TOML = '[mcp.servers.{name}]\ncommand = "{cmd}"\nargs = ["{arg}"]\n'


def test_workspace_servers_need_trust_user_servers_do_not(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        SERVER_TOML.format(name="mine", cmd=sys.executable, arg=TOOLBOX)
    )
    ws = _workspace(tmp_path, SERVER_TOML.format(name="repo", cmd="evil", arg="--pwn"))
    for trust, started in (({}, ["mine"]), ({"VTCODE_TRUST_WORKSPACE": "1"}, ["mine", "repo"])):
        env = {"VTCODE_HOME": str(home), **trust}
        cfg = load_config(workspace=ws, env=env).config
        plan = plan_servers(cfg, ws, env)
        assert [s.name for s in plan.servers] == started
        assert [s.workspace_defined for s in plan.servers] == [n == "repo" for n in started]
        if len(started) == 1:
            assert plan.refused == ("repo",)
            assert "not trusted" in plan.notices[0] and "VTCODE_TRUST_WORKSPACE" in plan.notices[0]
    # an explicit "no" wins over nothing else to decide
    env = {"VTCODE_HOME": str(home), "VTCODE_TRUST_WORKSPACE": "0"}
    cfg = load_config(workspace=ws, env=env).config
    assert [s.name for s in plan_servers(cfg, ws, env).servers] == ["mine"]


def test_a_workspace_change_to_a_user_server_is_ignored_until_trusted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        SERVER_TOML.format(name="mine", cmd=sys.executable, arg=TOOLBOX)
    )
    ws = _workspace(tmp_path, '[mcp.servers.mine]\nargs = ["--something-else"]\n')
    env = {"VTCODE_HOME": str(home)}
    loaded = load_config(workspace=ws, env=env)
    # untrusted: the loader keeps the user's definition (docs/config-trust.md) ...
    assert loaded.config.mcp.servers["mine"].args == [str(TOOLBOX)]
    assert [d.key for d, _ in loaded.decisions] == ["mcp.servers.mine"]
    assert [s.name for s in plan_servers(loaded.config, ws, env).servers] == ["mine"]
    # ... and once trusted, the changed server counts as the workspace's (its own gate)
    trusted = {**env, "VTCODE_TRUST_WORKSPACE": "1"}
    cfg = load_config(workspace=ws, env=trusted).config
    assert cfg.mcp.servers["mine"].args == ["--something-else"]
    assert workspace_servers(ws, cfg, trusted) == {"mine"}
    # the same change made on the command line is the user's own choice
    cfg = load_config(
        workspace=tmp_path / "home", env=env, overrides=['mcp.servers.mine.args=["--x"]']
    ).config
    assert plan_servers(cfg, tmp_path / "home", env).servers[0].name == "mine"


@pytest.mark.parametrize(
    ("toml", "location"),
    [
        ('[mcp.servers."a__b"]\ncommand = "x"\n', "mcp.servers.a__b"),
        ('[mcp.servers.ok]\ncommand = "  "\n', "mcp.servers.ok.command"),
        (
            '[mcp.servers.ok]\ncommand = "x"\ntimeout_seconds = 0\n',
            "mcp.servers.ok.timeout_seconds",
        ),
    ],
)
def test_bad_server_config_is_a_located_config_error(
    tmp_path: Path, toml: str, location: str
) -> None:
    ws = _workspace(tmp_path, toml)
    cfg = load_config(workspace=ws).config
    with pytest.raises(ConfigError) as err:
        plan_servers(cfg, ws)
    assert err.value.location == location
    assert err.value.exit_code == 2


def test_a_negative_timeout_is_refused_by_the_loader_with_its_key(tmp_path: Path) -> None:
    """The model's range (FloatRange(0)) catches it before plan_servers sees it."""
    from vtcode.config.layers import ConfigInvalid

    ws = _workspace(tmp_path, '[mcp.servers.ok]\ncommand = "x"\ntimeout_seconds = -1\n')
    with pytest.raises(ConfigInvalid) as err:
        load_config(workspace=ws)
    assert "mcp.servers.ok.timeout_seconds" in str(err.value)


# ------------------------------------------------------------------ the loop bridge


async def _sleep_until_cancelled(seconds: float, cancelled: threading.Event) -> None:
    """Sleep on the loop; a cancellation sets `cancelled` (the test sees it from outside)."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        cancelled.set()
        raise


def test_loop_thread_timeout_cancel_and_a_coroutines_own_timeout() -> None:
    runtime = LoopThread()
    cancelled = threading.Event()

    async def raises_timeout() -> None:
        raise TimeoutError("its own")

    async def answer() -> int:
        return 42

    try:
        assert runtime.run(answer(), 5) == 42
        with pytest.raises(CallTimeout):
            runtime.run(_sleep_until_cancelled(60, cancelled), 0.05)
        assert cancelled.wait(5), "a timed-out call is cancelled on the loop"
        stop = threading.Event()
        stop.set()
        with pytest.raises(CallCancelled):
            runtime.run(_sleep_until_cancelled(60, cancelled), 60, cancel=stop)
        with pytest.raises(TimeoutError, match="its own"):
            runtime.run(raises_timeout(), 5, cancel=threading.Event())
    finally:
        assert runtime.stop()
    assert not runtime.alive


def test_a_signal_tripped_while_servers_start_is_handled_within_a_slice() -> None:
    # exec_run waits for `McpManager.start` inside `interruptible` with no cancel event: one
    # wait for the whole start budget slept through a signal that came just before it blocked
    # (`_thread.interrupt_main` trips the flag without interrupting the wait).
    import _thread
    import signal
    import time

    from vtcode.loop.cancel import Cancelled, CancelToken

    runtime = LoopThread()
    cancelled = threading.Event()
    token = CancelToken()
    timer = threading.Timer(0.05, _thread.interrupt_main, args=(signal.SIGINT,))
    started = time.monotonic()
    try:
        with token.installed():
            timer.start()
            with pytest.raises(Cancelled), token.interruptible():
                runtime.run(_sleep_until_cancelled(30, cancelled), 30)
        took = time.monotonic() - started
        assert took < 5, f"the start was waited on {took:.1f}s after the signal"
        assert cancelled.wait(5), "the interrupted start is cancelled on the loop"
    finally:
        timer.join()
        assert runtime.stop()


# ------------------------------------------------------------------ discovery and calls


def test_tools_are_listed_prefixed_sorted_and_hash_stably(tmp_path: Path) -> None:
    hashes = []
    for order in (("alpha", "beta"), ("beta", "alpha")):
        registry = ToolRegistry()
        manager = McpManager.start(_plan(**{n: _server() for n in order}), registry, tmp_path)
        try:
            names = registry.names()
            hashes.append(registry.catalog_hash())
            assert manager.take_notices() == []
        finally:
            manager.close()
    assert names == [
        tool_name(s, t) for s in ("alpha", "beta") for t in ("add", "boom", "echo", "slow")
    ]
    assert hashes[0] == hashes[1]
    spec = registry.get("mcp__alpha__add").spec
    assert spec.description == "Add two integers."
    assert spec.parameters["required"] == ["a", "b"]


def test_calls_results_errors_and_a_server_that_dies(
    started: tuple[McpManager, ToolRegistry], ctx: ToolContext
) -> None:
    manager, registry = started
    notices = manager.take_notices()
    assert len(notices) == 1 and "'dotted.name'" in notices[0]  # refused, not renamed
    assert "mcp__tb__dotted.name" not in registry
    assert registry.run("mcp__tb__echo", {"text": "hi"}, ctx).output == "hi"
    boom = registry.run("mcp__tb__boom", {}, ctx)
    assert not boom.success and "boom: this tool always fails" in boom.output
    with pytest.raises(ToolError, match="invalid arguments"):  # checked before the call
        registry.run("mcp__tb__add", {"a": "two"}, ctx)
    with pytest.raises(ToolError, match="unavailable: the server closed the connection"):
        registry.run("mcp__tb__echo", {"text": "third"}, ctx)  # the server exits on it
    (dead,) = manager.take_notices()
    assert "'tb' is unavailable" in dead and "exiting on call 3" in dead  # stderr tail
    assert "4 tools will fail" in dead
    with pytest.raises(ToolError, match="unavailable"):
        registry.run("mcp__tb__add", {"a": 1, "b": 2}, ctx)  # at once, no new notice
    assert manager.take_notices() == []
    assert manager.unavailable("mcp__tb__add") is not None
    assert manager.unavailable("mcp__other__x") is None


def test_failed_starts_are_notices_not_errors(tmp_path: Path) -> None:
    registry = ToolRegistry()
    plan = _plan(
        down=_server("--fail-on-start"),
        hang=_server("--hang-on-start", timeout=0.5),
        missing=McpServerConfig(command=str(tmp_path / "no-such-server")),
        ok=_server(),
    )
    manager = McpManager.start(plan, registry, tmp_path)
    try:
        notices = manager.take_notices()
        assert notices[0] == (
            "MCP server 'down' failed to start: the server closed the connection; its stderr "
            "said: toolbox: cannot open the database (simulated start failure)"
        )
        assert notices[1] == (
            "MCP server 'hang' failed to start: no answer to initialize within 0.5s"
        )
        assert notices[2].startswith("MCP server 'missing' failed to start: cannot run ")
        assert len(notices) == 3
        assert [n for n in registry.names() if n.startswith("mcp__ok__")]
        assert not [n for n in registry.names() if not n.startswith("mcp__ok__")]
        hint = manager.unavailable("mcp__down__echo")
        assert hint is not None and hint.startswith("MCP server 'down' is unavailable")
    finally:
        manager.close()


def test_tools_outside_the_allow_list_are_named_in_one_notice(tmp_path: Path) -> None:
    registry = ToolRegistry()
    manager = McpManager.start(
        _plan(tb=_server()), registry, tmp_path, allowed=["read_file", "mcp__tb__echo"]
    )
    try:
        (notice,) = manager.take_notices()
        assert "3 of 4 tools are not in automation.full_auto.allowed_tools" in notice
        assert "(add, boom, slow)" in notice and '"mcp__tb__*"' in notice
    finally:
        manager.close()


def test_close_is_idempotent_and_leaves_no_thread(tmp_path: Path, ctx: ToolContext) -> None:
    registry = ToolRegistry()
    manager = McpManager.start(_plan(tb=_server()), registry, tmp_path)
    manager.close()
    manager.close()
    assert not [t for t in threading.enumerate() if t.name == "vtcode-mcp"]
    with pytest.raises(ToolError, match="the session was closed"):
        registry.run("mcp__tb__echo", {"text": "late"}, ctx)


def test_executor_reads_the_allow_list_as_globs_and_records_mcp_calls_as_such(
    started: tuple[McpManager, ToolRegistry], ctx: ToolContext
) -> None:
    from vtcode.loop.tool_exec import RegistryToolExecutor

    _, registry = started
    executor = RegistryToolExecutor(registry, ctx, allowed=["read_*", "mcp__tb__e*"])
    assert [s.name for s in executor.catalog()] == ["mcp__tb__echo", "read_file"]
    assert executor.item_kind("mcp__tb__echo") == "mcp_tool_call"
    assert executor.item_kind("mcp__gone__x") == "mcp_tool_call"  # even when not in the catalog
    assert executor.item_kind("read_file") == "tool_invocation"
    assert executor.take_notices() == []  # no notice source bound


# ------------------------------------------------------------------ results as text


def test_render_result_describes_every_content_kind() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="plain"),
            types.ImageContent(type="image", data="AAAA", mimeType="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="file:///a.txt", text="inside"),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="file:///b.bin", blob="AAAA", mimeType="application/octet-stream"
                ),
            ),
        ]
    )
    assert render_result(result).splitlines() == [
        "plain",
        "[image image/png, 3 bytes]",
        "inside",
        "[resource file:///b.bin (application/octet-stream)]",
    ]
    structured = types.CallToolResult(content=[], structuredContent={"b": 1, "a": [2]})
    assert render_result(structured) == '{"a":[2],"b":1}'
    long = types.CallToolResult(content=[types.TextContent(type="text", text="x" * 100)])
    assert render_result(long, limit=10) == "x" * 10 + "\n[... 90 more characters not shown]"
