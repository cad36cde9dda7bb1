"""`agent.harness.max_parallel_tool_calls` through the real CLI and a recording server.

Each read's `pre_tool_use` hook (user config, so trusted) writes a start file and waits, bounded,
until the other reads have started too: with the reads running together every hook sees the
others; run one at a time, the first one waits alone. The results still reach the model and the
event log in call order.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import SSEServer
from tests.loop.harness_support import configure, run_exec, text_sse, tool_calls_sse

HOOK = """
import json, os, sys, time
payload = json.load(sys.stdin)
name = payload["tool_input"]["path"]
folder, wait = sys.argv[1], float(sys.argv[2])
open(os.path.join(folder, name + ".started"), "w").close()
deadline = time.monotonic() + wait
while time.monotonic() < deadline:
    if len([f for f in os.listdir(folder) if f.endswith(".started")]) >= 3:
        open(os.path.join(folder, name + ".met"), "w").close()
        break
    time.sleep(0.01)
"""


def _run(tmp_path: Path, server: SSEServer, parallel: int, wait: float) -> list[str]:
    meet = tmp_path.parent / f"{tmp_path.name}-meet-{parallel}"
    meet.mkdir()
    (tmp_path.parent / "hook.py").write_text(HOOK)
    configure(tmp_path, server, f"[agent.harness]\nmax_parallel_tool_calls = {parallel}\n")
    argv = [sys.executable, str(tmp_path.parent / "hook.py"), str(meet), str(wait)]
    with (tmp_path / ".home" / "config.toml").open("a") as f:
        f.write(
            '[[hooks.lifecycle.pre_tool_use]]\nmatcher = "read_file"\n'
            f"hooks = [{{ argv = {json.dumps(argv)}, timeout_seconds = 30 }}]\n"
        )
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text(f"contents of {name}\n")
    server.queue(
        tool_calls_sse(*[("read_file", {"path": n}) for n in ("a.txt", "b.txt", "c.txt")]),
        text_sse("done"),
    )
    code, events, stderr = run_exec(tmp_path, "read them")
    assert code == 0, stderr
    # call order in the log and in the request
    outputs = [
        e["item"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]
    assert [o["tool_call_id"] for o in outputs] == ["c0", "c1", "c2"]
    tool_msgs = [m for m in server.requests[1].json()["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["c0", "c1", "c2"]
    for name, m in zip(("a.txt", "b.txt", "c.txt"), tool_msgs, strict=True):
        assert f"contents of {name}" in m["content"]
    return sorted(p.name for p in meet.iterdir() if p.name.endswith(".met"))


def test_reads_of_one_response_run_together(tmp_path: Path, sse_server: SSEServer) -> None:
    met = _run(tmp_path, sse_server, parallel=4, wait=20)
    assert met == ["a.txt.met", "b.txt.met", "c.txt.met"]


def test_a_limit_of_one_runs_the_reads_in_turn(tmp_path: Path, sse_server: SSEServer) -> None:
    # each hook waits (bounded, 0.3 s) for the others: only the last one finds them started
    assert _run(tmp_path, sse_server, parallel=1, wait=0.3) == ["c.txt.met"]
