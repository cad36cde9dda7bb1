"""Lifecycle rules one by one, on small logs built from the event types (real encoders)."""

from __future__ import annotations

import io

from vtcode.events import encode_raw_line, encode_wrapped_line
from vtcode.events.enums import ThreadCompletionSubtype, ToolCallStatus
from vtcode.events.types import (
    AgentMessageItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
    PlanApprovalRequestedEvent,
    ThreadCompletedEvent,
    ThreadEvent,
    ThreadItem,
    ThreadStartedEvent,
    ToolInvocationItem,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
    Usage,
)
from vtcode.validate import FileReport, FileStatus, Severity, ValidateOptions, validate_stream
from vtcode.validate.report import Profile

START = ThreadStartedEvent(thread_id="t-1")
END = ThreadCompletedEvent(
    thread_id="t-1",
    session_id="t-1",
    subtype=ThreadCompletionSubtype.SUCCESS,
    outcome_code="success",
    usage=Usage(),
    num_turns=1,
)


def msg(iid: str, text: str = "hello") -> ThreadItem:
    return ThreadItem(id=iid, details=AgentMessageItem(text=text))


def run(events: list[ThreadEvent], *, wrapped: bool = False, **opts: object) -> FileReport:
    if wrapped:
        data = b"".join(encode_wrapped_line(e, seq=i) for i, e in enumerate(events, 1))
    else:
        data = b"".join(encode_raw_line(e) for e in events)
    return validate_stream(io.BytesIO(data), "t", ValidateOptions(profile=Profile.VTCODE, **opts))  # type: ignore[arg-type]


def problems(report: FileReport) -> list[tuple[int, str, str]]:
    return [(p.line, p.severity.value, p.code.value) for p in report.problems]


def test_a_lone_item_completed_is_a_non_streamed_item() -> None:
    report = run([START, ItemCompletedEvent(item=msg("a")), END])
    assert report.status is FileStatus.VALID and report.problems == []


def test_streamed_item_may_change_content_but_not_type() -> None:
    ok = run(
        [
            START,
            ItemStartedEvent(item=msg("a", "he")),
            ItemUpdatedEvent(item=msg("a", "hell")),
            ItemCompletedEvent(item=msg("a", "hello")),
            END,
        ]
    )
    assert ok.problems == []


def test_items_left_open_at_thread_completed_are_one_warning_naming_them() -> None:
    opened = [ItemStartedEvent(item=msg(f"item_{i}")) for i in range(7)]
    report = run([START, *opened, END])
    assert report.status is FileStatus.VALID
    assert problems(report) == [(9, "warning", "item-not-completed")]
    text = report.problems[0].message
    assert text.startswith("7 item(s) started but never completed at thread.completed:")
    assert "'item_0'" in text and "'item_4'" in text and "'item_5'" not in text
    assert text.endswith("and 2 more")


def test_thread_id_mismatch_is_a_warning() -> None:
    other = PlanApprovalRequestedEvent(thread_id="t-2", turn_id="turn-1")
    report = run([START, other, END])
    assert report.status is FileStatus.VALID
    assert problems(report) == [(2, "warning", "thread-id-mismatch")]
    assert report.problems[0].pointer == "/thread_id"


def test_tool_output_call_id_is_checked_once_per_output_item() -> None:
    out = ThreadItem(
        id="x:output",
        details=ToolOutputItem(call_id="x", output="", status=ToolCallStatus.IN_PROGRESS),
    )
    report = run([START, ItemStartedEvent(item=out), ItemCompletedEvent(item=out), END])
    assert problems(report) == [(2, "error", "unknown-call-id")]


def test_a_streamed_tool_invocation_counts_from_its_first_event() -> None:
    inv = ThreadItem(
        id="x",
        details=ToolInvocationItem(tool_name="t", status=ToolCallStatus.IN_PROGRESS),
    )
    out = ThreadItem(
        id="x:output", details=ToolOutputItem(call_id="x", status=ToolCallStatus.COMPLETED)
    )
    report = run([START, ItemStartedEvent(item=inv), ItemCompletedEvent(item=out), END])
    # the output names a started (not yet completed) invocation: fine; the invocation stays open
    assert problems(report) == [(4, "warning", "item-not-completed")]


def test_partial_accepts_open_turns_and_items_but_not_broken_order() -> None:
    live = [START, TurnStartedEvent(), ItemStartedEvent(item=msg("a"))]
    assert run(live).status is FileStatus.INVALID
    assert run(live, partial=True).problems == []
    broken = [START, TurnStartedEvent(), TurnStartedEvent()]
    assert problems(run(broken, partial=True)) == [(3, "error", "nested-turn")]


def test_no_lifecycle_skips_every_sequence_rule() -> None:
    chaos = [TurnCompletedEvent(usage=Usage()), END, END, ItemUpdatedEvent(item=msg("z"))]
    assert problems(run(chaos)) != []
    assert run(chaos, lifecycle=False).problems == []


def test_nothing_after_thread_completed_even_in_partial_mode() -> None:
    report = run([START, END, TurnStartedEvent()], partial=True)
    assert problems(report) == [(3, "error", "after-thread-completed")]


def test_turn_failed_closes_a_turn_like_turn_completed() -> None:
    report = run([START, TurnStartedEvent(), TurnFailedEvent(message="turn aborted"), END])
    assert report.problems == []


def test_seq_may_be_absent_on_some_lines_but_never_skip() -> None:
    lines = [
        encode_wrapped_line(START, seq=1),
        encode_wrapped_line(TurnStartedEvent()),
        encode_wrapped_line(TurnFailedEvent(message="m"), seq=2),
        encode_wrapped_line(END, seq=4),
    ]
    report = validate_stream(io.BytesIO(b"".join(lines)), "t")
    assert problems(report) == [(4, "error", "seq-gap")]
    assert report.problems[0].message == "seq 4 where 3 was expected (1-based and gapless)"


def test_warnings_never_make_a_log_invalid_but_strict_errors_do() -> None:
    unknown = b'{"type":"thread.goal_updated","goal":"g"}\n'
    data = encode_raw_line(START) + unknown + encode_raw_line(END)
    default = validate_stream(io.BytesIO(data), "t", ValidateOptions(profile=Profile.VTCODE))
    strict = validate_stream(
        io.BytesIO(data), "t", ValidateOptions(profile=Profile.VTCODE, strict=True)
    )
    assert (default.status, default.problems[0].severity) == (FileStatus.VALID, Severity.WARNING)
    assert (strict.status, strict.problems[0].severity) == (FileStatus.INVALID, Severity.ERROR)
    assert default.event_types == {"thread.completed": 1, "thread.started": 1, "unknown": 1}
