"""Which failures `agent.harness.max_tool_retries` retries, in process (the CLI test is
tests/tools/test_mcp_retries.py): only a transient failure of a call safe to repeat."""

from __future__ import annotations

import threading

from vtcode.loop import tool_retry
from vtcode.tools.base import ToolError, ToolResult, TransientToolError


class _Flaky:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self) -> ToolResult:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return ToolResult(output="answer")


def test_a_transient_failure_of_a_safe_call_is_retried() -> None:
    flaky = _Flaky([TransientToolError("no answer within 1s")])
    result, retries = tool_retry.run(flaky, retries=2, safe=True, cancel=threading.Event())
    assert isinstance(result, ToolResult) and flaky.calls == 2
    assert [(r.attempt, r.category, r.delay_ms) for r in retries] == [(1, "timeout", 200)]


def test_unsafe_calls_and_permanent_failures_run_once() -> None:
    for failure, safe in ((TransientToolError("t"), False), (ToolError("no such file"), True)):
        flaky = _Flaky([failure])
        result, retries = tool_retry.run(flaky, retries=2, safe=safe, cancel=threading.Event())
        assert result is failure and flaky.calls == 1 and retries == []


def test_a_cancelled_run_stops_waiting() -> None:
    cancel = threading.Event()
    cancel.set()
    flaky = _Flaky([TransientToolError("t"), TransientToolError("t")])
    result, _ = tool_retry.run(flaky, retries=5, safe=True, cancel=cancel)
    assert isinstance(result, TransientToolError) and flaky.calls == 1


def test_backoff_doubles_up_to_three_seconds() -> None:
    assert [tool_retry.backoff(n) for n in (1, 2, 3, 4, 5, 6)] == [0.2, 0.4, 0.8, 1.6, 3.0, 3.0]


def test_read_only_or_declared_tools_are_safe() -> None:
    class Read:
        read_only = True

    class Mcp:
        read_only = False
        retry_safe = True

    class Write:
        read_only = False

    assert tool_retry.retry_safe(Read()) and tool_retry.retry_safe(Mcp())
    assert not tool_retry.retry_safe(Write())
