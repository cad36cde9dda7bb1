"""Token estimates and compaction thresholds: the numbers users configure against."""

from __future__ import annotations

import pytest

from vtcode.context.thresholds import (
    CompactionDecision,
    CompactionPolicy,
    effective_budget,
    resolve_thresholds,
)
from vtcode.context.tokens import TokenEstimator, byte_tokens
from vtcode.messages import Image, Message, ModelRequest, ToolCall, ToolSpec

PNG = Image(media_type="image/png", data=b"\x89PNG\r\n\x1a\n")


def test_byte_estimate_is_ceil_of_utf8_bytes_over_four() -> None:
    assert byte_tokens("") == 0
    assert byte_tokens("abcd") == 1
    assert byte_tokens("abcde") == 2
    assert byte_tokens("é") == 1  # 2 bytes
    assert byte_tokens("ééé") == 2  # 6 bytes
    assert byte_tokens("\U0001f600" * 2) == 2  # 8 bytes


def test_message_estimate_follows_upstream_arithmetic() -> None:
    est = TokenEstimator()
    assert est.message(Message(role="user", content="abcd")) == 4 + 1
    call = ToolCall(id="call_1", name="exec_command", arguments='{"command":"ls"}')
    m = Message(role="assistant", content="", tool_calls=(call,), images=(PNG, PNG))
    # 4 role + 2 x 1000 images + (20 + name 3 + args 4)
    assert est.message(m) == 4 + 2000 + 20 + 3 + 4
    tool = Message(role="tool", content="x" * 8, tool_call_id="call_1")
    assert est.message(tool) == 4 + 2 + 2


def test_request_estimate_counts_tools() -> None:
    est = TokenEstimator()
    spec = ToolSpec(name="t", description="d" * 8, parameters={"type": "object"})
    req = ModelRequest(model="m", messages=(Message(role="user", content="hi"),), tools=(spec,))
    assert est.request(req) == est.message(req.messages[0]) + 1 + 2 + byte_tokens(
        '{"type":"object"}'
    )


def test_forced_byte_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VTCODE_TOKENIZER", "bytes")
    assert TokenEstimator.from_env().name == "bytes"


def test_upstream_example_thresholds() -> None:
    t = resolve_thresholds(None, 200_000, 160_000)
    assert (t.hard, t.soft, t.budget) == (144_000, 129_600, 160_000)


@pytest.mark.parametrize(
    ("configured", "provider", "session", "hard"),
    [
        (50_000, 200_000, 160_000, 50_000),  # explicit wins
        (300_000, 200_000, 160_000, 200_000),  # capped by provider capacity only
        (300_000, None, 160_000, 300_000),  # the session budget never caps an explicit value
        (None, None, 160_000, 144_000),  # provider unknown: session budget alone
        (None, 4000, 0, 3600),  # 0 = that side absent
        (None, None, 0, None),  # nothing known: never compact
        (None, 1001, 0, 901),  # 900.9 rounds half away from zero
        (None, 5, 0, 5),  # rounded value capped by the budget
    ],
)
def test_threshold_resolution(
    configured: int | None, provider: int | None, session: int, hard: int | None
) -> None:
    t = resolve_thresholds(configured, provider, session)
    assert t.hard == hard
    if hard is not None:
        assert t.soft == max(hard - hard // 10, 1)
    else:
        assert t.soft is None


def test_effective_budget() -> None:
    assert effective_budget(None, 0) == 0
    assert effective_budget(100, 0) == 100
    assert effective_budget(0, 100) == 100
    assert effective_budget(100, 50) == 50


def _policy(enabled: bool = True) -> CompactionPolicy:
    return CompactionPolicy(resolve_thresholds(1000, None, 0), auto_enabled=enabled)  # soft 900


def test_soft_is_deferred_inside_a_tool_loop_and_done_at_the_next_boundary() -> None:
    p = _policy()
    p.record_estimate(850)
    assert p.decide(in_tool_loop=True) is CompactionDecision.NONE
    p.record_reported(950)  # provider-reported wins when larger
    assert p.pressure == 950
    assert p.decide(in_tool_loop=True) is CompactionDecision.PENDING
    assert p.pending
    p.record_estimate(100)  # even if the next request is smaller, the pending flag holds
    assert p.decide(in_tool_loop=True) is CompactionDecision.PENDING
    assert p.decide(in_tool_loop=False) is CompactionDecision.COMPACT
    p.compacted(200)
    assert not p.pending
    assert p.decide(in_tool_loop=False) is CompactionDecision.NONE


def test_hard_compacts_anywhere_and_disabled_never_does() -> None:
    p = _policy()
    p.record_estimate(1000)
    assert p.decide(in_tool_loop=True) is CompactionDecision.COMPACT
    off = _policy(enabled=False)
    off.record_estimate(10_000)
    assert off.decide(in_tool_loop=False) is CompactionDecision.NONE


def test_estimate_is_raised_by_report_never_lowered() -> None:
    p = _policy()
    p.record_estimate(700)
    p.record_reported(300)
    assert p.pressure == 700
