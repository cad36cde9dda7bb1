"""What a run's own log says happened, and the failure class of a failed run.

A run is judged by its own record (vtcode's events.jsonl, a peer's event stream), never by
what the runner guessed, so the report agrees with each run's log. The failure classes, in the
order they are decided:

- `protected_changed`: a protected file differs after the run (whatever the check says);
- `limit`: the run hit its time limit (killed by the runner), or ended on its turn, budget or
  tool-loop limit;
- `agent_crashed`: the agent ended without a final record, or with an exit code that is not
  one of its documented outcomes (a signal, a usage error, a traceback);
- `provider_error`: the model request failed (the log says `provider error`);
- `unparsable_tool_call`: the agent's last message is a tool call written as text (bare or
  fenced `{"name": ..., "arguments": ...}`, or `<tool_call>...</tool_call>`) that the harness
  did not run;
- `no_tool_call`: the agent ran no tool at all;
- `check_failed`: it acted, and the check said no.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

import orjson

__all__ = ["AgentRecord", "FailureClass", "classify", "looks_like_tool_call"]


class FailureClass(StrEnum):
    """Why a run failed (null for a passed run)."""

    PROTECTED_CHANGED = "protected_changed"
    LIMIT = "limit"
    AGENT_CRASHED = "agent_crashed"
    PROVIDER_ERROR = "provider_error"
    UNPARSABLE_TOOL_CALL = "unparsable_tool_call"
    NO_TOOL_CALL = "no_tool_call"
    CHECK_FAILED = "check_failed"


@dataclass(slots=True, kw_only=True)
class AgentRecord:
    """What an adapter read from one run's own log (None: the agent does not report it)."""

    completed: bool = False  # the log has its final record (thread.completed, a result event)
    outcome_subtype: str | None = None
    outcome_code: str | None = None
    turns: int | None = None
    model_requests: int | None = None
    tool_calls: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    first_prompt_tokens: int | None = None
    cost_usd: float | None = None
    session_id: str | None = None
    last_message: str | None = None
    provider_error: str | None = None
    hit_limit: bool = False
    # exit codes that are one of the agent's documented outcomes (not a crash)
    expected_exit: bool = True


# A fence around the whole (stripped) message; its body is stripped by the caller. The old
# `^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```$` gave the same stripped body, but its blanks beside a
# lazy group backtracked quadratically; a possessive info string and a greedy body scan once.
_FENCE = re.compile(r"```[A-Za-z0-9_-]*+(.*)```", re.DOTALL)


def _call_shaped(value: object) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_call_shaped(v) for v in value)
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("function"), dict):
        return _call_shaped(value["function"])
    return isinstance(value.get("name"), str) and (
        "arguments" in value or "parameters" in value or "args" in value
    )


def looks_like_tool_call(text: str | None) -> bool:
    """The whole message is a tool call written as text: JSON with a name and arguments,
    bare, fenced, or in Hermes/Qwen `<tool_call>` tags."""
    if not text:
        return False
    body = text.strip()
    # What the old `<tool_call>\s*(.*?)\s*(?:</tool_call>|$)` search found (it matched
    # wherever the tag is, its end may be the text's end), without its quadratic backtracking.
    if "<tool_call>" in body:
        return True
    fenced = _FENCE.fullmatch(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body.startswith(("{", "[")):
        return False
    try:
        return _call_shaped(orjson.loads(body))
    except orjson.JSONDecodeError:
        return False


def classify(
    record: AgentRecord,
    *,
    passed_check: bool,
    protected_changed: bool,
    timed_out: bool,
) -> FailureClass | None:
    """The failure class of a run, None when it passed (check passed, nothing protected
    changed, not killed for time)."""
    if protected_changed:
        return FailureClass.PROTECTED_CHANGED
    if timed_out:
        return FailureClass.LIMIT
    if passed_check:
        return None
    if record.hit_limit:
        return FailureClass.LIMIT
    if not record.completed or not record.expected_exit:
        return FailureClass.AGENT_CRASHED
    if record.provider_error is not None:
        return FailureClass.PROVIDER_ERROR
    code = record.outcome_code or ""
    if looks_like_tool_call(record.last_message) or "tool_call" in code:
        return FailureClass.UNPARSABLE_TOOL_CALL
    if record.tool_calls == 0:
        return FailureClass.NO_TOOL_CALL
    return FailureClass.CHECK_FAILED
