"""What the runner does with a reply that has no tool calls in the provider's fields.

Three cases, for every provider alike (issue 28):

- the text holds tool calls with catalog names (`text_calls.scan_text_calls`): they become the
  reply's tool calls, run as usual (from a reply cut off by the output cap, only its first whole
  call), and a `harness` item (`error_recovered`, error_category
  `tool_call_in_text`) says they were read from text and which repairs they needed; the history
  keeps them as structured calls, so the next request shows the model the right form;
- the text is only tool-call-shaped (a name not in the catalog, unparsable): never a success.
  The model gets one corrective nudge (a `harness` item `continuation_started`, category
  `tool_call_in_text`, and a user message naming the tools); if it answers the same way again,
  or a limit leaves no room, the run ends `malformed_tool_call` (error_during_execution, exit 1);
- the run ends before any tool ran with a reply that only announces work ("Let me read the
  file:", "I'll fix it"), or, in a compact run (`loop/lead_in.py`), with any short reply
  ("Done."): one nudge to use the tools (category `no_action`), unless
  `agent.harness.continuation_policy = "off"`.

A compact run also reads files and commands written as fenced blocks (`loop/file_blocks.py`),
the form its example teaches, before any JSON call (a JSON object in a file's block is the file).

And a compact run's final answer to a task that asks for a change, with every file in the
folder as it was when the task was given (`loop/folder_state.py`), gets one nudge saying so
(category `unchanged`), then ends `unfinished_no_action`: commands that only check or show
things are not the work (qwen0.5b, rename-symbol: the task's own tests, then "renamed").

After either nudge, a final answer with still no tool run ends `unfinished_no_action`
(error_during_execution, exit 1): the model was told the task needs a tool and never used one,
so whatever it claims was not checked (qwen0.5b, told 'sum_to' is not a tool, answered
'{"summary": "Test passed"}' and the run said success).

Interactive runs only recover calls: a person reads each answer and can say what to do.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from vtcode.events.enums import HarnessEventKind
from vtcode.loop.file_blocks import scan_file_blocks
from vtcode.loop.lead_in import TEXT_CALL_PREFIX, LeadIn
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.recorder import StreamingToolCall
from vtcode.loop.task_checks import (
    MAX_CHECK_ROUNDS,
    CheckResult,
    failure_message,
    run_named_checks,
)
from vtcode.loop.task_text import asks_only_a_question
from vtcode.loop.text_calls import MAX_PROSE_CHARS, TextCall, scan_text_calls
from vtcode.messages import Message, ToolCall

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = [
    "CALL_IN_TEXT",
    "NO_ACTION",
    "end_or_nudge",
    "recover_calls",
    "task_of",
    "tool_names",
]

CALL_IN_TEXT = "tool_call_in_text"
NO_ACTION = "no_action"
CHECK_FAILED = "check_failed"  # the task's named test command failed (loop/task_checks.py)
MISSING_FILE = "missing_file"  # a new file the task asks for is not there (loop/task_observe.py)
UNCHANGED = "unchanged"  # the task asks for a change and no file changed (loop/folder_state.py)
_MAX_LISTED_TOOLS = 24
_SPLICED = "block written over the lines of the file it was shown"
_TOOL_NUDGE = (
    "You have not used any tool yet, so nothing in the workspace has changed. If the task asks "
    "for a change or a fact from the files, call a tool now. If it is really done, reply with a "
    "one-line summary."
)
_BLOCK_FORM = (  # a compact run: the form its example taught (loop/file_blocks.py)
    "Write each file the task needs as its path on a line by itself, then its whole new content "
    "in a fenced code block. To run a command, write it in a ```sh block."
)
_BLOCK_NUDGE = (
    "Nothing has been written or run yet, so nothing in the folder has changed. " + _BLOCK_FORM
)
_UNCHANGED_NUDGE = (
    "No file in the folder has changed since the task was given, so the task is not done yet: "
    "it asks for a change. Running commands that only check or show things changes nothing. "
    + _BLOCK_FORM
)
_CLAIM = re.compile(
    r"\b(done|fixed|finished|complete[ds]?|created|updated|changed|wrote|written|saved|added|"
    r"removed|renamed|edited|modified|corrected|implemented)\b",
    re.IGNORECASE,
)
_INTENT_PHRASES = ("let me ", "let's ", "i will ", "i'll ", "i am going to ", "i'm going to ")


# The work handed back to the user as steps: qwen0.5b, rename-symbol (evals of 2026-12-07),
# "To rename the function ..., you can follow these steps: 1. Open shop/cart.py ..." with nothing
# done; the task's own commands still passed (nothing had changed), so three such runs were a
# success. Only read when the run has done nothing and the task is not a question.
_HANDS_BACK = re.compile(
    r"\byou (?:can|could|need to|should|would need to|will need to|have to|must)\b"
    r"|\byou'(?:ll|d) need to\b|\bfollow these steps\b",
    re.IGNORECASE,
)


def tool_names(self: Runner) -> list[str]:
    """The names of the tools the run offers the model."""
    return [t.name for t in self.tools.catalog()]


def recover_calls(
    self: Runner, content: str, *, cut_off: bool = False
) -> tuple[str, list[tuple[StreamingToolCall, ToolCall]]]:
    """(text for the history, recovered calls): the reply's text unchanged when it holds none.

    From a reply the output cap cut off (`cut_off`) only the first whole call runs: such a reply
    is a small model's runaway list of calls, each after the first written without a result
    (seen on qwen0.5b: a repeated write, a read, a listing, a patch of nonsense, until the cap).
    """
    catalog = set(tool_names(self))
    found: tuple[TextCall, ...] = ()
    said = content
    if self.lead_in is not None:  # a compact run: the form its example taught, read first
        # A call-shaped JSON object inside a path's block is that file's content, and ran as
        # a command when calls written as JSON were looked for first.
        lead = self.lead_in
        known = lead.shown | lead.written | set(lead.expected)
        found = scan_file_blocks(content, catalog, ended=not cut_off, known=known)
    blocks = bool(found)
    if not found:
        scan = scan_text_calls(content, catalog)
        found, said = scan.calls, scan.prose
    if not found:
        return content, []
    calls = found[:1] if cut_off else found
    # A block over a big file's excerpt runs as the whole file; the history keeps the block.
    wholes: list[str | None] = [None] * len(calls)
    if blocks and self.lead_in is not None:
        spliced = [_over_excerpt(self.lead_in, c) for c in calls]
        calls = tuple(c for c, _ in spliced)
        wholes = [whole for _, whole in spliced]
    skipped = len(found) - len(calls)
    repairs = sorted({r for c in calls for r in c.repairs})
    names = ", ".join(c.name for c in calls)
    self.recorder.harness(
        HarnessEventKind.ERROR_RECOVERED,
        message=f"tool call{'s' if len(calls) > 1 else ''} read from the model's text: "
        f"{names}"
        + (f" (repaired: {', '.join(repairs)})" if repairs else "")
        + (
            f"; the reply was cut off by the output cap, so the {skipped} call"
            f"{'s' if skipped > 1 else ''} after the first did not run"
            if skipped
            else ""
        ),
        error_category=CALL_IN_TEXT,
    )
    pairs: list[tuple[StreamingToolCall, ToolCall]] = []
    task = task_of(self) if blocks else ""
    self.watch.text_calls += len(calls)
    for i, c in enumerate(calls):
        call_id = f"{TEXT_CALL_PREFIX}{self.turns_executed}_{i}"
        sc = self.recorder.tool_call(c.name, call_id, self.tools.item_kind(c.name))
        sc.push(c.arguments)
        pairs.append((sc, ToolCall(id=call_id, name=c.name, arguments=c.arguments)))
        if blocks and self.lead_in is not None and self.workspace is not None:
            if (whole := wholes[i]) is not None:
                self.lead_in.spliced[call_id] = whole
            _guard_block_write(self.lead_in, c, call_id, self.workspace, task)
    # A compact run's requests show the reply as written, calls included (`lead_in.as_written`)
    return (content if self.lead_in is not None else said), pairs


def _over_excerpt(lead: LeadIn, call: TextCall) -> tuple[TextCall, str | None]:
    """For a block written under a file shown only in excerpts: the call marked so, and the
    whole file with the block over the excerpt it rewrites (`loop/excerpts.py`), which is what
    runs (`tool_round`). The call's own arguments stay the block: the history sends them back
    with every request, and a 2,000-line file there made qwen0.5b's next request 13,500 tokens
    (edit-big-file, 2026-12-07: past the task's time, though the edit was right)."""
    if call.name != "write_file":
        return call, None
    args = json.loads(call.arguments)
    path, content = args.get("path"), args.get("content")
    if not isinstance(path, str) or not isinstance(content, str):
        return call, None
    whole = lead.over_excerpt(path, content)
    if whole is None:
        return call, None
    return replace(call, repairs=(*call.repairs, _SPLICED)), whole


def _guard_block_write(
    lead: LeadIn, call: TextCall, call_id: str, workspace: Path, task: str
) -> None:
    """A block that would overwrite a file the model has not seen whole, or write a file's
    line breaks as escapes, does not run."""
    if call.name != "write_file":
        return
    args = json.loads(call.arguments)
    path, content = args.get("path"), args.get("content")
    text = content if isinstance(content, str) else None
    spliced = _SPLICED in call.repairs
    why = (
        lead.unseen_write(path, workspace, text, task, over_excerpt=spliced)
        if isinstance(path, str)
        else None
    )
    if why is None and isinstance(path, str) and text is not None:
        why = lead.escaped_write(path, text)
    if why is not None:
        lead.refused[call_id] = why


def end_or_nudge(self: Runner, content: str) -> bool:
    """For a headless reply with no tool calls: True when this ended the run or nudged the
    model (the machine has been fired), False when the reply stands as the final answer."""
    if self.chat is not None:
        return False
    scan = scan_text_calls(content, set(tool_names(self)))
    if scan.only_calls:
        why = "; ".join(scan.problems) or "no tool call could be read"
        if CALL_IN_TEXT in self.nudged or self.limit_outcome() is not None:
            self.machine.responded(
                facts=self.facts(),
                ending=Outcome(OutcomeKind.MALFORMED_TOOL_CALL, detail=why),
            )
            return True
        nudge = _block_call_nudge(why) if self.lead_in else _call_nudge(why, tool_names(self))
        _nudge(self, CALL_IN_TEXT, nudge)
        return True
    # A compact run's model rewrites the files it is shown: a write that changed nothing is no
    # work done there (loop/lead_in.py).
    ran_tools = (
        self.watch.effective_calls > 0
        if self.lead_in
        else any(m.role == "tool" for m in self.history)
    )
    if self.watch.text_calls and not self.watch.well_formed_calls:
        # Every call it made was malformed (an unknown tool, invalid arguments), so nothing
        # ran, and now it ends: whatever it says, it did nothing. qwen0.5b, full harness,
        # fix-typo (2026-12-06): four exec_command calls with a made-up argument, then "}".
        # Only for a model that writes its calls as text (the small-model failure): a native
        # call to an unknown tool, then an answer, is upstream's invalid_tool scenario and
        # stays a success. A call a permission rule or hook refused is never malformed.
        return _unfinished(
            self,
            f"all {self.watch.attempted_calls} tool calls of the run were malformed (unknown "
            "tool or invalid arguments); nothing ran",
        )
    done = self.watch.succeeded_calls - (self.watch.noop_writes if self.lead_in else 0)
    task = task_of(self)
    if self.lead_in and self.limit_outcome() is None and not asks_only_a_question(task):
        spent = self.watch.check_rounds >= MAX_CHECK_ROUNDS  # before this reply
        failed = run_named_checks(self, task)  # the test command the task names
        if failed is not None:
            _nudge(self, CHECK_FAILED, failure_message(failed, nothing_done=not done))
            return True
        failed = run_named_checks(self, task, final=True) if spent and done else None
        if failed is not None:  # the rounds were spent, and the check still fails
            self.machine.responded(
                facts=self.facts(),
                ending=Outcome(OutcomeKind.VERIFICATION_FAILED, detail=_still_failing(failed)),
            )
            return True
    missing = _missing_files(self)
    if missing and MISSING_FILE not in self.nudged and self.limit_outcome() is None:
        _nudge(self, MISSING_FILE, _missing_nudge(missing))
        return True
    if not done and self.nudged & {NO_ACTION, CALL_IN_TEXT, CHECK_FAILED, MISSING_FILE, UNCHANGED}:
        # Told to act, it never did (or every call it made failed): whatever it now says
        # ("Test passed", qwen0.5b's {"summary": "No tool called. Nothing ran."}), nothing was
        # done or checked.
        return _unfinished(
            self, "after a nudge to use the tools, the run ended with no tool call that succeeded"
        )
    if ran_tools or not self.limits.nudge_unfinished or self.limit_outcome() is not None:
        return _ends_unchanged(self)
    if not _announces_action(content) and not (self.lead_in and _did_nothing(self, content)):
        return _ends_unchanged(self)
    _nudge(self, NO_ACTION, _BLOCK_NUDGE if self.lead_in else _TOOL_NUDGE)
    return True


def _ends_unchanged(self: Runner) -> bool:
    """A compact run's final answer to a task that asks for a change, with every file in the
    folder as it was when the task was given (`loop/folder_state.py`): one nudge saying so,
    then `unfinished_no_action`. qwen0.5b, rename-symbol (2026-12-07), ran only the task's own
    test commands (they pass on the untouched project), said "The tests passed, indicating that
    the function `compute_total` has been renamed correctly", and the run was a success."""
    lead = self.lead_in
    if lead is None or self.workspace is None or not lead.folder.unchanged(self.workspace):
        return False
    may_nudge = UNCHANGED not in self.nudged and self.limits.nudge_unfinished
    if may_nudge and self.limit_outcome() is None:
        _nudge(self, UNCHANGED, _UNCHANGED_NUDGE)
        return True
    return _unfinished(
        self,
        "the task asks for a change, and no file in the folder changed: whatever the answer "
        "says, the task was not done",
    )


def _unfinished(self: Runner, detail: str) -> bool:
    """End the run `unfinished_no_action`: what the model claims was not done (True: ended)."""
    self.machine.responded(
        facts=self.facts(), ending=Outcome(OutcomeKind.UNFINISHED_NO_ACTION, detail=detail)
    )
    return True


def _still_failing(failed: CheckResult) -> str:
    code = "did not finish" if failed.exit_code is None else f"exit {failed.exit_code}"
    said = "" if failed.expected is None else f", not printing {failed.expected}"
    return f"`{failed.command}`: {code}{said}, after {MAX_CHECK_ROUNDS} rounds of fixes"


def _missing_files(self: Runner) -> list[str]:
    """`LeadIn.missing` for a compact run with a workspace, else nothing."""
    if self.lead_in is None or self.workspace is None:
        return []
    return self.lead_in.missing(self.workspace)


def _missing_nudge(names: list[str]) -> str:
    listed = ", ".join(names)
    return (
        f"The task asks for {listed}, and the folder has no {listed} yet. Write "
        f"{'it' if len(names) == 1 else 'each'}: the path on a line by itself, then the whole "
        "content in a fenced code block."
    )


def _announces_action(text: str) -> bool:
    """The reply says what it is about to do ("Let me read the file:") and stops there."""
    tail = text.strip()[-400:].lower()
    return tail.endswith(":") or any(p in tail for p in _INTENT_PHRASES)


def _did_nothing(self: Runner, text: str) -> bool:
    """A compact run's answer, before anything changed, that shows it meant to act: a short
    claim of work done, code in a block with no path before it (nothing was written), the
    tools' results or the task's own words back. qwen0.5b in the public suite (vtcode eval,
    2026-12-06): protected-test answered with the fixed function in a ```python block,
    failing-test with the task's text; both runs were a success with nothing done. A task
    that only asks a question ("How do I read a file in Go?") is answered in text, code
    blocks included: never nudged."""
    task = task_of(self).strip()
    if asks_only_a_question(task):
        return False
    if _short_claim(text) or "```" in text or _echoes_tool_output(self, text):
        return True
    if _HANDS_BACK.search(text[:MAX_PROSE_CHARS]) is not None:
        return True
    return len(task[:200]) >= 20 and task[:200] in text


def _echoes_tool_output(self: Runner, text: str) -> bool:
    """The answer repeats what the tools said: `<tool_response>` tags (the chat template's own
    wrapping), or a tool result word for word. qwen0.5b, fix-import (2026-12-07): a write that
    changed nothing and a refused one, then the two results back in tags, was a success."""
    if "<tool_response>" in text:
        return True
    said = [m.content.strip() for m in self.history if m.role == "tool"]
    return any(len(r) >= 20 and r in text for r in said)


def task_of(self: Runner) -> str:
    """The task as the user wrote it: the history's first user message."""
    return next((m.content for m in self.history if m.role == "user"), "")


def _short_claim(text: str) -> bool:
    """A short reply that claims work done ("Done.", "Fixed the bug.", "updated README.md"): in
    a compact run with nothing changed yet it did nothing, whatever it says. qwen0.5b answered
    "Done." to every task of a bench pass when shown tool specs (2026-12-06): each a success.
    A short answer that claims nothing ("2 + 2 = 4.") stands."""
    s = text.strip()
    return len(s) <= MAX_PROSE_CHARS and _CLAIM.search(s) is not None


def _call_nudge(why: str, names: list[str]) -> str:
    listed = ", ".join(names[:_MAX_LISTED_TOOLS])
    return (
        f"That was not a tool call ({why}), so nothing ran. Call a tool through the tool-call "
        'interface, or write exactly {"name": "<tool>", "arguments": {...}} with one of these '
        f"tools: {listed}. When the task is done, reply with a short summary and no JSON."
    )


def _block_call_nudge(why: str) -> str:
    """The call nudge of a compact run, in the form its example taught. Asked there for
    `{"name": ..., "arguments": ...}`, qwen0.5b dropped the file it was editing and ran
    `echo 'Hello, world!'` until the loop limit (json-edit, 2 of 2 runs, 2026-12-07: its reply
    was config.json's JSON under the line "updated config.json", read as a call to a tool named
    after the file's "name" key)."""
    return f"Nothing ran: that reply was not a file block ({why}). {_BLOCK_FORM}"


def _nudge(self: Runner, kind: str, text: str) -> None:
    """One corrective user message, recorded, then the next model request (same turn)."""
    self.nudged.add(kind)
    self.recorder.harness(HarnessEventKind.CONTINUATION_STARTED, message=text, error_category=kind)
    self.append(Message(role="user", content=text))
    self.machine.followed_up(
        facts=self.facts(compaction_due=self.hooks.compaction_due(in_tool_loop=False)),
    )
