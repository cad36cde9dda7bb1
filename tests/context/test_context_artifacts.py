"""Context artifacts on disk and in context: envelope, segments, reset manifest, blocked handoff,
history archive, fork history."""

from __future__ import annotations

import datetime as dt
import json
import re
import stat
from pathlib import Path

import orjson
from syrupy.assertion import SnapshotAssertion

from vtcode.config.model import ContextResetMode, VtcodeConfig
from vtcode.context.archive import plan_archive, write_archive
from vtcode.context.blocked import write_blocked_handoff
from vtcode.context.digest import digest_history
from vtcode.context.envelope import ENVELOPE_HEADER, build_envelope, render_envelope
from vtcode.context.fork import fork_history
from vtcode.context.models import HistoryArchiveMeta, SessionMemoryEnvelope
from vtcode.context.reset import (
    consume_reset_manifest,
    parse_reset_manifest,
    read_reset_manifest,
    should_reset,
    write_reset_manifest,
)
from vtcode.context.segments import SegmentTracker, catalog_hash
from vtcode.jsontypes import encode
from vtcode.messages import Message, ModelRequest, ToolCall, ToolSpec
from vtcode.schemas import fast_validator
from vtcode.steering.models import QueuedFollowUpIntent
from vtcode.tools.registry import default_registry


def _history() -> list[Message]:
    return [
        Message(role="user", content="Ship the feature. Always run the tests."),
        Message(
            role="assistant",
            content="Writing it.",
            tool_calls=(ToolCall(id="c1", name="write_file", arguments='{"path":"f.py"}'),),
        ),
        Message(role="tool", content="wrote f.py", tool_call_id="c1", name="write_file"),
        Message(role="assistant", content="Which version? Done otherwise."),
    ]


# ------------------------------------------------------------------------------ envelope


def test_envelope_caps_lists_at_five_keeping_the_newest_and_validates() -> None:
    prev = SessionMemoryEnvelope(
        summary="old",
        generated_at="t0",
        touched_files=[f"old{i}.py" for i in range(5)],
        applied_intent_ids=[f"id{i}" for i in range(64)],
        objective="the first objective",
    )
    env = build_envelope(
        digest_history(_history()),
        session_id="s1",
        summary="new",
        generated_at="t1",
        previous=prev,
        pending_intents=[QueuedFollowUpIntent(id="p1", text="later")],
        applied_intent_ids=["id3", "fresh"],
        history_artifact_path=".vtcode/history/x.jsonl",
    )
    assert env.touched_files == ["old1.py", "old2.py", "old3.py", "old4.py", "f.py"]
    assert env.objective == "the first objective"  # the objective survives every boundary
    assert len(env.applied_intent_ids) == 64 and env.applied_intent_ids[-2:] == ["id3", "fresh"]
    assert env.pending_intents == [QueuedFollowUpIntent(id="p1", text="later")]
    assert env.schema_version == 3
    assert fast_validator("session-memory-envelope").is_valid(encode(env))


def test_envelope_rendering(snapshot: SnapshotAssertion) -> None:
    env = build_envelope(
        digest_history(_history()),
        session_id="s1",
        summary="The summary.",
        generated_at="2026-01-01T00:00:00+00:00",
        history_artifact_path=".vtcode/history/s1_0003_20260101T000000Z.jsonl",
    )
    text = render_envelope(env)
    assert text.startswith(ENVELOPE_HEADER)
    assert text == snapshot
    assert "Summary:" not in render_envelope(env, include_summary=False)


# ------------------------------------------------------------------------------ segments


def test_segments_start_on_change_only_and_hash_the_catalog_like_the_registry() -> None:
    registry = default_registry()
    try:
        specs = registry.specs()
        assert catalog_hash(specs) == registry.catalog_hash()
        assert catalog_hash(reversed(specs)) == registry.catalog_hash()  # order-independent
    finally:
        registry.close()
    tools = (ToolSpec(name="a", description="A"),)
    sysm = Message(role="system", content="SYS")
    tr = SegmentTracker(provider="replay")
    first = tr.observe(ModelRequest(model="m", messages=(sysm,), tools=tools))
    assert first is not None and first.previous is None and first.reason == "start"
    u = Message(role="user", content="hi")
    assert tr.observe(ModelRequest(model="m", messages=(sysm, u), tools=tools)) is None
    compacted = tr.compacted([Message(role="system", content="summary"), u])
    assert compacted.previous == first.new and compacted.reason == "compaction"
    assert compacted.new.prefix_hash != first.new.prefix_hash
    assert compacted.new.catalog_hash == first.new.catalog_hash
    more = (*tools, ToolSpec(name="b", description="B"))
    grown = tr.observe(ModelRequest(model="m", messages=(sysm, u), tools=more))
    assert grown is not None and grown.reason == "catalog"
    other = Message(role="system", content="SYS + orientation")
    changed = tr.observe(ModelRequest(model="m", messages=(other, u), tools=more))
    assert changed is not None and changed.reason == "instructions"
    switched = tr.observe(ModelRequest(model="m2", messages=(other, u), tools=more))
    assert switched is not None and switched.reason == "model"
    ids = [t.new.id for t in (first, compacted, grown, changed, switched)]
    assert len(set(ids)) == 5


