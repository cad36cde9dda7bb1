"""The decision ledger in the prompt (`[context.ledger]`), as a part of the loop.

- `enabled` (default true): the run keeps a ledger of its tool calls and their outcomes
  (`vtcode.context.ledger`), fed by the same post-tool point the `post_tool_use` hooks use.
- `include_in_prompt` (default true): every model request carries the ledger, once it has an
  entry, as a user message after the history (`name = "decision_ledger"`, marked as the
  harness's note). Upstream says "into the system prompt"; vtcode freezes the system prompt
  per request segment so a provider's prompt cache keeps the whole prefix, and a ledger there
  would start a new segment (and a cold cache) on every turn. After the history, the prefix
  stays byte-identical and only the request's tail changes. The note is not kept in the
  history or the transcript: each request carries the ledger as it is then.
- `max_entries` (default 12, at least 1 as upstream renders it): the newest entries kept.
- `preserve_in_compression` (default true): the ledger survives a compaction (and a context
  reset), so the decisions a summary shortened stay listed; false empties it there.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from typing import Any

from vtcode.config.model import VtcodeConfig
from vtcode.context.ledger import DecisionLedger, LedgerEntry, entry_of
from vtcode.events.types import Usage
from vtcode.loop.parts import LoopHooks, ToolHooks
from vtcode.loop.recorder import Recorder
from vtcode.messages import Message, ModelRequest
from vtcode.runtime.harness_profile import choose_profile


def _cut_args(raw: str) -> str:
    """A call's raw argument text as its ledger entry shows it (to match the two)."""
    return entry_of(0, "", raw, {}).arguments


__all__ = ["LedgerPart", "make_part"]


def make_part(config: VtcodeConfig, model: str) -> LedgerPart | None:
    """The part when `context.ledger.enabled` (else no ledger is kept at all). The compact
    harness for small models (`agent.harness.profile`) sends no ledger: it keeps only what its
    bench runs showed a small model can use, and a note after the history is not among them."""
    ledger = config.context.ledger
    if not ledger.enabled:
        return None
    compact = choose_profile(config.agent.harness.profile, model).compact
    return LedgerPart(
        max_entries=ledger.max_entries,
        include_in_prompt=ledger.include_in_prompt and not compact,
        preserve_in_compression=ledger.preserve_in_compression,
    )


class LedgerPart(LoopHooks, ToolHooks):
    """Records each tool call after it ran; adds the ledger to each request."""

    def __init__(
        self, *, max_entries: int, include_in_prompt: bool, preserve_in_compression: bool
    ) -> None:
        self.ledger = DecisionLedger(max_entries)
        self.include_in_prompt = include_in_prompt
        self.preserve_in_compression = preserve_in_compression
        self.turn = 0  # model responses so far: the turn a call belongs to
        self._pending: list[LedgerEntry] = []  # reported since the last request
        self._lock = threading.Lock()

    # LoopHooks

    def tool_hooks(self) -> Sequence[ToolHooks]:
        return (self,)

    def after_response(self, usage: Usage) -> None:
        self.turn += 1

    def finish_request(self, request: ModelRequest) -> ModelRequest:
        self._settle(request.messages)
        note = self.ledger.message() if self.include_in_prompt else None
        if note is None or request.purpose != "turn":
            return request
        return dataclasses.replace(request, messages=(*request.messages, note))

    def compacted(self) -> None:
        if not self.preserve_in_compression:
            with self._lock:
                self._pending.clear()  # their results were compacted too
            self.ledger.clear()

    def reset(self, recorder: Recorder) -> None:
        self.compacted()  # a context reset drops the history too

    # ToolHooks

    def pre_tool(self, name: str, arguments: Any) -> str | None:
        return None

    def post_tool(self, name: str, arguments: Any, response: dict[str, Any]) -> None:
        # Concurrent read-only calls report from worker threads in the order they finish;
        # `_settle` puts them in call order before the next request.
        entry = entry_of(max(self.turn, 1), name, arguments, response)
        with self._lock:
            self._pending.append(entry)

    def _settle(self, messages: Sequence[Message]) -> None:
        """Move the calls reported since the last request into the ledger, in the order the
        newest response asked for them (calls it did not ask for, the harness's verify
        commands, keep their order after those)."""
        with self._lock:
            pending, self._pending = self._pending, []
        if not pending:
            return
        asked = next((m for m in reversed(messages) if m.tool_calls), None)
        order: dict[tuple[str, str], int] = {}
        for i, call in enumerate(asked.tool_calls if asked is not None else ()):
            order.setdefault((call.name, _cut_args(call.arguments)), i)
        pending.sort(key=lambda e: order.get((e.tool, e.arguments), len(order)))
        self.ledger.add(pending)

    def permission_request(self, name: str, arguments: Any, reason: str) -> bool | None:
        return None
