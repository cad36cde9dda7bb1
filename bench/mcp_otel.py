"""MCP and OpenTelemetry costs, each next to a baseline measured in the same process (prints only).

    .venv/bin/python bench/mcp_otel.py [--quick]

- MCP call round trip through vtcode's bridge (registry validation, loop thread,
  run_coroutine_threadsafe) vs the SDK's own `await session.call_tool` on one event loop;
- MCP start (spawn, initialize, tools/list) of 1 server vs 4 servers started together;
- OtelExporter.handle per event of a real run's stream vs encoding the same events as JSON lines;
- import time of the OTel exporter module vs `import vtcode` (paid only when enabled).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOOLBOX = REPO / "tests" / "mcp_servers" / "toolbox.py"


def _median(fn: Callable[[], object], n: int) -> float:
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def bench_mcp(n: int) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from vtcode.config.model import McpServerConfig
    from vtcode.mcp.manager import McpManager
    from vtcode.mcp.plan import McpPlan, ServerPlan
    from vtcode.tools.base import ToolContext
    from vtcode.tools.registry import ToolRegistry

    ws = Path(tempfile.mkdtemp(prefix="vtcode-bench-mcp-"))
    server = McpServerConfig(command=sys.executable, args=[str(TOOLBOX)], timeout_seconds=60)

    async def direct() -> float:
        params = StdioServerParameters(command=sys.executable, args=[str(TOOLBOX)])
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            samples = []
            for _ in range(n):
                t = time.perf_counter()
                await session.call_tool("echo", {"text": "x"})
                samples.append(time.perf_counter() - t)
            return statistics.median(samples)

    base = asyncio.run(direct())
    registry = ToolRegistry()
    manager = McpManager.start(McpPlan((ServerPlan("tb", server, False),)), registry, ws)
    ctx = ToolContext(workspace=ws, session_id="bench", spool_dir=ws / "spool")
    try:
        ours = _median(lambda: registry.run("mcp__tb__echo", {"text": "x"}, ctx), n)
    finally:
        manager.close()
    print(
        f"mcp call echo (median of {n}): {ours * 1e3:7.3f} ms  SDK direct {base * 1e3:7.3f} ms"
        f"  ratio {ours / base:5.2f}x"
    )

    def start(k: int) -> float:
        plan = McpPlan(tuple(ServerPlan(f"s{i}", server, False) for i in range(k)))
        t = time.perf_counter()
        m = McpManager.start(plan, ToolRegistry(), ws)
        took = time.perf_counter() - t
        m.close()
        return took

    one = statistics.median(start(1) for _ in range(3))
    four = statistics.median(start(4) for _ in range(3))
    print(
        f"mcp start 1 server: {one * 1e3:7.1f} ms  4 servers together: {four * 1e3:7.1f} ms"
        f"  ratio {four / one:5.2f}x (1.00 = fully parallel; 2 cores here)"
    )


def _events() -> list[object]:
    """The events of a real run (scenario-tool-loop) from its canonical log."""
    from vtcode.config.load import load_config
    from vtcode.runtime.exec_run import ExecRequest, run_exec
    from vtcode.store import read_session_events

    ws = Path(tempfile.mkdtemp(prefix="vtcode-bench-otel-"))
    run_exec(
        ExecRequest(
            workspace=ws,
            config=load_config(workspace=ws).config,
            prompt="go",
            script=str(REPO / "fixtures" / "scripts" / "scenario-tool-loop.toml"),
            session_id="bench",
            install_signals=False,
        )
    )
    return [env.event for env in read_session_events(ws, "bench")]


def bench_otel(rounds: int) -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from vtcode.config.model import OtelConfig
    from vtcode.events.codec import encode_raw_line
    from vtcode.telemetry.otel import OtelExporter

    events = _events()
    per_run = len(events)

    def otel() -> None:
        memory = InMemorySpanExporter()
        exporter = OtelExporter(OtelConfig(enabled=True), "bench", span_exporter=memory)
        for ev in events:
            exporter.handle(ev)  # type: ignore[arg-type]
        exporter.finish()

    def json_lines() -> None:
        for ev in events:
            encode_raw_line(ev)  # type: ignore[arg-type]

    ours = _median(otel, rounds) / per_run
    base = _median(json_lines, rounds) / per_run
    print(
        f"otel handle+flush per event ({per_run} events/run, {rounds} runs): {ours * 1e6:7.2f} us"
        f"  JSON line encode {base * 1e6:7.2f} us  ratio {ours / base:5.2f}x"
    )


def bench_imports() -> None:
    def cost(stmt: str) -> float:
        samples = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", stmt], check=True)
            samples.append(time.perf_counter() - t)
        return statistics.median(samples)

    base = cost("import vtcode.runtime.exec_run")
    otel = cost("import vtcode.runtime.exec_run, vtcode.telemetry.otel")
    mcp = cost("import vtcode.runtime.exec_run, vtcode.mcp.manager, mcp.client.stdio")
    print(
        f"import exec_run: {base * 1e3:6.0f} ms  +otel exporter {otel * 1e3:6.0f} ms"
        f"  +mcp client {mcp * 1e3:6.0f} ms (paid only when configured)"
    )


def main() -> None:
    quick = "--quick" in sys.argv
    bench_mcp(50 if quick else 300)
    bench_otel(20 if quick else 200)
    bench_imports()


if __name__ == "__main__":
    main()
