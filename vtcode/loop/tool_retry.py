"""Retrying a tool call that failed transiently (`agent.harness.max_tool_retries`).

Two conditions, both needed, as upstream's tool pipeline has them:

- the failure is *transient*: the tool raised `TransientToolError`. Today that is an MCP call
  that got no answer within the server's `timeout_seconds` while the server is still running.
  Everything else is permanent for this purpose: a tool that answered (an error result, a
  command that exited non-zero, a missing file, a refused path), a server that is gone (vtcode
  does not reconnect, so a repeat would fail the same way), invalid arguments, a permission or
  hook refusal (those never reach the tool). The built-in tools read and write the local disk,
  where a failure is about the path or the content and would happen again;
- the call is *safe to repeat*: a built-in read-only tool (`read_file`, `list_files`, `grep`),
  or an MCP tool whose server annotates it `readOnlyHint` or `idempotentHint`. A write, a
  command (`exec_command`, `write_stdin`) or an unannotated MCP tool is never sent twice: a
  timed-out write may still have happened.

Between attempts the harness waits upstream's backoff (0.2 s, doubling, at most 3 s; without
upstream's jitter, so a run is reproducible), interruptible by the run's cancellation. Each
retry is reported by the runner as upstream's `tool_retry_attempted` harness item, and a call
that succeeded after retries as `error_recovered`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from vtcode.threads import wait_event
from vtcode.tools.base import ToolError, ToolResult, TransientToolError

__all__ = ["BACKOFF_BASE_SECS", "BACKOFF_MAX_SECS", "ToolRetry", "backoff", "retry_safe", "run"]

BACKOFF_BASE_SECS = 0.2  # upstream's RETRY_BACKOFF_BASE
BACKOFF_MAX_SECS = 3.0  # upstream's MAX_RETRY_BACKOFF


@dataclasses.dataclass(frozen=True, slots=True)
class ToolRetry:
    """One retry: which (1-based), after what failure, after how long a wait."""

    attempt: int
    category: str
    error: str
    delay_ms: int


def backoff(retry: int) -> float:
    """Seconds to wait before retry `retry` (1-based)."""
    return float(min(BACKOFF_MAX_SECS, BACKOFF_BASE_SECS * 2.0 ** (retry - 1)))


def retry_safe(tool: Any) -> bool:
    """Whether sending the same call again is harmless: a read-only tool, or a tool that says so
    itself (`retry_safe`, an MCP tool annotated read-only or idempotent)."""
    return bool(getattr(tool, "retry_safe", False) or getattr(tool, "read_only", False))


def run(
    attempt: Callable[[], ToolResult],
    *,
    retries: int,
    safe: bool,
    cancel: threading.Event,
) -> tuple[ToolResult | ToolError, list[ToolRetry]]:
    """Run `attempt`, retrying a transient failure up to `retries` times when `safe`; the last
    result (or the error that ended it) and the retries made. A cancellation during a wait ends
    the retries with the failure in hand."""
    made: list[ToolRetry] = []
    while True:
        try:
            return attempt(), made
        except TransientToolError as e:
            if not safe or len(made) >= retries or cancel.is_set():
                return e, made
            delay = backoff(len(made) + 1)
            made.append(ToolRetry(len(made) + 1, e.category, str(e), round(delay * 1000)))
            if wait_event(cancel, delay):
                return e, made
        except ToolError as e:
            return e, made
