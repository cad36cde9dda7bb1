"""What a compact run's requests show a small model between the system prompt and the task.

A probe on the local server (Qwen2.5-Coder 0.5B, eight easy public tasks, k = 3, 2026-12-06;
docs/eval.md "Fourth pass") measured where the pieces must sit for a model that imitates:

- one example exchange as real messages (task, the answer as file blocks, the result, a last
  answer):
  6-9 of 24 solved; the same example written inside the system prompt: 3 of 24; no example: 1;
- the workspace's files in the task's own message, in the same block form the model is to
  write: 6-9 of 24; the same files in the system prompt: 3 of 24.

And two request settings, measured by replaying one recorded compact request (fix-off-by-one)
eight times each: with the tool specs sent, llama.cpp's chat template puts its own tool-call
instructions in the system prompt and the model answered "Done." (nothing written) in 4-8 of
8; without them, 3-5 of 8 were the file; without them and at temperature 0.2, 8 of 8. So a
compact request sends no tool specs (calls written as JSON text still run, against the
catalog) and asks for `TEMPERATURE`.

The example used to end with the answer "Done.", and qwen0.5b answered "Done." to tasks it had
not touched (every plan task, recover-failing-command and git-find-commit of the public suite).
Replaying the first requests of five such tasks four times each (temperature 0.2, seeds fixed,
2026-12-07; docs/eval.md "Eighth pass"), the replies that wrote or ran anything: 4 of 20 with
"Done.", 15 of 20 with "Both files are written.", 14 of 20 with the result and answer left
out, 10 of 20 with no example. Resampling at temperature 1.0 instead gave 0 of 12: the
example, not the sampling, made the answer.

So the lead-in is applied to each request, not to the history: the session records the task as
the user wrote it, a resumed run shows the files as they are then, and compaction never sees the
example. The example's files (`greeting.txt`, `count.txt`) are not the workspace's; a small model
that copies them writes a stray file, which is why the example is short.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from vtcode.loop.excerpts import Excerpt, render, splice
from vtcode.loop.file_blocks import escaped_breaks_added
from vtcode.loop.folder_state import FolderWatch
from vtcode.loop.task_text import forbidden_paths, is_forbidden
from vtcode.messages import Message

__all__ = [
    "EXAMPLE_EXCHANGE",
    "TEMPERATURE",
    "TEXT_CALL_PREFIX",
    "FirstDraws",
    "LeadIn",
    "as_written",
]

TEMPERATURE = 0.2
TEXT_CALL_PREFIX = "call_text_"
"""The id prefix of a call read from the model's text (`text_turn.recover_calls`)."""

EXAMPLE_EXCHANGE = (
    Message(
        role="user",
        content="The folder holds these files:\n\ngreeting.txt\n```\nHelo, world\n```\n\n"
        "Task: greeting.txt misspells Hello. Fix it, and write the number of words in it "
        "into count.txt.",
    ),
    Message(
        role="assistant", content="greeting.txt\n```\nHello, world\n```\n\ncount.txt\n```\n2\n```"
    ),
    Message(role="user", content="wrote greeting.txt\nwrote count.txt"),
    # Not "Done.": the last thing the model read before the task, it was copied as the answer
    # to the task (see the module doc, 2026-12-07).
    Message(role="assistant", content="Both files are written."),
)
# The files the harness's own examples write (this exchange, and the system prompt's
# hello.txt in loop/prompts.py): written word for word into a task's folder whose task never
# names them, they are a copy.
_EXAMPLE_FILES = {
    "greeting.txt": ("Helo, world\n", "Hello, world\n"),
    "count.txt": ("2\n",),
    "hello.txt": ("Hello\n",),
}


@dataclass(slots=True)
class FirstDraws:
    """How often a compact run's first reply may be drawn (`loop/first_draws.py`)."""

    allowed: int = 1  # `agent.harness.first_reply_draws`
    armed: bool = False  # a fresh task's first request is next, and `allowed` is above 1


