"""pass@k, pass^k against hand-computed values; the failure-class rules; tool-call text."""

from __future__ import annotations

import pytest

from vtcode.eval.classify import AgentRecord, FailureClass, classify, looks_like_tool_call
from vtcode.eval.metrics import pass_at_k, pass_hat_k


@pytest.mark.parametrize(
    ("n", "c", "k", "at_k", "hat_k"),
    [
        (5, 2, 1, 0.4, 0.4),  # pass@1 = c/n = pass^1
        (5, 2, 2, 0.7, 0.1),  # 1 - C(3,2)/C(5,2) = 1 - 3/10; C(2,2)/C(5,2) = 1/10
        (5, 2, 3, 0.9, 0.0),  # 1 - C(3,3)/C(5,3) = 1 - 1/10; C(2,3) = 0
        (10, 3, 5, 1 - 21 / 252, 0.0),  # C(7,5) = 21, C(10,5) = 252
        (4, 4, 2, 1.0, 1.0),
        (4, 0, 2, 0.0, 0.0),
        (3, 2, 3, 1.0, 0.0),  # n - c < k: some run among any 3 passes
        (6, 4, 2, 1 - 1 / 15, 6 / 15),  # C(2,2)/C(6,2) = 1/15; C(4,2)/C(6,2) = 6/15
    ],
)
def test_pass_at_k_and_pass_hat_k(n: int, c: int, k: int, at_k: float, hat_k: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(at_k)
    assert pass_hat_k(n, c, k) == pytest.approx(hat_k)


def test_fewer_runs_than_k_is_unknown_and_bad_counts_are_errors() -> None:
    assert pass_at_k(2, 1, 3) is None and pass_hat_k(2, 1, 3) is None
    for n, c, k in ((2, 3, 1), (2, -1, 1), (2, 1, 0)):
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "apply_patch", "arguments": {"patch": "x"}}',
        '```json\n{"name": "list_files", "arguments": {}}\n```',
        '```\n[{"name": "a", "parameters": {}}]\n```',
        '<tool_call>\n{"name": "exec_command", "arguments": {"command": "ls"}}\n</tool_call>',
        '{"type": "function", "function": {"name": "f", "arguments": "{}"}}',
    ],
)
def test_tool_call_shaped_text(text: str) -> None:
    assert looks_like_tool_call(text)


@pytest.mark.parametrize(
    "text",
    [None, "", "Done: hello.txt now says hello.", '{"answer": 42}', "```python\nprint(1)\n```"],
)
def test_plain_answers_are_not_tool_calls(text: str | None) -> None:
    assert not looks_like_tool_call(text)


def _rec(**kw: object) -> AgentRecord:
    base: dict[str, object] = {"completed": True, "tool_calls": 1, "outcome_code": "success"}
    return AgentRecord(**{**base, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("record", "flags", "expected"),
    [
        (_rec(), {"passed_check": True}, None),
        (_rec(), {"passed_check": True, "protected_changed": True}, "protected_changed"),
        (_rec(), {"passed_check": True, "timed_out": True}, "limit"),
        (_rec(hit_limit=True), {}, "limit"),
        (_rec(completed=False), {}, "agent_crashed"),
        (_rec(expected_exit=False), {}, "agent_crashed"),
        (_rec(provider_error="provider error: 500"), {}, "provider_error"),
        (
            _rec(last_message='{"name": "x", "arguments": {}}', tool_calls=0),
            {},
            "unparsable_tool_call",
        ),
        (_rec(outcome_code="unparsed_tool_call"), {}, "unparsable_tool_call"),
        (_rec(tool_calls=0), {}, "no_tool_call"),
        (_rec(tool_calls=None), {}, "check_failed"),  # an agent that does not report calls
        (_rec(), {}, "check_failed"),
    ],
)
def test_failure_class_order(
    record: AgentRecord, flags: dict[str, bool], expected: str | None
) -> None:
    args = {"passed_check": False, "protected_changed": False, "timed_out": False, **flags}
    got = classify(record, **args)
    assert got == (None if expected is None else FailureClass(expected))
