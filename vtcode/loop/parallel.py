"""Concurrent read-only calls (`agent.harness.max_parallel_tool_calls`).

A response often asks for several reads at once (three files, a grep and a listing). Read-only
calls change nothing, so consecutive ones are independent: they run together on a thread pool,
at most `limit` at a time (0 = all of them), and the `tool` state then records every call in
call order exactly as if it had run alone. A call that writes, runs a command or may not run
(the per-turn cap, invalid JSON) is a barrier: calls on either side of it are never reordered
around it.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from vtcode.loop.cancel import CancelToken
from vtcode.loop.parts import ToolExecutor, ToolRunOutcome
from vtcode.messages import ToolCall
from vtcode.threads import future_result

__all__ = ["run_read_only_batches"]


def _batches(
    calls: Sequence[ToolCall], tools: ToolExecutor, runnable: int
) -> list[list[tuple[int, Any]]]:
    """Runs of two or more consecutive read-only calls with valid arguments (index, args)."""
    out: list[list[tuple[int, Any]]] = []
    run: list[tuple[int, Any]] = []
    for index, call in enumerate(calls[:runnable]):
        try:
            arguments = call.parsed_arguments()
        except ValueError:
            arguments = None
        if arguments is not None and tools.is_read_only(call.name):
            run.append((index, arguments))
            continue
        if len(run) > 1:
            out.append(run)
        run = []
    if len(run) > 1:
        out.append(run)
    return out


def run_read_only_batches(
    calls: Sequence[ToolCall],
    tools: ToolExecutor,
    cancel: CancelToken,
    *,
    limit: int,
    runnable: int,
) -> dict[int, ToolRunOutcome]:
    """The outcomes of the calls run concurrently, by call index (`runnable`: how many calls
    the per-turn cap lets run). With `limit` 1 nothing runs here: every call runs in turn."""
    if limit == 1:
        return {}
    done: dict[int, ToolRunOutcome] = {}
    for batch in _batches(calls, tools, runnable):
        workers = len(batch) if limit <= 0 else min(limit, len(batch))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="vtcode-read") as pool:
            futures: list[tuple[int, Future[ToolRunOutcome]]] = [
                (i, pool.submit(tools.execute, calls[i], args, cancel)) for i, args in batch
            ]
            for i, future in futures:
                done[i] = future_result(future)  # a signal is handled while it waits
    return done
