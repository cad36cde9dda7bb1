"""Compaction summaries: the provider-written one, and the local deterministic fallback.

Both use upstream's section layout (`DEFAULT_SUMMARY_PROMPT`): Goal / Constraints & Preferences /
What I Was Just Doing / Last Action & Result / Progress (Done / In Progress / Blocked) / Key
Decisions / Next Steps / Critical Context. The local one is built from a `HistoryDigest` only, so
it is reproducible byte for byte and needs no network; it is the summary used inside an active
tool loop, for recovery, for `vtcode compact` and whenever the provider summary fails.
"""

from __future__ import annotations

from collections.abc import Iterator

from vtcode.context.digest import HistoryDigest, describe_result, one_line
from vtcode.events.types import Usage
from vtcode.messages import Message, ModelRequest, ResponseCompleted, TextDelta
from vtcode.providers.base import Provider, ProviderError

__all__ = ["SUMMARY_PROMPT", "local_summary", "provider_summary"]

SUMMARY_PROMPT = """Summarize the conversation so far so that work can continue from the summary
alone. Use exactly these sections, each as a markdown heading, and keep every section short:

## Goal
## Constraints & Preferences
## What I Was Just Doing
## Last Action & Result
## Progress
### Done
### In Progress
### Blocked
## Key Decisions
## Next Steps
## Critical Context

Name exact file paths, commands, error messages and values. Do not invent anything."""

_NONE = "- None recorded."


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {i}" for i in items) if items else _NONE


def local_summary(d: HistoryDigest) -> str:
    """The deterministic summary of a digest (same digest, same bytes)."""
    last = d.recent_tools[-1] if d.recent_tools else None
    if last is not None:
        action = f"- Called `{last.name}` with {one_line(last.arguments or '{}', 300)}"
        if last.result is None:
            result = "- No result was recorded (the call was not answered)."
        else:
            state = "failed" if last.failed else "succeeded"
            result = f"- It {state}: {describe_result(last.result, 400)}"
        last_action = f"{action}\n{result}"
    else:
        last_action = "- No tool has been called yet."
    done = [
        f"`{name}` x{n}"
        for name, n in sorted(d.tool_counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    progress = [
        "### Done",
        _bullets(
            [f"{sum(d.tool_counts.values())} tool call(s): " + ", ".join(done)] if done else []
        ),
        "### In Progress",
        _bullets([one_line(d.last_assistant_text, 300)] if d.last_assistant_text else []),
        "### Blocked",
        _bullets(d.failures),
    ]
    prior = [f"Earlier summary: {one_line(d.previous_summary, 600)}"] if d.previous_summary else []
    critical = [f"Touched files: {', '.join(d.touched_files)}"] if d.touched_files else []
    critical += prior
    critical.append(f"{d.message_count} message(s) were compacted into this summary.")
    next_steps = [f"Answer: {q}" for q in d.open_questions] or [
        "Continue from the most recent messages below; re-check state before repeating work."
    ]
    goal = [d.objective] if d.objective else []
    if len(d.user_requests) > 1:
        goal += [f"Latest request: {d.user_requests[-1]}"]
    sections = [
        ("Goal", _bullets(goal)),
        ("Constraints & Preferences", _bullets(d.constraints)),
        (
            "What I Was Just Doing",
            _bullets([one_line(d.last_assistant_text, 400)] if d.last_assistant_text else []),
        ),
        ("Last Action & Result", last_action),
        ("Progress", "\n".join(progress)),
        ("Key Decisions", _bullets(d.assistant_notes)),
        ("Next Steps", _bullets(next_steps)),
        ("Critical Context", _bullets(critical)),
    ]
    return "\n\n".join(f"## {title}\n{body}" for title, body in sections)


def summary_request(model: str, history: list[Message]) -> ModelRequest:
    """The `purpose="summary"` request: the history, then the summary instruction."""
    messages = (
        Message(role="system", content="You write precise engineering handoff summaries."),
        *history,
        Message(role="user", content=SUMMARY_PROMPT),
    )
    return ModelRequest(model=model, messages=messages, purpose="summary")


def provider_summary(provider: Provider, history: list[Message]) -> tuple[str, Usage]:
    """Ask the provider for a summary; raises ProviderError (also for an empty answer)."""
    parts: list[str] = []
    usage = Usage()
    stream: Iterator[object] = iter(provider.stream(summary_request(provider.model, history)))
    for ev in stream:
        if isinstance(ev, TextDelta):
            parts.append(ev.text)
        elif isinstance(ev, ResponseCompleted):
            usage = ev.usage
    text = "".join(parts).strip()
    if not text:
        raise ProviderError("the provider returned an empty compaction summary")
    return text, usage
