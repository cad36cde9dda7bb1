"""Tool-result clearing (`agent.harness.tool_result_clearing`): context editing without a summary.

Once the history passes `trigger_tokens`, the oldest tool results are replaced by a short
placeholder, oldest first, until at least `clear_at_least_tokens` are freed; the last
`keep_tool_uses` tool results are always kept verbatim. With `clear_tool_inputs` the arguments of
the cleared calls are replaced too (`{}`). Every message stays in place (the protocol pairing of
calls and results is intact), so this is cheaper than a compaction but still changes the prompt
prefix: the caller starts a new request segment and reports it.

Upstream leaves this to the provider's native context management; vtcode does it locally for
every provider, so the key has the same effect whichever wire format a run uses.
"""

from __future__ import annotations

import dataclasses

from vtcode.context.tokens import TokenEstimator
from vtcode.messages import Message

__all__ = ["CLEARED_PLACEHOLDER", "ClearingPolicy", "ClearingResult", "clear_tool_results"]

CLEARED_PLACEHOLDER = "[tool result cleared to save context]"
_CLEARED_INPUT = "{}"


@dataclasses.dataclass(frozen=True, slots=True)
class ClearingPolicy:
    """The `tool_result_clearing` table, as the loop reads it."""

    trigger_tokens: int
    keep_tool_uses: int
    clear_at_least_tokens: int
    clear_tool_inputs: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class ClearingResult:
    history: list[Message]
    cleared_results: int
    freed_tokens: int


def clear_tool_results(
    history: list[Message], policy: ClearingPolicy, est: TokenEstimator, *, fixed_tokens: int = 0
) -> ClearingResult | None:
    """The edited history, or None when the history is under the trigger or nothing can go.

    `fixed_tokens` (system prompt and tool catalog) counts toward the trigger, as the request the
    provider sees includes them."""
    if fixed_tokens + est.messages(history) <= policy.trigger_tokens:
        return None
    results = [
        i for i, m in enumerate(history) if m.role == "tool" and m.content != CLEARED_PLACEHOLDER
    ]
    keep = max(0, policy.keep_tool_uses)
    candidates = results[: len(results) - keep] if keep else results
    if not candidates:
        return None
    out = list(history)
    freed = 0
    cleared_ids: set[str] = set()
    for i in candidates:
        m = out[i]
        before = est.message(m)
        out[i] = m.with_content(CLEARED_PLACEHOLDER)
        freed += max(0, before - est.message(out[i]))
        if m.tool_call_id:
            cleared_ids.add(m.tool_call_id)
        if freed >= policy.clear_at_least_tokens:
            break
    if policy.clear_tool_inputs and cleared_ids:
        for i, m in enumerate(out):
            if m.role != "assistant" or not any(c.id in cleared_ids for c in m.tool_calls):
                continue
            calls = tuple(
                dataclasses.replace(c, arguments=_CLEARED_INPUT) if c.id in cleared_ids else c
                for c in m.tool_calls
            )
            before = est.message(m)
            out[i] = dataclasses.replace(m, tool_calls=calls)
            freed += max(0, before - est.message(out[i]))
    cleared = sum(1 for i in candidates if out[i] is not history[i])
    if freed <= 0:
        return None
    return ClearingResult(history=out, cleared_results=cleared, freed_tokens=freed)
