"""Context management end to end: the real `vtcode exec --json` on replay scripts
(`fixtures/scripts/context-*.toml`), one scenario per trigger and failure path.

Each checks what a user relies on (exit code, terminal event, the compaction boundary and its
artifacts, the files left for the next session), validates every raw line against the published
`thread-event` schema and every canonical line against `versioned-thread-event`, and compares the
whole normalised sequence with a reviewed syrupy snapshot.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import SCRIPTS, SESSION, canonical_lines, normalise, raw_events
from tests.exec_support import vtcode as _vtcode

ENV = {"VTCODE_TOKENIZER": "bytes"}
HASH = re.compile(r"\b[0-9a-f]{64}\b")
SEGMENT = re.compile(r"\bseg-(\d{3})-[0-9a-f]{12}\b")


def vtcode(args: list[str], ws: Path, env: dict[str, str] | None = None) -> Any:
    return _vtcode(args, ws, env={**ENV, **(env or {})})


def run(
    ws: Path,
    script: str,
    prompt: str,
    *,
    pre: tuple[str, ...] = (),
    resume: bool = False,
    env: dict[str, str] | None = None,
) -> tuple[int, list[dict[str, Any]], str]:
    target = ["resume", SESSION, prompt] if resume else ["--session-id", SESSION, prompt]
    args = [*pre, "exec", "--json", "--script", str(SCRIPTS / f"{script}.toml"), *target]
    proc = vtcode(args, ws, env)
    events = raw_events(proc.stdout)  # asserts each line against the thread-event schema
    return proc.returncode, events, proc.stderr


def norm(events: list[dict[str, Any]], ws: Path) -> list[dict[str, Any]]:
    text = json.dumps([normalise(e, ws) for e in events])
    text = SEGMENT.sub(r"seg-\1-<hash>", HASH.sub("<sha256>", text))
    return list(json.loads(text))


def boundaries(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "thread.compact_boundary"]


def check_canonical(ws: Path, events: list[dict[str, Any]]) -> None:
    """stdout carries exactly the canonical events of this run (the log's tail), in order."""
    lines = [line["event"] for line in canonical_lines(ws)]
    assert lines[-len(events) :] == events


def read_transcript(ws: Path, session: str = SESSION) -> list[dict[str, Any]]:
    path = ws / ".vtcode" / "sessions" / session / "transcript.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


# ------------------------------------------------------------------------------ auto (hard)


def test_auto_compaction_at_the_hard_threshold_in_a_tool_loop(
    tmp_path: Path, snapshot_json: Any
) -> None:
    rc, events, err = run(tmp_path, "context-auto", "count the files")
    assert rc == 0, err
    check_canonical(tmp_path, events)
    [b] = boundaries(events)
    assert (b["trigger"], b["mode"]) == ("auto", "local")
    assert b["thread_id"] == SESSION
    assert b["previous_segment_id"] != b["new_segment_id"]
    assert b["previous_prefix_hash"] != b["new_prefix_hash"]
    assert b["previous_catalog_hash"] == b["new_catalog_hash"]
    # the boundary sits between the tool round and the next model request
    i = types(events).index("thread.compact_boundary")
    assert types(events)[i - 1] == "turn.completed" and types(events)[i + 1] == "turn.started"
    artifact = tmp_path / b["history_artifact_path"]
    head, *msgs = artifact.read_text().splitlines()
    meta = json.loads(head)
    assert meta["kind"] == "vtcode.history_archive"
    assert (meta["trigger"], meta["mode"], meta["summary_source"]) == ("auto", "local", "local")
    assert len(msgs) == b["original_message_count"] == meta["original_message_count"]
    assert json.loads(msgs[0]) == {"role": "user", "content": "count the files"}
    envelope = json.loads(artifact.with_name(artifact.stem + ".memory.json").read_text())
    assert envelope["schema_version"] == 3
    assert envelope["history_artifact_path"] == b["history_artifact_path"]
    summary = (tmp_path / ".vtcode/memories/compaction_summary.md").read_text()
    assert summary.startswith("# Compaction Summary") and "## Goal" in summary
    assert not (tmp_path / "memories").exists()  # upstream's workspace-root folder: not used
    assert norm(events, tmp_path) == snapshot_json


# ------------------------------------------------------------------------------ soft pending


def test_soft_threshold_defers_to_the_next_outer_boundary(
    tmp_path: Path, snapshot_json: Any
) -> None:
    rc, first, err = run(tmp_path, "context-soft-1", "do the task")
    assert rc == 0, err
    assert boundaries(first) == []  # soft inside the tool loop: pending only, never mid-loop
    state = json.loads((tmp_path / f".vtcode/sessions/{SESSION}/context/state.json").read_text())
    assert state["compaction_pending"] is True
    rc, second, err = run(tmp_path, "context-soft-2", "now the second part", resume=True)
    assert rc == 0, err
    check_canonical(tmp_path, second)
    [b] = boundaries(second)
    # the resumed run's start is the outer boundary: compaction before the first request
    assert types(second)[:2] == ["thread.started", "thread.compact_boundary"]
    assert b["trigger"] == "auto" and b["mode"] == "local"
    meta = json.loads((tmp_path / b["history_artifact_path"]).read_text().splitlines()[0])
    assert meta["summary_source"] == "provider"
    summary = (tmp_path / ".vtcode/memories/compaction_summary.md").read_text()
    assert "First part done (provider summary)." in summary
    state = json.loads((tmp_path / f".vtcode/sessions/{SESSION}/context/state.json").read_text())
    assert state["compaction_pending"] is False
    assert norm(second, tmp_path) == snapshot_json


# ------------------------------------------------------------------------------ recovery


def test_recovery_compaction_then_one_successful_retry(tmp_path: Path, snapshot_json: Any) -> None:
    rc, events, err = run(tmp_path, "context-recovery", "run the check")
    assert rc == 0, err
    check_canonical(tmp_path, events)
    [b] = boundaries(events)
    assert (b["trigger"], b["mode"]) == ("recovery", "local")
    harness = [e["item"] for e in events if e.get("item", {}).get("type") == "harness"]
    assert [h["event"] for h in harness] == ["error_recovered"]
    assert events[-1]["subtype"] == "success"
    assert norm(events, tmp_path) == snapshot_json


def test_recovery_runs_even_with_auto_compaction_off_and_a_second_failure_blocks(
    tmp_path: Path, snapshot_json: Any
) -> None:
    # no plain transient retries: the failure on the one recovery retry is final at once
    off = ("-c", "agent.harness.auto_compaction_enabled=false", "-c", "agent.max_task_retries=0")
    rc, events, err = run(tmp_path, "context-recovery-blocked", "run the check", pre=off)
    assert rc == 1, err
    check_canonical(tmp_path, events)
    assert [b["trigger"] for b in boundaries(events)] == ["recovery"]
    done = events[-1]
    assert (done["subtype"], done["outcome_code"]) == ("error_during_execution", "blocked")
    assert "result" not in done
    assert types(events)[-2] == "turn.failed"
    written = [
        e["item"]["path"]
        for e in events
        if e.get("item", {}).get("type") == "harness"
        and e["item"]["event"] == "blocked_handoff_written"
    ]
    assert len(written) == 2 and written[0] == ".vtcode/tasks/current_blocked.md"
    assert written[1].startswith(".vtcode/tasks/blockers/")
    text = (tmp_path / written[0]).read_text()
    assert text.startswith(f"---\nsession_id: {SESSION}\noutcome: blocked\n")
    for section in (
        "# Blocker Summary",
        "# Current Tracker Snapshot",
        "# Relevant Paths",
        "# Resume Metadata",
    ):
        assert section in text
    assert (tmp_path / written[1]).read_text() == text
    assert norm(events, tmp_path) == snapshot_json


# ------------------------------------------------------------------------------ reset


def _hook_toml(event: str, argv: list[str], matcher: str | None = None) -> str:
    m = f'matcher = "{matcher}"\n' if matcher else ""
    return f"[[hooks.lifecycle.{event}]]\n{m}hooks = [{{ argv = {json.dumps(argv)} }}]\n"


def test_reset_on_stall_writes_the_manifest_and_restarts_from_orientation(
    tmp_path: Path, snapshot_json: Any
) -> None:
    # session_start runs again with source "clear" when the loop reorients after the reset
    keep = "import sys; open('seen.json', 'w').write(sys.stdin.read())"
    (tmp_path / "vtcode.toml").write_text(
        '[agent.harness]\ncontext_reset_mode = "on_stall"\n\n'
        + _hook_toml("session_start", [sys.executable, "-c", keep], matcher="clear")
    )
    rc, events, err = run(
        tmp_path, "context-reset-stall", "implement the spec", env={"VTCODE_TRUST_WORKSPACE": "1"}
    )
    assert rc == 0, err
    check_canonical(tmp_path, events)
    assert json.loads((tmp_path / "seen.json").read_text())["source"] == "clear"
    # the manifest was read by the fresh orientation, then consumed (one-shot)
    assert not (tmp_path / ".vtcode/tasks/current_context_reset.md").exists()
    # the conversation restarted from the original request alone
    transcript = read_transcript(tmp_path)
    users = [i for i, m in enumerate(transcript) if m["role"] == "user"]
    assert [transcript[i]["content"] for i in users] == ["implement the spec"] * 2
    assert transcript[users[1] - 1]["role"] == "tool" and users[1] == len(transcript) - 2
    assert boundaries(events) == [] and "context.reset" not in types(events)
    assert events[-1]["subtype"] == "success"
    assert norm(events, tmp_path) == snapshot_json


def test_reset_manifest_is_written_in_upstream_format(tmp_path: Path) -> None:
    """Without an orient part to consume it, the manifest the reset wrote stays readable."""
    from vtcode.config.model import AgentConfig, ContextResetMode, HarnessConfig, VtcodeConfig
    from vtcode.loop.recorder import Recorder
    from vtcode.providers.replay import ReplayProvider
    from vtcode.providers.script import ReplayScript
    from vtcode.runtime.hooks import context_parts

    cfg = VtcodeConfig(
        agent=AgentConfig(harness=HarnessConfig(context_reset_mode=ContextResetMode.ON_STALL))
    )
    (tmp_path / ".vtcode/sessions/s").mkdir(parents=True)
    part = context_parts(
        workspace=tmp_path, session_id="s", config=cfg, provider=ReplayProvider(ReplayScript())
    ).context
    part.on_turn_end(made_progress=False)
    assert not part.reset_due()
    part.on_turn_end(made_progress=False)
    assert part.reset_due()
    part.reset(Recorder(lambda e: None))
    text = (tmp_path / ".vtcode/tasks/current_context_reset.md").read_text()
    assert re.fullmatch(
        r"# Context Reset Manifest\n\n - \*\*Triggered at:\*\* \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n"
        r" - \*\*Trigger:\*\* stall\n - \*\*Stall count:\*\* 2\n\n"
        r"This session starts fresh from external artifacts only.\n"
        r"Read the current feature list and progress tracker to reorient.\n",
        text,
    )
    assert not part.reset_due()  # the stall count starts over


def test_reset_on_compaction(tmp_path: Path, snapshot_json: Any) -> None:
    pre = ("-c", 'agent.harness.context_reset_mode="on_compaction"')
    rc, events, err = run(tmp_path, "context-reset-compaction", "tidy the repo", pre=pre)
    assert rc == 0, err
    assert [b["trigger"] for b in boundaries(events)] == ["auto"]
    assert events[-1]["subtype"] == "success"
    assert not (tmp_path / ".vtcode/tasks/current_context_reset.md").exists()
    assert norm(events, tmp_path) == snapshot_json


def test_a_pending_manifest_is_consumed_by_the_next_session(tmp_path: Path) -> None:
    from vtcode.context.reset import write_reset_manifest

    write_reset_manifest(tmp_path, trigger="stall", stall_count=3)
    rc, _, err = run(tmp_path, "scenario-success", "hello")
    assert rc == 0, err
    assert not (tmp_path / ".vtcode/tasks/current_context_reset.md").exists()


# ------------------------------------------------------------------------------ hooks


PRE_COMPACT_HOOK = """
import json, os, sys
payload = json.load(sys.stdin)
path = payload.get("history_artifact_path")
json.dump({"payload": payload, "artifact_exists": bool(path) and os.path.exists(path),
           "event": os.environ.get("VT_HOOK_EVENT"), "secret": os.environ.get("SECRET_TOKEN")},
          open(sys.argv[1], "w"))
"""


def test_pre_compact_hook_receives_the_exact_payload(tmp_path: Path) -> None:
    (tmp_path / "hook.py").write_text(PRE_COMPACT_HOOK)
    (tmp_path / "vtcode.toml").write_text(
        _hook_toml("pre_compact", [sys.executable, "hook.py", "seen.json"], matcher="auto")
        + _hook_toml("post_compact", [sys.executable, "hook.py", "after.json"], matcher="auto")
    )
    rc, events, err = run(
        tmp_path,
        "context-auto",
        "count the files",
        env={"VTCODE_TRUST_WORKSPACE": "1", "SECRET_TOKEN": "canary"},
    )
    assert rc == 0, err
    [b] = boundaries(events)
    seen = json.loads((tmp_path / "seen.json").read_text())
    transcript = tmp_path / f".vtcode/sessions/{SESSION}/transcript.jsonl"
    assert seen["payload"] == {
        "session_id": SESSION,
        "cwd": str(tmp_path),
        "hook_event_name": "PreCompact",
        "transcript_path": str(transcript),
        "trigger": "auto",
        "mode": "local",
        "original_message_count": b["original_message_count"],
        "compacted_message_count": b["compacted_message_count"],
        "history_artifact_path": b["history_artifact_path"],
    }
    assert seen["artifact_exists"] is True  # the real path, written before the hook runs
    assert seen["event"] == "PreCompact" and seen["secret"] is None
    after = json.loads((tmp_path / "after.json").read_text())  # post_compact (issue 25.2)
    assert after["payload"] == {**seen["payload"], "hook_event_name": "PostCompact"}
    assert after["event"] == "PostCompact"
    assert not [e for e in events if e.get("item", {}).get("type") == "error"]


DENY_HOOK = """
import json, sys
call = json.load(sys.stdin)
if call["tool_name"] == "exec_command" and "rm -rf" in call["tool_input"]["command"]:
    sys.stderr.write("no rm -rf in this repo")
    sys.exit(2)
"""


def test_pre_tool_use_hook_denies_a_call(tmp_path: Path, snapshot_json: Any) -> None:
    (tmp_path / "deny.py").write_text(DENY_HOOK)
    (tmp_path / "vtcode.toml").write_text(
        _hook_toml("pre_tool_use", [sys.executable, "deny.py"], matcher="exec_command")
    )
    rc, events, err = run(
        tmp_path, "context-hook-deny", "clean up", env={"VTCODE_TRUST_WORKSPACE": "1"}
    )
    assert rc == 0, err
    check_canonical(tmp_path, events)
    inv = [
        e["item"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_invocation"
    ]
    assert [(i["status"], i.get("outcome")) for i in inv] == [("failed", "hook_denied")]
    out = [
        e["item"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]
    assert out[0]["output"] == "blocked by pre_tool_use hook: no rm -rf in this repo"
    assert not (tmp_path / "build").exists()
    assert norm(events, tmp_path) == snapshot_json


def test_untrusted_workspace_hooks_are_skipped_with_one_warning(tmp_path: Path) -> None:
    (tmp_path / "deny.py").write_text(DENY_HOOK)
    (tmp_path / "vtcode.toml").write_text(
        _hook_toml("pre_tool_use", [sys.executable, "deny.py"])
        + _hook_toml("stop", [sys.executable, "-c", "open('stopped', 'w')"])
    )
    rc, events, err = run(tmp_path, "list-files", "list the files")
    assert rc == 0, err
    warnings = [e["item"]["message"] for e in events if e.get("item", {}).get("type") == "error"]
    untrusted = [w for w in warnings if "not trusted" in w]
    assert len(untrusted) == 1 and "skipped 2 hook(s)" in untrusted[0]
    assert not (tmp_path / "stopped").exists()
    # trusting the exact definitions (outside the repo) lets them run
    assert vtcode(["hooks", "trust"], tmp_path).returncode == 0
    assert (tmp_path / ".home" / "trust.json").exists()
    (tmp_path / ".vtcode").rename(tmp_path / "old-vtcode")
    rc, events, err = run(tmp_path, "list-files", "list the files")
    assert rc == 0, err
    assert (tmp_path / "stopped").exists()
    assert not [e for e in events if "not trusted" in e.get("item", {}).get("message", "")]


# ------------------------------------------------------------------------------ steering


def _wait_for(predicate: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_steer_from_another_process_while_the_run_waits(tmp_path: Path, snapshot_json: Any) -> None:
    args = [
        sys.executable,
        "-m",
        "vtcode",
        "exec",
        "--json",
        "--script",
        str(SCRIPTS / "context-steer.toml"),
        "--session-id",
        SESSION,
        "run the long job",
    ]
    env = {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(tmp_path / ".home"), **ENV}
    proc = subprocess.Popen(
        args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # wait for a real signal: turn 2's write_stdin call
            lines.append(line)
            ev = json.loads(line)
            item = ev.get("item", {})
            if ev["type"] == "item.started" and item.get("tool_name") == "write_stdin":
                break
        steer = vtcode(["steer", "--json", SESSION, "also report the exit code"], tmp_path)
        assert steer.returncode == 0, steer.stderr
        answer = json.loads(steer.stdout)
        assert answer["running"] is True and answer["pending"] == 1
        (tmp_path / "release").write_text("")
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    events = raw_events("".join(lines) + rest)
    check_canonical(tmp_path, events)
    transcript = read_transcript(tmp_path)
    tagged = [m for m in transcript if m.get("intent_id")]
    assert [(m["role"], m["content"], m["intent_id"]) for m in tagged] == [
        ("user", "also report the exit code", answer["id"])
    ]
    # after the tool round, before the next request
    roles = [m["role"] for m in transcript]
    assert roles[roles.index("user", 1) - 1] == "tool"
    queue = json.loads((tmp_path / f".vtcode/sessions/{SESSION}/steering/queue.json").read_text())
    assert queue["pending"] == [] and queue["applied_intent_ids"] == [answer["id"]]
    assert norm(events, tmp_path) == snapshot_json


def test_steer_rejects_unknown_sessions_and_a_full_queue(tmp_path: Path) -> None:
    missing = vtcode(["steer", "nope", "hi"], tmp_path)
    assert missing.returncode == 2 and "no session 'nope'" in missing.stderr
    bad = vtcode(["steer", "../x", "hi"], tmp_path)
    assert bad.returncode == 2 and "invalid session id" in bad.stderr
    rc, _, err = run(tmp_path, "scenario-success", "hello")
    assert rc == 0, err
    for i in range(16):
        assert vtcode(["steer", SESSION, f"t{i}"], tmp_path).returncode == 0
    full = vtcode(["steer", SESSION, "one more"], tmp_path)
    assert full.returncode == 75 and "queue is full (capacity 16)" in full.stderr
    assert "Traceback" not in full.stderr


def test_pending_follow_ups_apply_when_a_finished_session_is_resumed(tmp_path: Path) -> None:
    rc, _, err = run(tmp_path, "scenario-resume-1", "write a note")
    assert rc == 0, err
    queued = vtcode(["steer", "--json", SESSION, "and mention the date"], tmp_path)
    assert queued.returncode == 0
    rc, _events, err = run(tmp_path, "scenario-resume-2", "add a second line", resume=True)
    assert rc == 0, err
    transcript = (tmp_path / f".vtcode/sessions/{SESSION}/transcript.jsonl").read_text()
    assert transcript.count("and mention the date") == 1
    queue = json.loads((tmp_path / f".vtcode/sessions/{SESSION}/steering/queue.json").read_text())
    assert queue["pending"] == []


# ------------------------------------------------------------------------------ manual compact


def test_manual_compact_rewrites_the_transcript_and_appends_a_boundary(tmp_path: Path) -> None:
    (tmp_path / "hook.py").write_text(PRE_COMPACT_HOOK)
    (tmp_path / "vtcode.toml").write_text(
        _hook_toml("pre_compact", [sys.executable, "hook.py", "seen.json"])
    )
    trust = {"VTCODE_TRUST_WORKSPACE": "1"}
    # a history long enough that compacting it makes it smaller (a short one is left alone)
    rc, _, err = run(tmp_path, "scenario-tool-loop", "go " + "with context " * 3000, env=trust)
    assert rc == 0, err
    before = canonical_lines(tmp_path)
    proc = vtcode(["compact", "--json", SESSION], tmp_path, trust)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    after = canonical_lines(tmp_path)
    assert after[: len(before)] == before  # nothing already written changed
    [line] = after[len(before) :]
    b = line["event"]
    assert b["type"] == "thread.compact_boundary" and b["trigger"] == "manual"
    assert b["mode"] == "local" and b["history_artifact_path"] == report["history_artifact_path"]
    assert b["previous_catalog_hash"] == b["new_catalog_hash"]
    assert line["seq"] == report["seq"] == len(after)
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["payload"]["trigger"] == "manual" and seen["artifact_exists"] is True
    transcript = read_transcript(tmp_path)
    assert len(transcript) == b["compacted_message_count"]
    assert transcript[0]["content"].startswith("Previous conversation summary:\n")
    archived = (tmp_path / b["history_artifact_path"]).read_text().splitlines()
    assert len(archived) - 1 == b["original_message_count"]


def test_manual_compact_refuses_bad_input_without_changing_anything(tmp_path: Path) -> None:
    missing = vtcode(["compact", "nope"], tmp_path)
    assert missing.returncode == 2 and "no session 'nope'" in missing.stderr
    rc, _, err = run(tmp_path, "scenario-success", "hello")
    assert rc == 0, err
    transcript = tmp_path / f".vtcode/sessions/{SESSION}/transcript.jsonl"
    transcript.write_text(transcript.read_text() + "{torn\n")
    before_t, before_e = transcript.read_bytes(), canonical_lines(tmp_path)
    proc = vtcode(["compact", SESSION], tmp_path)
    assert proc.returncode == 2
    assert f"{transcript}:" in proc.stderr and "nothing was changed" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert transcript.read_bytes() == before_t and canonical_lines(tmp_path) == before_e
    assert not (tmp_path / ".vtcode/history").exists()


def test_manual_compact_of_a_running_session_is_busy(tmp_path: Path) -> None:
    from vtcode.store.layout import lock_path
    from vtcode.store.locks import session_lock

    rc, _, err = run(tmp_path, "scenario-success", "hello")
    assert rc == 0, err
    lock = session_lock(lock_path(tmp_path, SESSION))
    lock.acquire(1.0)
    try:
        proc = vtcode(["compact", SESSION], tmp_path)
    finally:
        lock.release()
    assert proc.returncode == 75 and "running vtcode" in proc.stderr


def test_fork_starts_a_new_session_from_the_minimal_artifact(tmp_path: Path) -> None:
    rc, _, err = run(tmp_path, "scenario-resume-1", "write a note")
    assert rc == 0, err
    proc = vtcode(
        [
            "exec",
            "--json",
            "--script",
            str(SCRIPTS / "scenario-resume-2.toml"),
            "--session-id",
            "forked",
            "resume",
            "--fork",
            SESSION,
            "add a second line",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    transcript = read_transcript(tmp_path, "forked")
    assert [m["role"] for m in transcript[:3]] == ["system", "system", "user"]
    assert transcript[0]["content"].startswith("Previous conversation summary:\n")
    assert transcript[2]["content"] == "write a note"
    assert not any(m["role"] == "tool" for m in transcript[:3])  # no continuity tail
