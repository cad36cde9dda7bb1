"""Stopping a stdio MCP server that is still starting: whoever stops it, it ends.

A signal during the servers' start cancels the start, and the close that follows stops the same
connection again. The SDK ends the server from inside the cancelled task (close stdin, wait,
SIGTERM, wait, SIGKILL); a second cancel that lands inside that wait skips the signals, and a
server that never reads its stdin then lives on while the close waits out its whole bound (an
`exec` under load hit its 10 s SIGTERM watchdog with nothing on stdout). The server here is
`sleep`, which never reads its stdin, behind a shell that records its pid.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from tests.exec_support import process_running
from vtcode.config.model import McpServerConfig
from vtcode.mcp.client import McpServerConnection

# Every interleaving of the close with the cancelled start's teardown, up to well past the SDK's
# last await before its wait for the process (the bug showed from the 4th step on).
STEPS = range(24)


async def _cancel_then_close(tmp_path: Path, steps: int) -> tuple[int, bool]:
    """The server's pid, and whether it still ran when `aclose` returned."""
    pid_file = tmp_path / f"server-{steps}.pid"
    config = McpServerConfig(
        command="sh",
        args=["-c", f"echo $$ > {pid_file}; exec sleep 600"],
        startup_timeout_seconds=60.0,
    )
    conn = McpServerConnection(f"s{steps}", config, tmp_path)
    start = asyncio.create_task(conn.start())
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert not start.done(), "the start ended before the server ran"
        await asyncio.sleep(0.01)  # polls a condition the server sets; orders nothing
    pid = int(pid_file.read_text())
    start.cancel()
    for _ in range(steps):
        await asyncio.sleep(0)
    try:
        await conn.aclose()
    finally:
        with_outcome = await asyncio.gather(start, return_exceptions=True)
    assert isinstance(with_outcome[0], asyncio.CancelledError)
    return pid, process_running(pid)  # before the loop's own shutdown kills whatever is left


def test_a_cancelled_start_and_the_close_after_it_end_the_server_at_every_interleaving(
    tmp_path: Path,
) -> None:
    async def run_all() -> list[tuple[int, bool]]:
        return list(await asyncio.gather(*(_cancel_then_close(tmp_path, n) for n in STEPS)))

    outcomes = asyncio.run(run_all())
    pids = [pid for pid, _ in outcomes]
    try:
        survivors = [steps for steps, (_, alive) in zip(STEPS, outcomes, strict=True) if alive]
        assert survivors == [], "steps after which the server outlived its close"
    finally:
        for pid in pids:
            if process_running(pid):
                os.kill(pid, 9)