@dataclass(frozen=True, slots=True)
class LeadIn:
    """The example exchange and the workspace's files (block form) of a compact run, and what
    the run's file blocks may overwrite."""

    files: str
    examples: tuple[Message, ...] = EXAMPLE_EXCHANGE
    temperature: float = TEMPERATURE
    shown: frozenset[str] = frozenset()  # the files shown whole in `files`
    written: set[str] = field(default_factory=set)  # files the run's blocks wrote
    refused: dict[str, str] = field(default_factory=dict)  # call id -> why it does not run
    observed: list[str] = field(default_factory=list)  # outputs of the task's commands (shown)
    failed_first: list[str] = field(default_factory=list)  # those that failed: checked at the end
    expected: list[str] = field(default_factory=list)  # new files the task asks for
    unseen: tuple[str, ...] = ()  # files too big to show whole
    read: Callable[[str], str | None] | None = None  # a whole file, through read_file's checks
    excerpts: list[Excerpt] = field(default_factory=list)  # their lines the task is about
    spliced: dict[str, str] = field(default_factory=dict)  # call id -> the whole file it writes
    folder: FolderWatch = field(default_factory=FolderWatch)  # the files when the task was given
    draws: FirstDraws = field(default_factory=FirstDraws)  # `loop/first_draws.py`

    def over_excerpt(self, path: str, content: str) -> str | None:
        """The whole new text of a file shown only in excerpts, with `content` (a block)
        written over the excerpt it rewrites (`loop/excerpts.py`); None when it fits none."""
        rel = os.path.normpath(path)
        if self.read is None or rel in self.shown or rel in self.written:
            return None
        if not any(e.path == rel for e in self.excerpts):
            return None
        current = self.read(rel)
        new = None if current is None else splice(self.excerpts, rel, current, content)
        if new is None:
            return None
        # The file now holds the block's lines where the excerpt was: a later block is read
        # against them.
        lines = new.split("\n")
        for i, e in enumerate(self.excerpts):
            if e.path == rel:
                self.excerpts[i] = Excerpt(
                    rel, e.start, tuple(lines[e.start : e.start + len(e.lines)]), e.total
                )
        return new

    def unseen_write(
        self,
        path: str,
        workspace: Path,
        content: str | None = None,
        task: str = "",
        *,
        over_excerpt: bool = False,
    ) -> str | None:
        """`refusal`, and a new file it lets the block write is the run's own from then on."""
        why = self.refusal(path, workspace, content, task, over_excerpt=over_excerpt)
        rel = os.path.normpath(path)
        if why is None and not os.path.lexists(workspace / rel):
            self.written.add(rel)
        return why

    def refusal(
        self,
        path: str,
        workspace: Path,
        content: str | None = None,
        task: str = "",
        *,
        over_excerpt: bool = False,
    ) -> str | None:
        """Why a block may not write `path` (None: it may): a file the task says not to
        change, an existing file the model was never shown whole nor wrote itself, or the
        example's own file. Changes nothing (`loop/first_draws.py` asks it of a reply that
        has not run).

        A whole-file write of an unseen file replaces content the model has not seen:
        qwen0.5b, edit-big-file (2026-12-06), wrote a 40-line settings.py over the
        2,000-line one it was told only the name of. And it copies the example: greeting.txt
        and count.txt written word for word into fix-off-by-one's folder, a "success". A task
        that names the file (`task`, the user's words) may write it with any content, unless
        it says not to change it ("Do not change test_sum.py"): qwen0.5b, given the failing
        test's output, rewrote the test file it was told to leave alone (2026-12-06)."""
        rel = os.path.normpath(path)
        if is_forbidden(rel, forbidden_paths(task, workspace)):
            return (
                f"not written: the task says not to change {path}. Change only the files the "
                "task asks you to change." + self._still_missing(workspace)
            )
        if rel in self.shown or rel in self.written or over_excerpt:
            return None
        try:
            st = (workspace / rel).lstat()
        except OSError:  # nothing there (or unreachable: the tool says why)
            if content is not None and _example_copy(rel, content, workspace, task):
                return (
                    f"not written: {path} with that content is the example's file, not part "
                    "of this task. Write the files this task needs."
                )
            return None
        if stat.S_ISDIR(st.st_mode):
            return None  # the tool refuses a folder, and says so
        size = st.st_size
        return (
            f"not written: {path} exists ({size} bytes) and you have not seen all of it, so "
            "writing it whole would replace what you have not seen. Change it with a command "
            f"in a ```sh block (for example: sed -i 's/OLD/NEW/' {path}), or show it first "
            f"with cat {path}."
            + (
                " Or write back the lines of it you were shown, changed, as many as were shown."
                if any(e.path == rel for e in self.excerpts)
                else ""
            )
        )

    def missing(self, workspace: Path) -> list[str]:
        """The new files the task asks for (noted at the start) that are still not there."""
        return [n for n in self.expected if not (workspace / n).exists()]

    def _still_missing(self, workspace: Path) -> str:
        """What the task asks for that is not there yet, said with a refusal: qwen0.5b,
        answer-from-config (evals of 2026-12-07, 3 of 3 runs), wrote config.ini back as shown,
        was refused, and wrote it again (or echoed the refusal) until the run ended; the
        answer.txt it was asked for was named nowhere after the task."""
        missing = self.missing(workspace)
        if not missing:
            return ""
        listed = ", ".join(missing)
        return (
            f" The task asks for {listed}, which {'is' if len(missing) == 1 else 'are'} not "
            f"written yet: write {'it' if len(missing) == 1 else 'each'} as its path on a line "
            "by itself, then its content in a fenced code block."
        )

    def escaped_write(self, path: str, content: str) -> str | None:
        """Why a block may not write `content` over `path` (None: it may): its line breaks are
        `\\n` escapes the file does not have (`file_blocks.escaped_breaks_added`). Refused,
        the file stays as it was, and so does what the next request shows of it."""
        rel = os.path.normpath(path)
        current = None if self.read is None else self.read(rel)
        if current is None or not escaped_breaks_added(current, content):
            return None
        return (
            f"not written: {path} has real line breaks, and this text writes them as \\n "
            'escapes (and quotes as \\"), as inside a JSON string. Write the file as it is on '
            "disk: each line on its own line, quotes without backslashes."
        )

    def shape(self, history: Sequence[Message]) -> list[Message]:
        """`history` as the request sends it: the example first, and the files before the
        first user message's text (the task). The system messages a compaction puts at the
        history's start (summary, envelope) stay before the example: a system message after an
        assistant turn is refused by some chat templates (Mistral's), and is in no other
        request."""
        lead = 0
        while lead < len(history) and history[lead].role == "system":
            lead += 1
        out = [*history[:lead], *self.examples]
        shown = False
        for m in as_written(history[lead:]):
            if not shown and m.role == "user":
                shown = True
                files = self.files or "(no files)"
                parts = [f"The folder holds these files:\n\n{files}", render(self.excerpts)]
                parts += [f"Task: {m.content}", *self.observed]
                m = m.with_content("\n\n".join(p for p in parts if p))
            out.append(m)
        return out


