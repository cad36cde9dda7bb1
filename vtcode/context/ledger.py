"""The decision ledger (`[context.ledger]`): a compact record of the run's tool calls.

Upstream's DecisionTracker keeps each decision (turn, tool, arguments, outcome) and renders "a
compact Decision Ledger for injection into the system prompt" (`render_ledger_brief`): the
newest `max_entries`, most recent first, arguments cut to 120 bytes. This is that ledger for
vtcode's runs: one entry per tool call that ran, with its outcome (ok, failed, exit code), so
the model keeps sight of what it already did and how it went after older turns were compacted
or their results cleared. Where it goes in a request is the runtime's business
(`vtcode.runtime.ledger_part`); this module only keeps and renders it.
"""

from __future__ import annotations

import collections
import dataclasses
import json
from typing import Any

from vtcode.messages import LEDGER_NAME, Message

__all__ = ["LEDGER_HEADER", "DecisionLedger", "LedgerEntry", "canonical_args", "entry_of"]

LEDGER_HEADER = "Decision Ledger (most recent first)"  # upstream's first line
_ARGS_BYTES = 120  # upstream's argument preview budget
_OUTCOME_CHARS = 80


def _cut(text: str, limit: int) -> str:
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", "ignore") + "…"


@dataclasses.dataclass(frozen=True, slots=True)
class LedgerEntry:
    turn: int  # the model response that asked for the call (1-based)
    tool: str
    arguments: str  # compact JSON, cut to 120 bytes
    outcome: str  # "ok", "failed: ...", "exit 1"

    def line(self) -> str:
        return f"- [turn {self.turn}] tool:{self.tool} args={self.arguments} -> {self.outcome}"


def outcome_of(response: dict[str, Any]) -> str:
    """A tool response (output, status, exit_code) summarized in a few words."""
    code = response.get("exit_code")
    failed = response.get("status") != "completed"
    if code not in (None, 0):
        return f"exit {code}"
    if not failed:
        return "ok"
    first = next((ln.strip() for ln in str(response.get("output", "")).splitlines() if ln), "")
    return f"failed: {_cut(first, _OUTCOME_CHARS)}" if first else "failed"


def canonical_args(arguments: Any) -> str:
    """Arguments as compact JSON with sorted keys (raw JSON text is parsed first)."""
    if isinstance(arguments, str):
        raw = arguments
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return raw
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def entry_of(turn: int, tool: str, arguments: Any, response: dict[str, Any]) -> LedgerEntry:
    return LedgerEntry(
        turn, tool, _cut(canonical_args(arguments), _ARGS_BYTES), outcome_of(response)
    )


class DecisionLedger:
    """The newest `max_entries` decisions (at least one, as upstream renders them)."""

    def __init__(self, max_entries: int) -> None:
        self.entries: collections.deque[LedgerEntry] = collections.deque(maxlen=max(1, max_entries))

    def record(self, turn: int, tool: str, arguments: Any, response: dict[str, Any]) -> None:
        self.add([entry_of(turn, tool, arguments, response)])

    def add(self, entries: list[LedgerEntry]) -> None:
        self.entries.extend(entries)

    def clear(self) -> None:
        self.entries.clear()

    def render(self) -> str:
        lines = [LEDGER_HEADER, *(e.line() for e in reversed(self.entries))]
        return "\n".join(lines)

    def message(self) -> Message | None:
        """The ledger as a request carries it (None while it is empty): a user message after
        the history, marked as the harness's note so it is not read as a new request."""
        if not self.entries:
            return None
        note = (
            "[harness note: the record of this run's tool calls so far, for reference; "
            "not a new request]\n"
        )
        return Message(role="user", content=note + self.render(), name=LEDGER_NAME)
