"""The plan-build-evaluate continuation through the real CLI (issue 25 item 3).

A scripted model at a recording 127.0.0.1 server keeps a `task_tracker` plan whose step has a
`verify` command (run by the harness through the sandboxed `exec_command`). A finish is
accepted only when the command passes: failing twice and then passing is a success after two
revision rounds; never passing ends `blocked` with a blocked handoff, never success.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

from tests.conftest import SSEServer
from tests.exec_support import SESSION, normalise, vtcode
from tests.loop.harness_support import configure, run_exec, text_sse, tool_calls_sse

CONFIG = (
    '[agent.harness]\norchestration_mode = "plan_build_evaluate"\n'
    'continuation_policy = "all"\nmax_revision_rounds = 2\n'
)
PLAN = {"steps": [{"title": "create ok.txt", "status": "completed", "verify": "test -f ok.txt"}]}


def _harness(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [
        (e["item"]["event"], e["item"].get("exit_code"))
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "harness"
    ]


def _stable(event: dict[str, Any]) -> dict[str, Any]:
    item = event.get("item")
    if isinstance(item, dict) and item.get("type") == "harness":
        item = {k: v for k, v in item.items() if k != "duration_ms"}
        return {**event, "item": item}
    return event


def test_verify_fails_twice_then_passes(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    configure(tmp_path, sse_server, CONFIG)
    sse_server.queue(
        tool_calls_sse(("task_tracker", PLAN), prefix="p"),
        text_sse("All done."),
        text_sse("It is done, really."),
        tool_calls_sse(("write_file", {"path": "ok.txt", "content": "ok\n"}), prefix="w"),
        text_sse("Created ok.txt; done."),
    )
    code, events, stderr = run_exec(tmp_path, "create ok.txt")
    assert code == 0, stderr
    # the tool is offered: the mode is set in the config
    tools = [t["function"]["name"] for t in sse_server.requests[0].json()["tools"]]
    assert "task_tracker" in tools
    # the revision messages name what failed
    second = sse_server.requests[2].json()["messages"][-1]
    assert second["role"] == "user" and "test -f ok.txt" in second["content"]
    assert _harness(events) == [
        ("evaluation_started", None),
        ("verification_started", None),
        ("verification_failed", 1),
        ("evaluation_failed", None),
        ("continuation_started", None),
        ("revision_started", None),
        ("evaluation_started", None),
        ("verification_started", None),
        ("verification_failed", 1),
        ("evaluation_failed", None),
        ("continuation_started", None),
        ("revision_started", None),
        ("evaluation_started", None),
        ("verification_started", None),
        ("verification_passed", 0),
        ("evaluation_passed", None),
    ]
    done = events[-1]
    assert done["subtype"] == "success" and done["result"] == "Created ok.txt; done."
    assert [_stable(normalise(e, tmp_path)) for e in events] == snapshot_json


def test_verify_that_never_passes_ends_blocked(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server, CONFIG)
    sse_server.queue(
        tool_calls_sse(("task_tracker", PLAN), prefix="p"),
        *[text_sse("Done.") for _ in range(3)],
    )
    code, events, stderr = run_exec(tmp_path, "create ok.txt")
    assert code == 1, stderr
    assert len(sse_server.requests) == 4  # the first answer and two revision rounds
    kinds = [k for k, _ in _harness(events)]
    assert kinds.count("verification_failed") == 3
    assert kinds.count("revision_started") == 2
    assert kinds[-2:] == ["blocked_handoff_written", "blocked_handoff_written"]
    done = events[-1]
    assert done["type"] == "thread.completed"
    assert done["subtype"] == "error_during_execution" and done["outcome_code"] == "blocked"
    assert "result" not in done or done["result"] is None
    handoffs = list((tmp_path / ".vtcode").rglob("*blocked*"))
    assert handoffs, "a blocked handoff is written"
    assert "test -f ok.txt" in "".join(p.read_text() for p in handoffs if p.is_file())


def test_a_step_left_pending_is_not_done(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(
        tmp_path, sse_server, CONFIG.replace("max_revision_rounds = 2", "max_revision_rounds = 0")
    )
    plan = {"steps": [{"title": "write the docs"}]}
    sse_server.queue(tool_calls_sse(("task_tracker", plan), prefix="p"), text_sse("Done."))
    code, events, _ = run_exec(tmp_path, "write docs")
    assert code == 1
    assert events[-1]["outcome_code"] == "blocked"
    assert "is pending, not completed" in json.dumps(events)


def test_dry_run_plans_without_writing(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server)
    (tmp_path / "app.py").write_text("print('hi')\n")
    plan = {"steps": [{"title": "add a test", "verify": "python3 -m pytest -q"}]}
    sse_server.queue(
        tool_calls_sse(
            ("read_file", {"path": "app.py"}),
            ("write_file", {"path": "new.py", "content": "x = 1\n"}),
            ("exec_command", {"command": "touch made-by-command"}),
            ("task_tracker", plan),
            prefix="d",
        ),
        text_sse("Plan: add a test."),
    )
    proc = vtcode(
        ["exec", "--dry-run", "--session-id", SESSION, "--provider", "local", "-q", "plan it"],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "new.py").exists() and not (tmp_path / "made-by-command").exists()
    assert "Plan:\n1. [pending] add a test (verify: python3 -m pytest -q)" in proc.stdout
    # the catalog the model was offered: read-only tools and the tracker, nothing that writes
    tools = {t["function"]["name"] for t in sse_server.requests[0].json()["tools"]}
    assert tools == {"read_file", "list_files", "grep", "task_tracker"}
    assert "dry run" in sse_server.requests[0].json()["messages"][0]["content"]
    # single pass: the pending step is not evaluated, no revision round
    assert len(sse_server.requests) == 2
