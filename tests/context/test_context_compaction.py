"""The compacted-history builder: shape, tool-call integrity, budgets, previews, determinism."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

from vtcode.context.compaction import (
    ENVELOPE_NAME,
    SUMMARY_NAME,
    SUMMARY_PREFIX,
    CompactionBudget,
    compact_history,
    protocol_groups,
)
from vtcode.context.digest import digest_history
from vtcode.context.summary import local_summary
from vtcode.context.tokens import TokenEstimator
from vtcode.messages import Message, ToolCall

EST = TokenEstimator()  # bytes / 4: deterministic whatever is installed


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str, *calls: ToolCall) -> Message:
    return Message(role="assistant", content=text, tool_calls=tuple(calls))


def call(cid: str, name: str = "exec_command", args: str = '{"command":"ls"}') -> ToolCall:
    return ToolCall(id=cid, name=name, arguments=args)


def result(cid: str, text: str, name: str = "exec_command") -> Message:
    return Message(role="tool", content=text, tool_call_id=cid, name=name)


def build(history: list[Message], budget: CompactionBudget | None = None) -> list[Message]:
    return compact_history(
        history,
        summary="S",
        envelope_text="[Session Memory Envelope]",
        budget=budget,
        estimator=EST,
    ).messages


def assert_tool_integrity(messages: list[Message]) -> None:
    """Every call is answered right after its assistant message; no result without its call."""
    i = 0
    while i < len(messages):
        m = messages[i]
        assert m.role != "tool", f"tool result without its call at {i}"
        if m.role == "assistant" and m.tool_calls:
            want = {c.id for c in m.tool_calls}
            j = i + 1
            while j < len(messages) and messages[j].role == "tool":
                assert messages[j].tool_call_id in want, "result of another call"
                want.discard(messages[j].tool_call_id or "")
                j += 1
            assert not want, f"unanswered calls {want}"
            i = j
        else:
            i += 1


def test_shape_summary_envelope_retained_tail() -> None:
    history = [
        user("the task: fix the parser"),
        assistant("looking", call("c1")),
        result("c1", "a.py b.py"),
        user("also keep the API stable"),
        assistant("done with step one"),
    ]
    out = compact_history(history, summary="SUM", envelope_text="ENV", estimator=EST)
    m = out.messages
    assert m[0].role == "system" and m[0].content == SUMMARY_PREFIX + "SUM"
    assert m[0].name == SUMMARY_NAME
    assert m[1].role == "system" and m[1].content == "ENV" and m[1].name == ENVELOPE_NAME
    assert m[2:] == history  # everything fits the tail: kept verbatim, in order
    assert out.original_count == 5 and out.compacted_count == 7 and out.tail_start == 0


def test_incomplete_trailing_tool_calls_and_orphans_are_dropped() -> None:
    history = [
        user("go"),
        result("zz", "orphan"),
        assistant("", call("a")),
        result("a", "ok"),
        assistant("", call("b"), call("c")),
        result("b", "half answered"),
    ]
    out = compact_history(history, summary="S", envelope_text="E", estimator=EST)
    assert out.messages[2:] == history[:1] + history[2:4]
    assert out.dropped_incomplete == 1 + 2
    assert_tool_integrity(out.messages)


def test_tail_keeps_newest_groups_within_budget_and_retains_users() -> None:
    big = "x" * 4000  # ~1000 tokens each
    history: list[Message] = [user("TASK")]
    for i in range(20):
        history += [assistant(f"step {i}", call(f"c{i}")), result(f"c{i}", big)]
        if i == 5:
            history.append(user("steer: prefer small diffs"))
    budget = CompactionBudget(tail_tokens=5000)
    out = compact_history(history, summary="S", envelope_text="E", budget=budget, estimator=EST)
    tail = out.messages[2 + out.retained_user_count :]
    assert out.tail_tokens <= 5000 and EST.messages(tail) == out.tail_tokens
    assert tail[-1] == history[-1]  # newest kept verbatim
    assert tail == history[out.tail_start :]
    retained = out.messages[2 : 2 + out.retained_user_count]
    assert [r.content for r in retained] == ["TASK", "steer: prefer small diffs"]


def test_oversized_newest_message_becomes_a_preview_with_a_spool_reference() -> None:
    huge = "HEAD" + "y" * 400_000 + "TAIL"
    history = [user("t"), assistant("", call("c1")), result("c1", huge)]
    out = compact_history(history, summary="S", envelope_text="E", estimator=EST)
    shown = out.messages[-1]
    assert shown.role == "tool" and shown.tool_call_id == "c1"
    assert shown.content.startswith("HEAD") and shown.content.endswith("TAIL")
    assert len(out.spools) == 1 and out.spools[0].content == huge
    assert out.spools[0].path.startswith(".vtcode/context/compaction/")
    assert out.spools[0].path in shown.content
    assert EST.message(shown) <= CompactionBudget().message_cap


def test_oversized_arguments_stay_valid_json() -> None:
    import orjson

    args = orjson.dumps({"path": "big.txt", "content": "z" * 200_000}).decode()
    history = [user("t"), assistant("", call("w", "write_file", args)), result("w", "ok")]
    out = compact_history(history, summary="S", envelope_text="E", estimator=EST)
    shown = out.messages[-2].tool_calls[0]
    assert isinstance(orjson.loads(shown.arguments), dict)
    assert EST.text_tokens(shown.arguments) < 10_000


def test_the_first_user_message_is_always_retained() -> None:
    history = [user("THE TASK")]
    for i in range(10):
        history += [user(f"u{i}"), assistant("z" * 40_000)]
    out = compact_history(history, summary="S", envelope_text="E", estimator=EST)
    retained = [m.content for m in out.messages[2 : 2 + out.retained_user_count]]
    assert retained[0] == "THE TASK" and len(retained) == 4


def test_fork_shape_has_no_tail() -> None:
    history = [user("a"), assistant("b"), user("c"), assistant("d")]
    out = compact_history(
        history, summary="S", envelope_text="E", estimator=EST, include_tail=False
    )
    assert [m.content for m in out.messages[2:]] == ["a", "c"]


def test_local_summary_sections_and_determinism() -> None:
    history = [
        user("Fix the parser. Never touch the public API."),
        assistant("I'll check", call("c1", "read_file", '{"path":"p.py"}')),
        result("c1", "def parse(): ..."),
        assistant("", call("c2", "write_file", '{"path":"p.py","content":"x"}')),
        result("c2", "permission denied for write_file: policy"),
        assistant("Should I retry with apply_patch?"),
    ]
    text = local_summary(digest_history(history))
    for heading in (
        "## Goal",
        "## Constraints & Preferences",
        "## What I Was Just Doing",
        "## Last Action & Result",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ):
        assert heading in text
    assert "Never touch the public API." in text
    assert "p.py" in text and "permission denied" in text
    assert "Answer: Should I retry with apply_patch?" in text
    assert text == local_summary(digest_history(list(history)))


# ------------------------------------------------------------------------------ property

_text = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda c, n: c * n,
        st.sampled_from(["a", "é", "\U0001f600", "ab\n"]),
        st.integers(0, 30_000),
    ),
)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    out: list[Message] = []
    n_calls = 0
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools", "system", "orphan"]))
        if kind == "user":
            out.append(user(draw(_text)))
        elif kind == "assistant":
            out.append(assistant(draw(_text)))
        elif kind == "system":
            out.append(Message(role="system", content=SUMMARY_PREFIX + draw(_text)))
        elif kind == "orphan":
            out.append(result(f"orphan{n_calls}", draw(_text)))
            n_calls += 1
        else:
            k = draw(st.integers(1, 4))
            ids = [f"c{n_calls + j}" for j in range(k)]
            n_calls += k
            out.append(assistant(draw(_text), *(call(i, args=draw(_text)) for i in ids)))
            answered = draw(st.integers(0, k)) if draw(st.booleans()) else k
            for i in ids[:answered]:
                out.append(result(i, draw(_text)))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    history=histories(),
    total=st.one_of(st.none(), st.integers(1000, 60_000)),
    retained=st.integers(0, 6),
    summary=_text,
)
def test_compaction_never_splits_a_call_from_its_result_nor_exceeds_the_budget(
    history: list[Message], total: int | None, retained: int, summary: str
) -> None:
    budget = (
        CompactionBudget(retained_user_messages=retained)
        if total is None
        else CompactionBudget.within(total, retained_user_messages=retained)
    )
    out = compact_history(
        history, summary=summary, envelope_text="E" * 9000, budget=budget, estimator=EST
    )
    assert_tool_integrity(out.messages)
    assert out.total_tokens == EST.messages(out.messages)
    assert out.total_tokens <= budget.total()
    assert out.tail_tokens <= budget.tail_tokens
    assert out.messages[0].name == SUMMARY_NAME and out.messages[1].name == ENVELOPE_NAME
    assert all(m.role != "system" for m in out.messages[2:])
    # every kept non-system message corresponds to an original one (same role and ids)
    originals = {(m.role, m.tool_call_id) for m in history}
    assert all((m.role, m.tool_call_id) in originals for m in out.messages[2:])
    groups, _ = protocol_groups(history)
    assert out.tail_start == len(history) or any(g.start == out.tail_start for g in groups)
    again = compact_history(
        history, summary=summary, envelope_text="E" * 9000, budget=budget, estimator=EST
    )
    assert again.messages == out.messages


def test_preserve_recent_turns_keeps_the_newest_messages_past_the_tail_budget() -> None:
    """`context.preserve_recent_turns`: the newest N messages stay in the tail (whole groups,
    each message still bounded) even when the tail's token budget would cut them."""
    big = "x" * 4000  # ~1000 tokens each
    history: list[Message] = [user("TASK")]
    for i in range(10):
        history += [assistant(f"step {i}", call(f"c{i}")), result(f"c{i}", big)]
    plain = compact_history(
        history,
        summary="S",
        envelope_text="E",
        budget=CompactionBudget(tail_tokens=2500),
        estimator=EST,
    )
    kept = compact_history(
        history,
        summary="S",
        envelope_text="E",
        budget=CompactionBudget(tail_tokens=2500, preserve_recent=8),
        estimator=EST,
    )
    assert len(history) - plain.tail_start < 8  # the budget cuts the tail earlier
    assert len(history) - kept.tail_start == 8  # the newest 8 messages, past the budget
    assert [m.tool_call_id or m.content for m in kept.messages[-8:]] == [
        m.tool_call_id or m.content for m in history[-8:]
    ]
    assert_tool_integrity(kept.messages)
