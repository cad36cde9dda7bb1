"""A compact run's first reply, drawn again when it would change nothing (issue 28).

A small model's first reply decides a run: once a reply is in the history, qwen0.5b copies it
(docs/eval.md, twelfth pass: at the request it repeated itself, 20 of 28 resamples were the
repeat, at any temperature). And the first reply varies: the same first request drawn four
times at temperature 0.2 wrote config.ini back (the task said not to change it) in some draws
and answer.txt with the right port in others; wrote the file it was shown back unchanged in
three draws of four and the asked-for file in the fourth (docs/eval.md, fourteenth pass). So
before a fresh compact run's first reply enters the history, the harness reads it the way it
would run it and draws it again, up to `agent.harness.first_reply_draws` in all, when it could
not change the folder: no file block and no command, or only blocks that write a file back as
it is, a file the task says not to change, the example's file, or a file the model was never
shown (each refused when it would run); or when it leaves out a new file the task asks for,
or drops a third of a shown file's lines when the task asks to remove nothing.
The first draw without such a fault is kept; when every draw has one, the one with the fewest
(the earliest of them). Only what the judge can see without running
anything counts: a reply with a command or a call written as JSON is kept as it is.

Off by default (`first_reply_draws = 1`): in its A/B on qwen0.5b (docs/eval.md, fourteenth
pass) the arms with draws solved 4, 5 and 3 of twelve public runs against 3 without, the noise
of one or two runs, and ended as many runs `success` with the check failing. It stays for a
model or a suite where the figures say otherwise.

Every draw is a real request: the kept reply's usage is the sum of all of them (what the
server was asked for), and an `error_recovered` item names the draws and why each was
redrawn. A replay script is no exception: each draw takes its next step, so a recorded run
(`--record`) replays with the same draws; a hand-written script whose first reply changes
nothing sets `agent.harness.first_reply_draws = 1` to script each reply itself.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from vtcode.events.enums import HarnessEventKind
from vtcode.events.types import Usage
from vtcode.loop.file_blocks import scan_file_blocks
from vtcode.loop.text_calls import scan_text_calls
from vtcode.loop.text_turn import task_of, tool_names
from vtcode.messages import (
    ModelRequest,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from vtcode.providers.base import ProviderError

if TYPE_CHECKING:
    from vtcode.loop.lead_in import LeadIn
    from vtcode.loop.runner import Runner

__all__ = [
    "DRAWN",
    "DRAW_SECONDS",
    "REDRAW_TEMPERATURE",
    "first_reply_faults",
    "stream_first_reply",
]

DRAWN = "first_reply_drawn"  # the error_recovered item's category
# A task that asks for lines to go: a shorter file is then the work, not a mangled copy.
_REMOVES = re.compile(r"\b(?:delete|remove|drop|strip|trim|shorten|clean\s+up|get\s+rid)\b", re.I)
REDRAW_TEMPERATURE = 0.7  # the draws after the first
# No draw starts once drawing has taken this long: on a loaded CPU one qwen0.5b reply took over
# a minute, and four used up an eval task's 300 s before the run had done anything (the A/B
# of 2026-12-08, js-fix-chunk).
DRAW_SECONDS = 90.0


@dataclass(frozen=True, slots=True)
class _Draw:
    events: tuple[StreamEvent, ...]
    completed: ResponseCompleted
    faults: tuple[str, ...]


def stream_first_reply(self: Runner, request: ModelRequest) -> Iterator[StreamEvent]:
    """The provider's stream for `request`; for a fresh compact run's first request with draws
    left, the chosen draw's events (see the module doc). A `ProviderError` of the first draw
    propagates as the request's own; one of a later draw ends the drawing."""
    lead = self.lead_in
    if lead is None or not lead.draws.armed or self.workspace is None or self.chat is not None:
        return self.provider.stream(request)
    # Armed for a fresh task's first request when draws are on (`task_observe`); with them off
    # that reply streams as it comes, as every other request's does.
    lead.draws.armed = False
    allowed = lead.draws.allowed
    workspace, task, catalog = self.workspace, task_of(self), tool_names(self)

    def judge(text: str, cut_off: bool) -> tuple[str, ...]:
        return first_reply_faults(text, lead, workspace, task, catalog, cut_off=cut_off)

    draws: list[_Draw] = []
    started = time.monotonic()
    for n in range(allowed):
        if n and time.monotonic() - started > DRAW_SECONDS:
            break  # a slow server: the run's own time is worth more than another draw
        # At the run's own temperature a draw is mostly the same reply again (the A/B of
        # 2026-12-08: fix-typo's four draws, all the same copy); later ones are warmer.
        again = request if n == 0 else replace(request, temperature=REDRAW_TEMPERATURE)
        try:
            draw = _draw(self.provider.stream(again), judge)
        except ProviderError:
            if not draws:
                raise
            break
        draws.append(draw)
        if not draw.faults:
            break
    chosen = min(draws, key=lambda d: len(d.faults))
    if len(draws) > 1:
        self.recorder.harness(
            HarnessEventKind.ERROR_RECOVERED, message=_note(draws, chosen), error_category=DRAWN
        )
    usage = Usage()
    for d in draws:
        usage = usage.add(d.completed.usage)
    return iter((*chosen.events, replace(chosen.completed, usage=usage)))


