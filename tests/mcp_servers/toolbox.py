"""A real stdio MCP server (the official SDK's FastMCP) for vtcode's tests.

Tools: `echo`, `add`, `boom` (always raises), `slow` (sleeps). Flags shape the failure cases:
`--pid-file PATH` writes the server's pid first thing (orphan checks), `--exit-after N` makes the
process exit without answering on call N+1 (a server dying mid-session), `--fail-on-start`
exits before serving with a message on stderr, `--hang-on-start` never answers `initialize`,
`--odd-names` also lists tools whose names providers would refuse, `--started-file PATH` is
created when `slow` starts (a real signal to interrupt on), `--start-delay SECS` is a server that
takes that long before it serves (a slow start under load).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from mcp.server.fastmcp import FastMCP

parser = argparse.ArgumentParser()
parser.add_argument("--pid-file")
parser.add_argument("--exit-after", type=int)
parser.add_argument("--fail-on-start", action="store_true")
parser.add_argument("--hang-on-start", action="store_true")
parser.add_argument("--odd-names", action="store_true")
parser.add_argument("--started-file", help="`slow` creates this file when it starts")
parser.add_argument("--start-delay", type=float, default=0.0)
opts = parser.parse_args()

if opts.pid_file:
    Path(opts.pid_file).write_text(str(os.getpid()))
if opts.fail_on_start:
    sys.stderr.write("toolbox: cannot open the database (simulated start failure)\n")
    sys.stderr.flush()
    sys.exit(3)
if opts.start_delay:
    time.sleep(opts.start_delay)  # the behaviour under test: a server slow to start
if opts.hang_on_start:
    while True:  # never reads stdin, never answers: only a signal ends it
        time.sleep(3600)

server = FastMCP("toolbox", log_level="WARNING")
calls = 0


def _count() -> None:
    global calls
    calls += 1
    if opts.exit_after is not None and calls > opts.exit_after:
        sys.stderr.write(f"toolbox: exiting on call {calls}\n")
        sys.stderr.flush()
        os._exit(7)


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    _count()
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    _count()
    return a + b


@server.tool()
def boom() -> str:
    """Always fails."""
    _count()
    raise ValueError("boom: this tool always fails")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    _count()
    if opts.started_file:
        Path(opts.started_file).write_text("slow started")
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


if opts.odd_names:

    @server.tool(name="dotted.name")
    def dotted() -> str:
        """A name with a dot (refused by vtcode)."""
        return "never offered"


if __name__ == "__main__":
    server.run("stdio")
