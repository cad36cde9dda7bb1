"""Close what a crash left open, before anything else is appended to a session.

A run killed by SIGKILL, the OOM killer or a power cut ends its log without `thread.completed`,
often inside a turn and with items still streaming. Appending a new run after that (`exec
resume`, `chat --resume`, a `loop run` step, `vtcode compact`, a verifier with `--parent`) would
produce a log that `vtcode validate` rejects (nested turn, duplicate thread.started). So every
path that opens an existing session for writing goes through `open_for_append`, which appends,
through the writer's ordinary `submit`:

1. `item.completed` for each item still open, carrying its last snapshot (a command, tool call
   or MCP call still `in_progress`/`started` is marked `failed`: it never finished);
2. a `harness` item (`error_recovered`) saying the run was interrupted and recovered on reopen;
3. `turn.failed` ("interrupted") when a turn is open;
4. `thread.completed{subtype: error_during_execution, outcome_code: "interrupted"}` with the
   usage of the turns that ended in the interrupted run and the number of turns it started;

then flushes (fsync) so the closing is durable before the next run's first event. The truth is
kept: nothing claims success, and the harness item and stop reason say what happened.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from vtcode.config.model import StoreConfig
from vtcode.events.enums import (
    HarnessEventKind,
    McpToolCallStatus,
    ThreadCompletionSubtype,
    ToolCallStatus,
)
from vtcode.events.types import (
    CommandExecutionItem,
    HarnessItem,
    ItemCompletedEvent,
    ItemDetails,
    ItemStartedEvent,
    ItemUpdatedEvent,
    McpToolCallItem,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadEvent,
    ThreadItem,
    ThreadStartedEvent,
    ToolInvocationItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
    UnknownEvent,
    Usage,
)
from vtcode.store.logstate import LINE_SLACK
from vtcode.store.models import SessionStatus
from vtcode.store.reader import iter_log
from vtcode.store.writer import SessionWriter

__all__ = [
    "INTERRUPTED",
    "OpenRun",
    "apply_to_run",
    "close_interrupted",
    "closing_events",
    "open_for_append",
    "scan_open_run",
]

INTERRUPTED = "interrupted"
RECOVERED_MESSAGE = (
    "the previous run ended without thread.completed (the process was killed or crashed); "
    "vtcode closed it as interrupted when the session was reopened"
)
STOP_REASON = "interrupted: the process ended before the run finished (recovered on reopen)"
_ITEM_NUM = re.compile(r"item_(\d+)$")


@dataclasses.dataclass(slots=True)
class OpenRun:
    """What the last, unfinished run of a log left open."""

    thread_id: str | None = None
    turn_open: bool = False
    turns_started: int = 0
    usage: Usage = dataclasses.field(default_factory=Usage)
    open_items: dict[str, ThreadItem] = dataclasses.field(default_factory=dict)
    next_item: int = 0  # the first `item_<n>` never used in the whole session


def scan_open_run(events_path: Path, max_line: int) -> OpenRun | None:
    """The unfinished last run of a log, or None when the log is empty or ends closed.

    One pass, memory bounded by the open items of the last run. A `thread.compact_boundary`
    after `thread.completed` (an offline `vtcode compact`) does not open a run.
    """
    run: OpenRun | None = None
    thread_id: str | None = None
    top = -1
    for line in iter_log(events_path, max_line):
        ev = line.envelope.event
        if isinstance(ev, ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent):
            m = _ITEM_NUM.match(ev.item.id)
            if m:
                top = max(top, int(m.group(1)))
        if isinstance(ev, ThreadCompletedEvent):
            run = None
            continue
        if isinstance(ev, ThreadCompactBoundaryEvent) and run is None:
            continue
        if run is None or isinstance(ev, ThreadStartedEvent):
            run = OpenRun(thread_id=thread_id)
        apply_to_run(run, ev)
        if isinstance(ev, ThreadStartedEvent):
            thread_id = run.thread_id = ev.thread_id
    if run is not None:
        run.next_item = top + 1
    return run


def apply_to_run(run: OpenRun, ev: ThreadEvent | UnknownEvent) -> None:
    """Fold one event of a run into what it leaves open (also `sessions repair`'s replay)."""
    if isinstance(ev, TurnStartedEvent):
        run.turn_open = True
        run.turns_started += 1
    elif isinstance(ev, TurnCompletedEvent):
        run.turn_open = False
        run.usage = run.usage.add(ev.usage)
    elif isinstance(ev, TurnFailedEvent):
        run.turn_open = False
        if ev.usage is not None:
            run.usage = run.usage.add(ev.usage)
    elif isinstance(ev, ItemStartedEvent | ItemUpdatedEvent):
        run.open_items[ev.item.id] = ev.item
    elif isinstance(ev, ItemCompletedEvent):
        run.open_items.pop(ev.item.id, None)


def _unfinished(details: ItemDetails) -> ItemDetails:
    """The final snapshot of an item that never finished: a running call is marked failed."""
    if (
        isinstance(details, CommandExecutionItem | ToolInvocationItem)
        and details.status is ToolCallStatus.IN_PROGRESS
    ):
        return dataclasses.replace(details, status=ToolCallStatus.FAILED)
    if isinstance(details, McpToolCallItem) and details.status in (
        None,
        McpToolCallStatus.STARTED,
    ):
        return dataclasses.replace(details, status=McpToolCallStatus.FAILED)
    return details


def closing_events(run: OpenRun, session_id: str) -> list[ThreadEvent]:
    """The events that close `run` truthfully (see the module doc for the order)."""
    out: list[ThreadEvent] = [
        ItemCompletedEvent(item=dataclasses.replace(item, details=_unfinished(item.details)))
        for item in run.open_items.values()
    ]
    out.append(
        ItemCompletedEvent(
            item=ThreadItem(
                id=f"item_{run.next_item}",
                details=HarnessItem(
                    event=HarnessEventKind.ERROR_RECOVERED,
                    message=RECOVERED_MESSAGE,
                    error_category=INTERRUPTED,
                ),
            )
        )
    )
    if run.turn_open:
        out.append(TurnFailedEvent(message=INTERRUPTED))
    out.append(
        ThreadCompletedEvent(
            thread_id=run.thread_id or session_id,
            session_id=session_id,
            subtype=ThreadCompletionSubtype.ERROR_DURING_EXECUTION,
            outcome_code=INTERRUPTED,
            stop_reason=STOP_REASON,
            usage=run.usage,
            num_turns=run.turns_started,
        )
    )
    return out


def close_interrupted(writer: SessionWriter, cfg: StoreConfig) -> int:
    """Append the closing of an interrupted last run (if any) and fsync it; the event count.

    The caller holds the writer fresh from `open_existing` (nothing submitted yet), so the log
    on disk is exactly what the crash left. Raises `PersistenceError` like any submit.
    """
    rec = writer.recovery
    if rec is not None and (
        rec.state.event_count == 0 or rec.state.status is SessionStatus.COMPLETED
    ):
        return 0  # the manifest's fold of the log already says the last run ended
    run = scan_open_run(writer.events_path, cfg.max_event_bytes + LINE_SLACK)
    if run is None:
        return 0
    events = closing_events(run, writer.session_id)
    for ev in events:
        writer.submit(ev)
    writer.flush()
    return len(events)


def open_for_append(workspace: Path, session_id: str, cfg: StoreConfig) -> SessionWriter:
    """`SessionWriter.open_existing`, then close an interrupted last run: the one way to open
    an existing session for writing."""
    writer = SessionWriter.open_existing(workspace, session_id, cfg)
    try:
        close_interrupted(writer, cfg)
    except BaseException:
        writer.abort()
        raise
    return writer