def _draw(stream: Iterator[StreamEvent], judge: Callable[[str, bool], tuple[str, ...]]) -> _Draw:
    events: list[StreamEvent] = []
    completed: ResponseCompleted | None = None
    for ev in stream:
        if isinstance(ev, ResponseCompleted):
            completed = ev
        else:
            events.append(ev)
    if completed is None:
        raise ProviderError("the model stream ended without a final response event")
    text = "".join(ev.text for ev in events if isinstance(ev, TextDelta))
    native = any(isinstance(ev, ToolCallDelta) for ev in events)  # a reasoning delta is none
    cut_off = completed.stop_reason == "max_tokens"
    faults = () if native else judge(text, cut_off)
    return _Draw(tuple(events), completed, faults)


def first_reply_faults(
    text: str,
    lead: LeadIn,
    workspace: Path,
    task: str,
    catalog: Collection[str],
    *,
    cut_off: bool = False,
) -> tuple[str, ...]:
    """Why a first reply, run as `recover_calls` would run it, could not change the folder;
    empty when it could (or when only running it would tell)."""
    known = lead.shown | lead.written | set(lead.expected)
    calls = scan_file_blocks(text, catalog, ended=not cut_off, known=known)
    if not calls:
        if scan_text_calls(text, catalog).calls:
            return ()  # a call written as JSON: judged when it runs
        return ("wrote no file and ran no command",)
    if any(c.name != "write_file" for c in calls):
        return ()  # a command may change anything
    written: set[str] = set()
    dropped: list[str] = []
    changes = 0
    for call in calls:
        args = json.loads(call.arguments)
        path, content = str(args.get("path", "")), str(args.get("content", ""))
        rel = os.path.normpath(path)
        written.add(rel)
        excerpted = any(e.path == rel for e in lead.excerpts)
        refused = lead.refusal(path, workspace, content, task, over_excerpt=excerpted)
        if refused or lead.escaped_write(path, content):
            continue  # refused when it runs
        shown = lead.read(rel) if rel in lead.shown and lead.read is not None else None
        if shown == content:
            continue  # written back as shown
        if shown is not None and _drops_lines(shown, content) and not _REMOVES.search(task):
            dropped.append(rel)
            continue
        changes += 1
    faults = [] if changes else ["changed no file"]
    if dropped:
        faults.append(f"dropped a third or more of the lines of {', '.join(dropped)}")
    left_out = [n for n in lead.missing(workspace) if os.path.normpath(n) not in written]
    if left_out:
        faults.append(f"left out {', '.join(left_out)}")
    return tuple(faults)


def _drops_lines(shown: str, content: str) -> bool:
    """A rewrite of a file of 6 lines or more that keeps fewer than two thirds of them: at
    temperature 0.7 qwen0.5b rewrote fix-typo's 12-line README.md as 7 lines, the typo still
    in them (4 of 97 writes over a shown file in the evals of 2026-12-08, all of them such
    redraws; none at 0.2)."""
    before = shown.count("\n") + (not shown.endswith("\n"))
    return before >= 6 and content.count("\n") + 1 < before * 2 / 3


def _note(draws: list[_Draw], chosen: _Draw) -> str:
    why = "; ".join(
        f"draw {i} {', '.join(d.faults) or 'could change the folder'}"
        for i, d in enumerate(draws, 1)
    )
    kept = draws.index(chosen) + 1
    return f"first reply drawn {len(draws)} times ({why}); kept draw {kept}"
