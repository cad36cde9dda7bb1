"""The compacted history builder (upstream's `build_local_compacted_history`), pure.

Shape of the result, in order:

1. a system message `"Previous conversation summary:\\n" + summary` (summary bounded);
2. the session memory envelope, a system message under "[Session Memory Envelope]";
3. retained user messages older than the tail (at most `retained_user_messages`; the first user
   message, the task, always among them);
4. the continuity tail: the newest complete protocol groups, verbatim, walked backwards while the
   running estimate stays within `tail_tokens` (about 20,000).

A protocol group is one user message, one plain assistant message, or an assistant message with
tool calls together with *all* its tool results; a group is never split, so a tool call never
loses its result. Groups whose calls are not all answered (a run killed mid-tool, a trailing call)
are dropped, and so are orphan tool results. vtcode groups by tool round rather than by user turn
(upstream's unit): an exec run has one user message, and a user-anchored group would be the
whole run. A message larger than `max_message_tokens` (and the newest group when it alone exceeds
the tail budget) is replaced by a bounded head/tail preview plus a reference to a spool file
holding the full text (`.vtcode/context/compaction/<sha256>.txt`); the builder only *names* the
spool files, the caller writes them (`CompactedHistory.spools`).

Every part has a cap, so `estimate(result) <= CompactionBudget.total()`; the property tests hold
the builder to that and to "no tool call without its result".
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import orjson

from vtcode.context.tokens import ROLE_OVERHEAD, TokenEstimator, default_estimator
from vtcode.messages import Message, ToolCall

__all__ = [
    "CONTINUITY_TAIL_TARGET_TOKENS",
    "ENVELOPE_NAME",
    "SUMMARY_NAME",
    "SUMMARY_PREFIX",
    "CompactedHistory",
    "CompactionBudget",
    "Spool",
    "compact_history",
    "history_budget",
    "protocol_groups",
]

CONTINUITY_TAIL_TARGET_TOKENS = 20_000
SUMMARY_MAX_TOKENS = 4096
ENVELOPE_MAX_TOKENS = 2048
RETAINED_USER_TOKENS = 20_000
SUMMARY_PREFIX = "Previous conversation summary:\n"
SUMMARY_NAME = "vtcode_compaction_summary"  # `Message.name` tags: recognisable on resume
ENVELOPE_NAME = "vtcode_memory_envelope"
SPOOL_DIR = ".vtcode/context/compaction"
_MIN_PREVIEW_TOKENS = 48


@dataclass(frozen=True, slots=True)
class CompactionBudget:
    """Token caps of each part; `total()` bounds the whole compacted history."""

    tail_tokens: int = CONTINUITY_TAIL_TARGET_TOKENS
    retained_user_messages: int = 4
    retained_user_tokens: int = RETAINED_USER_TOKENS
    summary_tokens: int = SUMMARY_MAX_TOKENS
    envelope_tokens: int = ENVELOPE_MAX_TOKENS
    max_message_tokens: int | None = None  # default: tail_tokens // 4
    # `context.preserve_recent_turns`: the newest messages always in the tail, past its token
    # budget if need be (each still bounded by `message_cap`, so the total stays bounded)
    preserve_recent: int = 0

    @classmethod
    def within(
        cls, total: int, *, retained_user_messages: int = 4, preserve_recent: int = 0
    ) -> CompactionBudget:
        """Caps scaled down so that the parts together fit `total` tokens."""
        base = cls(retained_user_messages=retained_user_messages, preserve_recent=preserve_recent)
        if total >= base.total():
            return base
        total = max(total, 4 * _MIN_PREVIEW_TOKENS * 4)
        return cls(
            tail_tokens=total * 4 // 10,
            retained_user_messages=retained_user_messages,
            retained_user_tokens=total * 2 // 10,
            summary_tokens=total * 25 // 100,
            envelope_tokens=total * 15 // 100,
            preserve_recent=preserve_recent,
        )

    @property
    def message_cap(self) -> int:
        cap = self.max_message_tokens or self.tail_tokens // 4
        return max(cap, _MIN_PREVIEW_TOKENS)

    def total(self) -> int:
        return (
            self.tail_tokens
            + self.retained_user_tokens
            + self.summary_tokens
            + (self.envelope_tokens)
        )


def history_budget(capacity: int) -> int:
    """Upstream's bound on a compacted history: ctx - ctx/8 - 512."""
    return max(0, capacity - capacity // 8 - 512)


@dataclass(frozen=True, slots=True)
class Spool:
    """A file the caller must write: `path` is workspace-relative."""

    path: str
    content: str


@dataclass(frozen=True, slots=True)
class CompactedHistory:
    messages: list[Message]
    original_count: int
    tail_start: int  # index in the original history where the verbatim tail begins
    tail_tokens: int
    total_tokens: int
    retained_user_count: int
    dropped_incomplete: int  # messages of unanswered groups and orphan tool results
    spools: list[Spool] = field(default_factory=list)

    @property
    def compacted_count(self) -> int:
        return len(self.messages)


@dataclass(frozen=True, slots=True)
class Group:
    start: int
    end: int  # exclusive
    complete: bool


def protocol_groups(history: list[Message]) -> tuple[list[Group], int]:
    """Complete groups in order, and how many messages were dropped (incomplete or orphan).

    System messages (earlier summaries and envelopes) belong to no group: they are superseded.
    """
    groups: list[Group] = []
    dropped = 0
    i, n = 0, len(history)
    while i < n:
        m = history[i]
        if m.role == "system":
            i += 1
            continue
        if m.role == "tool":  # a result whose call is not right before it: orphan
            dropped += 1
            i += 1
            continue
        if m.role == "assistant" and m.tool_calls:
            wanted = {c.id for c in m.tool_calls}
            j = i + 1
            while j < n and history[j].role == "tool" and history[j].tool_call_id in wanted:
                wanted.discard(history[j].tool_call_id or "")
                j += 1
            if wanted:
                dropped += j - i
            else:
                groups.append(Group(i, j, True))
            i = j
            continue
        groups.append(Group(i, i + 1, True))
        i += 1
    return groups, dropped


# ------------------------------------------------------------------------------------ previews


def _spool_ref(content: str) -> str:
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"{SPOOL_DIR}/{digest}.txt"


def _cut_bytes(text: str, nbytes: int, *, from_end: bool = False) -> str:
    raw = text.encode("utf-8", "surrogatepass")
    if nbytes <= 0:
        return ""
    part = raw[-nbytes:] if from_end else raw[:nbytes]
    return part.decode("utf-8", "ignore")


def preview_text(
    text: str, max_tokens: int, est: TokenEstimator, spools: list[Spool] | None
) -> str:
    """Head and tail of `text` around a marker naming the spool file, within `max_tokens`."""
    if est.text_tokens(text) <= max_tokens:
        return text
    size = len(text.encode("utf-8", "surrogatepass"))
    ref = _spool_ref(text)
    if spools is not None:
        spools.append(Spool(ref, text))
    budget_bytes = max(0, max_tokens * 4 - 200)
    while True:
        head = _cut_bytes(text, budget_bytes * 6 // 10)
        tail = _cut_bytes(
            text, budget_bytes - len(head.encode("utf-8", "surrogatepass")), from_end=True
        )
        marker = (
            f"\n[... preview of {size} bytes; the full text is in {ref} ...]\n"
            if spools is not None
            else f"\n[... preview of {size} bytes ...]\n"
        )
        out = f"{head}{marker}{tail}"
        if est.text_tokens(out) <= max_tokens or budget_bytes == 0:
            return out if est.text_tokens(out) <= max_tokens else marker.strip()[: max_tokens * 4]
        budget_bytes //= 2


def _preview_args(
    call: ToolCall, max_tokens: int, est: TokenEstimator, spools: list[Spool] | None
) -> ToolCall:
    """Oversized arguments become a small JSON object (still valid JSON for every provider)."""
    if est.text_tokens(call.arguments) <= max_tokens:
        return call
    shown = preview_text(call.arguments, max(max_tokens - 24, 8), est, spools)
    body = orjson.dumps({"_vtcode_preview": shown}).decode()
    while est.text_tokens(body) > max_tokens and len(shown) > 8:
        shown = shown[: len(shown) // 2]
        body = orjson.dumps({"_vtcode_preview": shown}).decode()
    return replace(call, arguments=body)


def bound_message(
    m: Message, max_tokens: int, est: TokenEstimator, spools: list[Spool] | None
) -> Message:
    """`m` itself when it fits `max_tokens`, else a bounded preview of its largest parts."""
    if est.message(m) <= max_tokens:
        return m
    fixed = est.message(replace(m, content="", reasoning=None, tool_calls=()))
    room = max(max_tokens - fixed, 8)
    calls = m.tool_calls
    if calls:
        per_call = max(room // (2 * len(calls)) - 20, 8)
        calls = tuple(_preview_args(c, per_call, est, spools) for c in calls)
        room = max(
            room - sum(20 + est.text_tokens(c.name) + est.text_tokens(c.arguments) for c in calls),
            8,
        )
    content = preview_text(m.content, room, est, spools) if m.content else ""
    return replace(m, content=content, reasoning=None, tool_calls=calls)


def _bound_group(
    msgs: list[Message],
    budget: int,
    cap: int,
    est: TokenEstimator,
    spools: list[Spool] | None,
) -> list[Message] | None:
    """The group with oversized messages previewed so the whole fits `budget`, or None."""
    out = [bound_message(m, cap, est, spools) for m in msgs]
    total = est.messages(out)
    shrink = cap
    while total > budget and shrink > _MIN_PREVIEW_TOKENS:
        shrink = max(shrink // 2, _MIN_PREVIEW_TOKENS)
        out = [bound_message(m, shrink, est, spools) for m in msgs]
        total = est.messages(out)
    return out if total <= budget else None


# ------------------------------------------------------------------------------------ builder


def summary_message(summary: str, max_tokens: int, est: TokenEstimator) -> Message:
    body = preview_text(summary.strip(), max(max_tokens - ROLE_OVERHEAD - 8, 8), est, None)
    return Message(role="system", content=SUMMARY_PREFIX + body, name=SUMMARY_NAME)


def envelope_message(rendered: str, max_tokens: int, est: TokenEstimator) -> Message:
    body = preview_text(rendered, max(max_tokens - ROLE_OVERHEAD - 8, 8), est, None)
    return Message(role="system", content=body, name=ENVELOPE_NAME)


def compact_history(
    history: list[Message],
    *,
    summary: str,
    envelope_text: str,
    budget: CompactionBudget | None = None,
    estimator: TokenEstimator | None = None,
    include_tail: bool = True,
    spool: bool = True,
) -> CompactedHistory:
    """Build the compacted history (no I/O; write `result.spools` before using it).

    `spool=False`: previews name no spool file (for callers that cannot write one).
    """
    b = budget or CompactionBudget()
    est = estimator or default_estimator()
    spools: list[Spool] | None = [] if spool else None
    groups, dropped = protocol_groups(history)

    tail: list[Message] = []
    tail_tokens = 0
    tail_start = len(history)
    if include_tail:
        cap = b.message_cap
        for k, g in enumerate(reversed(groups)):
            msgs = history[g.start : g.end]
            bounded = [bound_message(m, cap, est, spools) for m in msgs]
            cost = est.messages(bounded)
            recent = len(history) - g.start <= b.preserve_recent
            if tail_tokens + cost > b.tail_tokens and not recent:
                if k > 0:
                    break
                fitted = _bound_group(msgs, b.tail_tokens, cap, est, spools)
                if fitted is None:
                    break
                bounded, cost = fitted, est.messages(fitted)
            tail[:0] = bounded
            tail_tokens += cost
            tail_start = g.start

    retained: list[Message] = []
    n_keep = b.retained_user_messages
    if n_keep > 0:
        older_users = [
            g.start for g in groups if g.start < tail_start and history[g.start].role == "user"
        ]
        chosen = older_users[-n_keep:]
        if older_users and older_users[0] not in chosen:  # the task itself always stays
            chosen = [older_users[0], *older_users[len(older_users) - n_keep + 1 :]]
        per = max(b.retained_user_tokens // max(len(chosen), 1), _MIN_PREVIEW_TOKENS)
        used = 0
        for i in chosen:
            m = bound_message(history[i], per, est, spools)
            cost = est.message(m)
            if used + cost > b.retained_user_tokens:
                continue
            retained.append(m)
            used += cost

    head = [
        summary_message(summary, b.summary_tokens, est),
        envelope_message(envelope_text, b.envelope_tokens, est),
    ]
    messages = [*head, *retained, *tail]
    unique: dict[str, Spool] = {s.path: s for s in spools or ()}
    return CompactedHistory(
        messages=messages,
        original_count=len(history),
        tail_start=tail_start,
        tail_tokens=tail_tokens,
        total_tokens=est.messages(messages),
        retained_user_count=len(retained),
        dropped_incomplete=dropped,
        spools=list(unique.values()),
    )
