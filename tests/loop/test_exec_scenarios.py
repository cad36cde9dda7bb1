"""End-to-end `vtcode exec` on the replay provider: real loop, real tools, real persistence.

Each scenario runs the real CLI in a fresh workspace and checks what users rely on: the exit code
of the README's table, the terminal `thread.completed`, that stdout (`--json`) carries exactly the
canonical events in the same order, that every line validates against the published schemas and
passes `vtcode validate`, and a reviewed syrupy snapshot of the whole normalised sequence.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import (
    SCRIPTS,
    SESSION,
    canonical_lines,
    canonical_snapshot,
    normalise,
    raw_events,
    spawn_vtcode,
    vtcode,
    wait_for_path,
)

FAST = ["-c", "agent.task_retry_backoff_secs=0"]

SCENARIOS: list[tuple[str, list[str], int, str, str]] = [
    # (script, extra args, exit code, subtype, outcome_code)
    ("scenario-success", [], 0, "success", "success"),
    ("scenario-tool-loop", [], 0, "success", "success"),
    (
        "scenario-denied-tool",
        ["-c", 'permissions.deny=["exec_command(rm *)"]'],
        0,
        "success",
        "success",
    ),
    ("scenario-failing-command", [], 0, "success", "success"),
    ("scenario-long-command", [], 0, "success", "success"),
    ("scenario-max-turns", ["--max-turns", "2"], 3, "error_max_turns", "turn_limit_reached"),
    (
        "scenario-budget",
        ["--max-budget-usd", "0.02"],
        4,
        "error_max_budget_usd",
        "budget_limit_reached",
    ),
    ("scenario-unknown-pricing", ["--max-budget-usd", "0.01"], 0, "success", "success"),
    ("scenario-provider-retry", [], 0, "success", "success"),
    ("scenario-provider-fatal", [], 1, "error_during_execution", "failed"),
    ("scenario-max-output-tokens", [], 1, "error_during_execution", "max_output_tokens"),
    ("scenario-max-output-tokens-tool", [], 1, "error_during_execution", "max_output_tokens"),
    ("scenario-empty-reply", [], 1, "error_during_execution", "empty_response"),
    ("scenario-invalid-tool", [], 0, "success", "success"),
    (
        "scenario-tool-loop-limit",
        ["-c", "tools.max_tool_loops=2"],
        1,
        "error_during_execution",
        "tool_loop_limit_reached",
    ),
    ("scenario-loop-detected", [], 1, "error_during_execution", "loop_detected"),
    ("scenario-script-exhausted", [], 1, "error_during_execution", "failed"),
    (
        "scenario-multi-tools",
        ["-c", "agent.harness.max_tool_calls_per_turn=2"],
        0,
        "success",
        "success",
    ),
    ("scenario-large-args", [], 0, "success", "success"),
    ("demo", [], 0, "success", "success"),
]


def _run(tmp: Path, script: str, extra: list[str], prompt: str = "do the task") -> Any:
    # The global -c options go before the command name.
    glob = [a for i, a in enumerate(extra) if a == "-c" or (i and extra[i - 1] == "-c")]
    local = [a for a in extra if a not in glob]
    return vtcode(
        [
            *FAST,
            *glob,
            "exec",
            "--json",
            "--session-id",
            SESSION,
            "--script",
            str(SCRIPTS / f"{script}.toml"),
            *local,
            prompt,
        ],
        tmp,
    )


@pytest.mark.parametrize(
    ("script", "extra", "rc", "subtype", "code"), SCENARIOS, ids=[s[0] for s in SCENARIOS]
)
def test_scenario(
    tmp_path: Path,
    snapshot_json: Any,
    script: str,
    extra: list[str],
    rc: int,
    subtype: str,
    code: str,
) -> None:
    proc = _run(tmp_path, script, extra)
    assert proc.returncode == rc, proc.stderr
    events = raw_events(proc.stdout)
    assert events[0] == {"type": "thread.started", "thread_id": SESSION}
    done = events[-1]
    assert done["type"] == "thread.completed"
    assert (done["subtype"], done["outcome_code"]) == (subtype, code)
    assert ("result" in done) == (subtype == "success")
    assert [e["type"] for e in events].count("thread.completed") == 1
    # stdout carries exactly the canonical events, in the same order
    canonical = [line["event"] for line in canonical_lines(tmp_path)]
    assert canonical == events
    check = vtcode(
        ["validate", "--json", str(tmp_path / ".vtcode/sessions" / SESSION / "events.jsonl")],
        tmp_path,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert [normalise(e, tmp_path) for e in events] == snapshot_json(name="raw")
    assert canonical_snapshot(tmp_path) == snapshot_json(name="canonical")


SNAPSHOTS = Path(__file__).parent / "__snapshots__" / "test_exec_scenarios"
PATH_SENSITIVE = ["demo", "scenario-failing-command", "scenario-long-command", "scenario-success"]


@pytest.mark.parametrize("script", PATH_SENSITIVE)
def test_scenario_snapshots_do_not_depend_on_the_temp_path(tmp_path: Path, script: str) -> None:
    """The same scenario from a workspace whose path is much longer gives byte-identical
    normalised sequences, equal to `test_scenario`'s reviewed snapshots (so CI cannot turn red
    because another user, or `pytest-9` becoming `pytest-10`, changed the temp path length)."""
    row = next(s for s in SCENARIOS if s[0] == script)
    deep = tmp_path / ("deeper-" * 12) / "and-deeper" / "ws"
    deep.mkdir(parents=True)
    proc = _run(deep, script, row[1])
    assert proc.returncode == row[2], proc.stderr
    raw = [normalise(e, deep) for e in raw_events(proc.stdout)]
    for kind, got in (("raw", raw), ("canonical", canonical_snapshot(deep))):
        reviewed = json.loads((SNAPSHOTS / f"test_scenario[{script}][{kind}].json").read_text())
        assert got == reviewed, f"{script} [{kind}] differs from its snapshot at a longer path"


def test_turn_usage_is_per_turn_and_thread_usage_is_the_sum(tmp_path: Path) -> None:
    proc = _run(tmp_path, "scenario-tool-loop", [])
    events = raw_events(proc.stdout)
    turns = [e["usage"] for e in events if e["type"] == "turn.completed"]
    assert [t["input_tokens"] for t in turns] == [1200, 1400, 1600, 1800]
    total = events[-1]["usage"]
    for key in total:
        assert total[key] == sum(t[key] for t in turns)
    assert events[-1]["num_turns"] == 4
    # 6000 in + 110 out at $3/$15 per Mtok, cached input at the input price
    assert events[-1]["total_cost_usd"] == pytest.approx((6000 * 3 + 110 * 15) / 1e6)


def test_unknown_pricing_warns_exactly_once_and_omits_cost(tmp_path: Path) -> None:
    proc = _run(tmp_path, "scenario-unknown-pricing", ["--max-budget-usd", "0.01"])
    events = raw_events(proc.stdout)
    warnings = [
        e
        for e in events
        if e["type"] == "item.completed"
        and e["item"]["type"] == "error"
        and "pricing is unknown" in e["item"]["message"]
    ]
    assert len(warnings) == 1
    assert "total_cost_usd" not in events[-1]


def test_budget_stops_before_the_next_request(tmp_path: Path) -> None:
    proc = _run(tmp_path, "scenario-budget", ["--max-budget-usd", "0.02"])
    events = raw_events(proc.stdout)
    assert events[-1]["num_turns"] == 2
    assert events[-1]["total_cost_usd"] > 0.02
    messages = [e["item"]["message"] for e in events if e.get("item", {}).get("type") == "error"]
    assert any(m.startswith("budget warning") for m in messages)


def test_max_turns_never_sends_an_extra_request(tmp_path: Path) -> None:
    proc = _run(tmp_path, "scenario-max-turns", ["--max-turns", "2"])
    events = raw_events(proc.stdout)
    texts = [e["item"].get("text", "") for e in events if e["type"] == "item.completed"]
    assert not any("must never be requested" in t for t in texts)
    assert events[-1]["num_turns"] == 2
    failed = [e for e in events if e["type"] == "turn.failed"]
    assert failed and failed[-1]["message"].startswith("Stopped after reaching turn limit")


def test_last_message_file_and_events_export(tmp_path: Path) -> None:
    out = tmp_path / "last.txt"
    export = tmp_path / "exports"
    proc = vtcode(
        [
            "exec",
            "-q",
            "--session-id",
            SESSION,
            "--script",
            str(SCRIPTS / "scenario-success.toml"),
            "--last-message-file",
            str(out),
            "--events",
            f"{export}/",  # a trailing slash asks for the folder form
            "hi",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    # text mode: stdout is the final answer (-q only silences progress)
    assert proc.stdout == "Hello from vtcode: nothing in the workspace needed changing.\n"
    assert out.read_text() == "Hello from vtcode: nothing in the workspace needed changing."
    files = list(export.glob(f"harness-{SESSION}-*.jsonl"))
    assert len(files) == 1
    exported = [json.loads(x) for x in files[0].read_text().splitlines()]
    assert exported == [line["event"] for line in canonical_lines(tmp_path)]


def test_human_progress_goes_to_stderr_only(tmp_path: Path) -> None:
    proc = vtcode(
        [
            "exec",
            "--session-id",
            SESSION,
            "--script",
            str(SCRIPTS / "scenario-tool-loop.toml"),
            "go",
        ],
        tmp_path,
    )
    assert proc.returncode == 0
    # stdout holds the final answer only; all progress is on stderr
    assert (
        proc.stdout == "Created hello.sh, ran it (it prints a greeting) and checked its content.\n"
    )
    assert "[TOOL]" in proc.stderr and "[OUTCOME] success" in proc.stderr


def test_prompt_from_stdin_and_missing_prompt(tmp_path: Path) -> None:
    proc = vtcode(
        ["exec", "--json", "--script", str(SCRIPTS / "scenario-success.toml"), "-"],
        tmp_path,
        input="hello from stdin\n",
    )
    assert proc.returncode == 0, proc.stderr
    proc = vtcode(["exec", "--script", str(SCRIPTS / "scenario-success.toml")], tmp_path)
    assert proc.returncode == 2
    assert "no prompt" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_session_id_creates_nothing(tmp_path: Path) -> None:
    proc = vtcode(["exec", "--session-id", "../escape", "hi"], tmp_path)
    assert proc.returncode == 2
    assert "invalid session id" in proc.stderr
    assert not (tmp_path / ".vtcode" / "sessions").exists() or not any(
        (tmp_path / ".vtcode" / "sessions").iterdir()
    )


def test_resume_appends_to_the_same_session(tmp_path: Path, snapshot_json: Any) -> None:
    first = _run(tmp_path, "scenario-resume-1", [], prompt="start a notes file")
    assert first.returncode == 0, first.stderr
    second = vtcode(
        [
            *FAST,
            "exec",
            "--json",
            "--script",
            str(SCRIPTS / "scenario-resume-2.toml"),
            "resume",
            SESSION,
            "add a second line",
        ],
        tmp_path,
    )
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "notes.txt").read_text() == "first line\nsecond line\n"
    lines = canonical_lines(tmp_path)
    types = [line["event"]["type"] for line in lines]
    assert types.count("thread.started") == 2 and types.count("thread.completed") == 2
    # item ids never repeat across the two runs of one session
    runs: list[set[str]] = []
    for line in lines:
        ev = line["event"]
        if ev["type"] == "thread.started":
            runs.append(set())
        elif "item" in ev:
            runs[-1].add(ev["item"]["id"])
    assert len(runs) == 2 and runs[0] and runs[1] and not runs[0] & runs[1]
    assert canonical_snapshot(tmp_path) == snapshot_json
    last = vtcode(
        [
            *FAST,
            "exec",
            "--json",
            "--script",
            str(SCRIPTS / "scenario-success.toml"),
            "resume",
            "--last",
            "again",
        ],
        tmp_path,
    )
    assert last.returncode == 0, last.stderr
    assert raw_events(last.stdout)[-1]["session_id"] == SESSION


def test_sigint_cancels_persists_and_exits_130(tmp_path: Path) -> None:
    proc = spawn_vtcode(
        [
            "exec",
            "--json",
            "--session-id",
            SESSION,
            "--script",
            str(SCRIPTS / "scenario-cancel.toml"),
            "sleep please",
        ],
        tmp_path,
    )
    assert proc.stdout is not None
    # the command itself says it is running (it creates started.flag): then interrupt it
    wait_for_path(tmp_path / "started.flag", proc, "the command")
    proc.send_signal(signal.SIGINT)
    rest = proc.stdout.read()
    proc.wait(timeout=60)
    assert proc.returncode == 130, proc.stderr.read() if proc.stderr else ""
    events = [json.loads(x) for x in rest.splitlines()]
    assert events[-1]["type"] == "thread.completed"
    assert events[-1]["subtype"] == "cancelled"
    assert any(e["type"] == "turn.failed" for e in events)
    canonical = [line["event"] for line in canonical_lines(tmp_path)]
    assert canonical == events
    outputs = [e["item"] for e in events if e.get("item", {}).get("type") == "tool_output"]
    assert outputs, "the cancelled command still reports its result"
    for item in outputs:
        printed = json.loads(item["output"]).get("output", "") if item["output"][:1] == "{" else ""
        assert "sleeping" in printed or not printed
        assert "never" not in printed, "the command was stopped, not run to completion"