# ------------------------------------------------------------------------------ reset


def test_reset_manifest_exact_format_parse_and_consume(tmp_path: Path) -> None:
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    path = write_reset_manifest(tmp_path, trigger="stall", stall_count=3, now=at)
    assert path == tmp_path / ".vtcode/tasks/current_context_reset.md"
    assert path.read_text() == (
        "# Context Reset Manifest\n"
        "\n"
        " - **Triggered at:** 2026-01-01T00:00:00Z\n"
        " - **Trigger:** stall\n"
        " - **Stall count:** 3\n"
        "\n"
        "This session starts fresh from external artifacts only.\n"
        "Read the current feature list and progress tracker to reorient.\n"
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = read_reset_manifest(tmp_path)
    assert text is not None
    parsed = parse_reset_manifest(text)
    assert parsed is not None and (parsed.trigger, parsed.stall_count) == ("stall", 3)
    assert consume_reset_manifest(tmp_path) is True
    assert read_reset_manifest(tmp_path) is None
    assert consume_reset_manifest(tmp_path) is False


def test_unparsable_manifest_is_not_reported(tmp_path: Path) -> None:
    p = tmp_path / ".vtcode/tasks/current_context_reset.md"
    p.parent.mkdir(parents=True)
    p.write_text("# Context Reset Manifest\n\n - **Trigger:** stall\n")  # no Triggered at
    assert read_reset_manifest(tmp_path) is None


def test_should_reset_rules() -> None:
    assert should_reset(ContextResetMode.OFF, compaction=True, stall_count=9, threshold=2) == (
        False,
        "",
    )
    assert should_reset(ContextResetMode.ON_STALL, compaction=False, stall_count=2, threshold=2)[0]
    assert not should_reset(ContextResetMode.ON_STALL, compaction=True, stall_count=1, threshold=2)[
        0
    ]
    assert should_reset(ContextResetMode.ON_COMPACTION, compaction=True, stall_count=0, threshold=2)
    assert should_reset(ContextResetMode.ON_STALL, compaction=False, stall_count=3, threshold=2)[
        1
    ] == ("stall 3>=2")


# ------------------------------------------------------------------------------ blocked handoff


def test_blocked_handoff_format_and_archive(tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    tracker = tmp_path / ".vtcode/tasks/current_task.md"
    tracker.parent.mkdir(parents=True)
    tracker.write_text("- [x] step one\n- [ ] step two\n")
    current, archive = write_blocked_handoff(
        tmp_path, "sess-1", "tool_loop_limit_reached", "Stopped after reaching tool loop limit"
    )
    assert current == tmp_path / ".vtcode/tasks/current_blocked.md"
    assert archive.parent == tmp_path / ".vtcode/tasks/blockers"
    text = current.read_text()
    assert archive.read_text() == text
    normal = re.sub(r"created_at: .*", "created_at: <ts>", text).replace(
        str(tmp_path.resolve()), "<ws>"
    )
    assert normal == snapshot
    _, second = write_blocked_handoff(tmp_path, "sess-1", "blocked", "again")
    assert second != archive and archive.exists()  # archives accumulate, never overwrite


# ------------------------------------------------------------------------------ archive


def test_history_archive_metadata_first_then_messages(tmp_path: Path) -> None:
    paths = plan_archive(tmp_path, "sess-1", 7, stamp="20260101T000000Z")
    assert paths.relative == ".vtcode/history/sess-1_0007_20260101T000000Z.jsonl"
    env = SessionMemoryEnvelope(summary="s", generated_at="t")
    meta = HistoryArchiveMeta(
        session_id="sess-1",
        turn=7,
        created_at="t",
        trigger="auto",
        mode="local",
        summary_source="local",
        original_message_count=4,
        compacted_message_count=3,
    )
    write_archive(paths, meta, _history(), env)
    lines = paths.history.read_bytes().splitlines()
    head = orjson.loads(lines[0])
    assert head["kind"] == "vtcode.history_archive" and head["turn"] == 7
    assert head["envelope_path"] == ".vtcode/history/sess-1_0007_20260101T000000Z.memory.json"
    assert [orjson.loads(x)["role"] for x in lines[1:]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert json.loads(paths.envelope.read_text())["schema_version"] == 3
    again = plan_archive(tmp_path, "sess-1", 7, stamp="20260101T000000Z")
    assert again.history.name == "sess-1_0007_20260101T000000Z-2.jsonl"  # never overwrites


# ------------------------------------------------------------------------------ fork


def test_fork_history_is_summary_envelope_and_retained_users_only() -> None:
    history = [*_history(), Message(role="user", content="and a follow-up")]
    out = fork_history(history, VtcodeConfig())
    assert [m.role for m in out] == ["system", "system", "user", "user"]
    assert out[0].content.startswith("Previous conversation summary:\n## Goal")
    assert out[1].content.startswith(ENVELOPE_HEADER)
    assert [m.content for m in out[2:]] == [history[0].content, "and a follow-up"]
