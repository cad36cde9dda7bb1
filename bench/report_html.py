"""The session page: how long `sessions show ID --html` takes on long sessions, next to the floor.

Run: .venv/bin/python bench/report_html.py [--quick]

Sessions of 100, 1,000 and 5,000 turns are written through the real store (DispatchGate ->
SessionWriter, durability `os`); each turn has a message, a tool call, its output (with a few
lines of text) and, every 50 turns, a compaction boundary. Figures, all in this process:
- floor:  read_session_events over the whole log (decode every line; nothing built)
- model:  build_report (the floor plus the page's view of turns and items)
- render: render_html of that model (escaping, SVG, CSS inlined)
- page:   the size of the HTML written
and the ratio of model+render to the floor. `retained` is what the log keeps: the store may
evict the oldest events of a very long session (store.max_events), and the page shows what
the log holds.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from vtcode.config.model import Durability, StoreConfig
from vtcode.events.enums import (
    CompactionMode,
    CompactionTrigger,
    ThreadCompletionSubtype,
    ToolCallStatus,
    ToolOutcome,
)
from vtcode.events.types import (
    AgentMessageItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadEvent,
    ThreadItem,
    ThreadStartedEvent,
    ToolInvocationItem,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnStartedEvent,
    Usage,
)
from vtcode.report import build_report, render_html
from vtcode.store import DispatchGate, SessionWriter, read_session_events

SID = "bench"


def session_events(turns: int) -> list[ThreadEvent]:
    out: list[ThreadEvent] = [ThreadStartedEvent(thread_id=SID)]
    total = Usage()
    for t in range(turns):
        usage = Usage(input_tokens=2000 + 37 * (t % 50), output_tokens=60)
        total = total.add(usage)
        call = f"item_{t}_call"
        args = {"command": f"grep -n step{t} src/*.py"}
        out += [
            TurnStartedEvent(),
            ItemCompletedEvent(
                item=ThreadItem(
                    id=f"item_{t}_msg",
                    details=AgentMessageItem(
                        text=f"Turn {t}: searching for <step{t}> & fixing it."
                    ),
                )
            ),
            ItemStartedEvent(
                item=ThreadItem(
                    id=call,
                    details=ToolInvocationItem(
                        tool_name="exec_command", status=ToolCallStatus.IN_PROGRESS
                    ),
                )
            ),
            ItemCompletedEvent(
                item=ThreadItem(
                    id=call,
                    details=ToolInvocationItem(
                        tool_name="exec_command",
                        arguments=args,
                        status=ToolCallStatus.COMPLETED,
                        outcome=ToolOutcome.SUCCESS,
                    ),
                )
            ),
            ItemCompletedEvent(
                item=ThreadItem(
                    id=f"{call}:output",
                    details=ToolOutputItem(
                        call_id=call,
                        output="\n".join(
                            f"src/m{i}.py:{t}: step{t} = {i}  # <b>x</b>" for i in range(8)
                        ),
                        exit_code=0,
                        status=ToolCallStatus.COMPLETED,
                    ),
                )
            ),
            TurnCompletedEvent(usage=usage),
        ]
        if t % 50 == 49:
            out.append(
                ThreadCompactBoundaryEvent(
                    thread_id=SID,
                    trigger=CompactionTrigger.AUTO,
                    mode=CompactionMode.LOCAL,
                    original_message_count=400,
                    compacted_message_count=12,
                )
            )
    out.append(
        ThreadCompletedEvent(
            thread_id=SID,
            session_id=SID,
            subtype=ThreadCompletionSubtype.SUCCESS,
            outcome_code="success",
            result="done",
            usage=total,
            total_cost_usd=(total.input_tokens * 3 + total.output_tokens * 15) / 1e6,
            num_turns=turns,
        )
    )
    return out


def write_session(ws: Path, turns: int) -> int:
    # a queue deep enough for a burst of 30,000 events (the loop never emits that fast)
    cfg = StoreConfig(durability=Durability.OS, queue_max_events=1 << 20, queue_max_bytes=1 << 30)
    gate = DispatchGate(SessionWriter.create(ws, SID, cfg))
    evs = session_events(turns)
    for e in evs:
        gate.emit(e)
    gate.close()
    return len(evs)


def best(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def measure(turns: int) -> str:
    ws = Path(tempfile.mkdtemp(prefix="bench-report-"))
    try:
        written = write_session(ws, turns)
        n = sum(1 for _ in read_session_events(ws, SID))  # retained (the store may evict)
        log = ws / ".vtcode" / "sessions" / SID / "events.jsonl"
        repeat = 3 if turns <= 1000 else 1
        floor = best(lambda: sum(1 for _ in read_session_events(ws, SID)), repeat)
        model = best(lambda: build_report(ws, SID), repeat)
        report = build_report(ws, SID)
        render = best(lambda: render_html(report), repeat)
        page = render_html(report).encode()
        ratio = (model + render) / floor
        return (
            f"{turns:>6} {written:>8} {n:>8} {log.stat().st_size / 1e6:>7.2f} {floor * 1e3:>9.1f} "
            f"{model * 1e3:>9.1f} {render * 1e3:>10.1f} {len(page) / 1e6:>8.2f} {ratio:>8.2f}"
        )
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 turns only")
    args = parser.parse_args()
    sizes = [100, 1000] if args.quick else [100, 1000, 5000]
    print(
        f"{'turns':>6} {'written':>8} {'retained':>8} {'log MB':>7} {'floor ms':>9} "
        f"{'model ms':>9} {'render ms':>10} {'page MB':>8} {'x floor':>8}"
    )
    for turns in sizes:
        print(measure(turns), flush=True)


if __name__ == "__main__":
    main()