def _example_copy(rel: str, content: str, workspace: Path, task: str) -> bool:
    """`content` written to `rel` copies the harness's own example: its file, word for word or
    empty (qwen0.5b, edit-big-file, 2026-12-07, wrote an empty greeting.txt, then "Done."),
    into a folder without it, for a task that never names it."""
    examples = _EXAMPLE_FILES.get(rel, ())
    copied = bool(examples) and (content in examples or not content.strip())
    return copied and rel not in task and not os.path.lexists(workspace / rel)


def as_written(history: Sequence[Message]) -> list[Message]:
    """The turns whose calls were read from the model's text, as the example shows a turn: the
    reply as the model wrote it, then its results in one plain user message.

    Sent as calls and tool results, llama.cpp's chat template (Qwen2.5's) renders the reply's
    file blocks followed by `<tool_call>{"name": "write_file", ...}</tool_call>` the model
    never wrote, and each result in `<tool_response>` tags: qwen0.5b copied both (eval of
    2026-12-07: add-requirement's second reply was the result, the file again and a JSON
    write_file call; answer-from-config's and edit-big-file's were the result in tags). A
    reply whose calls were JSON text keeps its prose and gets the calls back as that JSON."""
    out: list[Message] = []
    from_text: set[str] = set()
    results: list[str] = []
    for m in history:
        if m.role == "tool" and m.tool_call_id in from_text:
            results.append(m.content)
            continue
        if results:
            out.append(Message(role="user", content="\n".join(results)))
            results = []
        if (
            m.role == "assistant"
            and m.tool_calls
            and all(c.id.startswith(TEXT_CALL_PREFIX) for c in m.tool_calls)
        ):
            from_text.update(c.id for c in m.tool_calls)
            said = m.content
            if not said.strip():
                said = "\n".join(
                    f'{{"name": {json.dumps(c.name)}, "arguments": {c.arguments}}}'
                    for c in m.tool_calls
                )
            m = replace(m, content=said, tool_calls=())
        out.append(m)
    if results:
        out.append(Message(role="user", content="\n".join(results)))
    return out
