"""Files and commands a small model writes as fenced blocks: the compact harness's text form.

Qwen2.5-Coder 0.5B rarely writes a usable tool call, but it writes a file out whole in a fenced
block readily; what it cannot do is escape that file into a JSON string. The compact harness
(`runtime/harness_profile.py`) therefore teaches it this form, by an example exchange:

    answer.txt
    ```
    8443
    ```

A path alone on the line before a fence is a whole-file write; a ```sh (bash, shell, console)
fence with no path before it is a command. Measured with a probe on the local server (eight
easy public tasks, k = 3, 2026-12-06): 6-9 of 24 solved in this form against 1 of 8 with JSON
calls (docs/eval.md, "Fourth pass").

`scan_file_blocks` only reads; the runner turns what it finds into `write_file` and
`exec_command` calls, which go through the same schema check, permissions, hooks and sandbox as
any call. It is read only in runs that taught the form (a compact run): a large model's fenced
code in an answer is an illustration, not a write. A block that never closes in a reply cut off
by the output cap is not a file: writing it would truncate the file; in a reply that ended on
its own, the last block ends with the text.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Collection
from dataclasses import dataclass

from vtcode.loop.text_calls import MAX_CALLS, MAX_SCAN_CHARS, TextCall

__all__ = ["SHELL_FENCES", "escaped_breaks_added", "fence_for", "scan_file_blocks"]

_FENCE_RUNS = re.compile(r"`{3,}")


def fence_for(text: str) -> str:
    """The fence a block of `text` is shown in: three backticks, or one more than the longest
    run of them in `text` (a README with its own code block), so the block ends where the text
    does and the model writes it back the same way."""
    runs = [len(m) for m in _FENCE_RUNS.findall(text)]
    return "`" * max(3, max(runs, default=0) + 1)


SHELL_FENCES = frozenset({"sh", "bash", "shell", "console", "zsh"})
_SHELL_SUFFIXES = (".sh", ".bash", ".zsh")
# A line that opens a fence (its info string holds no backtick), and one that closes a fence of
# exactly its length; `\r`: a reply with CRLF line ends. The info starts after the blanks, so a
# long line of blanks is matched once, not once per split between `[ \t]*` and the info.
_OPENING = re.compile(r"(`{3,})[ \t]*((?:[^` \t][^`]*)?)")
_CLOSING = re.compile(r"(`{3,})[ \t\r]*")
# A file path as a model writes it: no spaces, no URL scheme, an extension or a folder.
_PATH = re.compile(r"^(?!-)(?![a-z]+://)[\w.@+-]*(?:/[\w.@+-]+)*$")
# The same with single spaces inside a name (only ever read from a quoted name, `_quoted`).
_SEGMENT = r"[\w.@+-]+(?: [\w.@+-]+)*"
_SPACED_PATH = re.compile(rf"^(?!-)(?![a-z]+://){_SEGMENT}(?:/{_SEGMENT})*$")
_EXTENSION = re.compile(r"\.\w+$")
_DECORATION = "*#`'\" \t>"
_MAX_PATH = 255


@dataclass(frozen=True, slots=True)
class _Block:
    before: str  # the line before the opening fence
    info: str
    body: str
    repairs: tuple[str, ...] = ()


_DOUBLED = "a doubled opening fence read as one"


def scan_file_blocks(
    text: str, catalog: Collection[str], *, ended: bool = False, known: Collection[str] = ()
) -> tuple[TextCall, ...]:
    """The writes and commands written as blocks in `text`, in order (at most `MAX_CALLS`),
    for the tools of `catalog` (`write_file`, `exec_command`); an empty tuple when none.

    `ended`: the reply ended on its own (not at the output cap), so a last block left open
    ends with the text (qwen0.5b often stops before the closing fence).

    `known`: the files a name with spaces may be (those the lead-in showed the model, quoted):
    quoted and spaced, "`python3 app.py`" before its output's block is a command, not a file."""
    head = text[:MAX_SCAN_CHARS]
    calls: list[TextCall] = []
    for block in _blocks(head, ended=ended and len(head) == len(text)):
        if len(calls) >= MAX_CALLS:
            break
        info = block.info.strip()
        path = _path_of(block.before, info, known) or _path_of(info, info, known)
        if path is not None and "write_file" in catalog:
            args_json = json.dumps({"path": path, "content": block.body}, ensure_ascii=False)
            repairs = ("file block read as write_file", *block.repairs)
            calls.append(TextCall("write_file", args_json, repairs))
        elif path is None and info.lower() in SHELL_FENCES and "exec_command" in catalog:
            command = "\n".join(_unprompted(line) for line in block.body.splitlines()).strip()
            if command:
                args_json = json.dumps({"command": command}, ensure_ascii=False)
                repairs = ("shell block read as exec_command", *block.repairs)
                calls.append(TextCall("exec_command", args_json, repairs))
    return tuple(calls)


def _blocks(text: str, *, ended: bool) -> list[_Block]:
    """The fenced blocks of `text`, in one pass over its lines: a fence closes at the next line
    of exactly its backticks (an opening no line closes is not a block, and the lines after it
    are read on), and, when `ended`, a last opening with no fence line after it runs to the end.

    Linear in the text: a regex that looked for each opening's closing fence scanned to the end
    once per unclosed opening, 86 s for 256 KiB of "```a" lines."""
    lines = text.split("\n")
    closers: dict[int, list[int]] = {}  # fence length -> indexes of the lines closing one
    last_fence = -1  # the last line starting with a fence
    for j, line in enumerate(lines):
        if line.startswith("```"):
            last_fence = j
            if m := _CLOSING.fullmatch(line):
                closers.setdefault(len(m.group(1)), []).append(j)
    out: list[_Block] = []
    i = 0
    while i < len(lines) - 1:  # an opening line ends with its newline
        m = _OPENING.fullmatch(lines[i]) if lines[i].startswith("```") else None
        if m is None:
            i += 1
            continue
        before = lines[i - 1] if i else ""
        same = closers.get(len(m.group(1)), [])
        k = bisect.bisect_right(same, i)
        start = i
        repairs: tuple[str, ...] = ()
        doubled = _doubled(lines, i, len(m.group(1)), same, k, last_fence)
        if doubled == "cut" and not ended:
            break  # cut off inside a doubled block: no file from here on is whole
        if doubled is not None:
            start, repairs, k = i + 1, (_DOUBLED,), k + 1
        if k < len(same):
            j = same[k]
            body = "".join(f"{b}\n" for b in lines[start + 1 : j])
            out.append(_Block(before, m.group(2), body, repairs))
            i = j + 1
            continue
        if ended and start == last_fence:
            body = "\n".join(lines[start + 1 :])
            body = body if body.endswith("\n") or not body else body + "\n"
            out.append(_Block(before, m.group(2), body, repairs))
            break  # no fence line follows: nothing after it is a block
        i += 1
    return out


def _doubled(
    lines: list[str], i: int, width: int, same: list[int], k: int, last_fence: int
) -> str | None:
    """Whether the opening at line `i` (a fence of `width` backticks) is written twice
    ("README.md", a fence, a fence, the file, a fence): None when not; "closed" when a fence
    closes the file; "cut" when no fence line follows (the file runs to the reply's end, or
    was cut off there). Read as one fence, the block was empty and the file went into the
    text after it, and the fences after it paired up wrongly: qwen0.5b in 14 of 888 eval
    replies (2026-12-07); fix-typo wrote README.md empty that way.

    Only when the line after the second fence is text and no fence line of the width comes
    before the fence that would close the block; and not when that fence may open the next
    block instead (a fence closes after it, and the line before it is a path or ends with a
    colon: "a.txt", a fence, a fence, "b.txt", a fence, "2", a fence is an empty a.txt and a
    b.txt). In a reply that ended on its own, an empty block followed by one line of prose and
    nothing else reads as that line (it cannot be told from a doubled fence whose model
    stopped before the closing one)."""
    fence = "`" * width
    if k >= len(same) or same[k] != i + 1 or i + 2 >= len(lines):
        return None
    if not lines[i + 2].strip() or lines[i + 2].startswith(fence):
        return None
    if k + 1 >= len(same):
        return "cut" if last_fence == i + 1 else None
    end = same[k + 1]
    if any(line.startswith(fence) for line in lines[i + 2 : end]):
        return None
    intro = lines[end - 1]
    if k + 2 < len(same) and (_path_of(intro, "") is not None or intro.rstrip().endswith(":")):
        return None
    return "closed"


def _path_of(line: str, info: str, known: Collection[str] = ()) -> str | None:
    """The path a line names, when it names one and nothing else: `greet.py`, `**greet.py**`,
    `### src/app.py`, `File: greet.py`, `Here is sum_to.py:`, and after a sentence's last ": "
    a file the run knows of (`known`). A line of prose that does not end with a path and a
    colon names none, nor does a language name (`python`: no dot, no slash).
    Before a shell block (`info`), a sentence names a file only when it is a shell script: "Run
    `python main.py`:" then ```sh is the command, and read as a write it replaced main.py."""
    quoted = _quoted(line)
    if quoted is not None:  # `my notes.txt`: the whole line one quoted name, spaces and all
        shell_ok = info.lower() not in SHELL_FENCES or quoted.endswith(_SHELL_SUFFIXES)
        return quoted if quoted in known and shell_ok else None
    s = line.strip().strip(_DECORATION)
    if not s or len(s) > 200:
        return None
    if " " in s:
        if not s.endswith(":"):
            # "...in a fenced code block: hello.txt" (qwen0.5b, echoing a nudge, 2026-12-07):
            # a name after the line's last ": ", when it is a file the run knows of.
            tail = s.rsplit(": ", 1)[-1].strip(_DECORATION) if ": " in s else ""
            if info.lower() in SHELL_FENCES and not tail.endswith(_SHELL_SUFFIXES):
                return None
            return tail if tail in known and " " not in tail else None
        s = s[:-1].rsplit(" ", 1)[-1].strip(_DECORATION)
        if info.lower() in SHELL_FENCES and not s.endswith(_SHELL_SUFFIXES):
            return None
    s = s.rstrip(":").strip(_DECORATION)
    if s.startswith("./"):
        s = s[2:]
    if not s or len(s) > _MAX_PATH or not _PATH.match(s) or s.endswith("/"):
        return None
    if "." not in s.lstrip(".") and "/" not in s:
        return None  # a language name or a word, not a file
    return s


def _quoted(line: str) -> str | None:
    """The name in a line that is only one name in backticks or quotes, when it holds a space
    (the compact lead-in shows such names quoted); None otherwise. Unquoted, "my notes.txt"
    cannot be told from a sentence ending in a file name."""
    raw = line.strip().lstrip("*#> \t").rstrip("*: \t")
    if len(raw) < 3 or raw[0] not in "`'\"" or raw[-1] != raw[0] or raw[0] in raw[1:-1]:
        return None
    name = raw[1:-1]
    if " " not in name or name != name.strip() or name.startswith("./"):
        return None
    if len(name) > _MAX_PATH or not _SPACED_PATH.match(name) or name.endswith("/"):
        return None
    return name if _EXTENSION.search(name.rsplit("/", 1)[-1]) else None


def _unprompted(line: str) -> str:
    """A command line without the `$ ` prompt a model copies from a terminal transcript."""
    return line[2:] if line.startswith("$ ") else line


# A line break written as the two characters backslash and n, where the next line's start
# follows: another escaped break, an indent, or a statement keyword. Python's own files hold a
# few (strings such as "a\n\nb"); a whole file written as one JSON string holds one per line.
_ESCAPED_BREAK = re.compile(
    r"\\n(?=\\n|\\t| {4}|(?:def|class|import|from|return|if|for|while|print)\b)"
)
_ESCAPES_ADDED = 3


def escaped_breaks_added(old: str, new: str) -> bool:
    """`new`, a block's text for a file that holds `old`, has its line breaks written as `\\n`
    escapes that `old` does not have: the model wrote the file as a JSON string's body.

    qwen0.5b did so in 18 of 593 writes of this round's eval logs (failing-test, protected-test,
    plan-extract-module), and each such write fed the next: the lead-in shows the file as it
    now is, the model copies it and escapes it once more (price.py grew 309 -> 605 bytes of
    backslashes in four turns until the task's time ran out). Counted against the file it
    replaces, since files hold such escapes in their strings (100 of the 7,054 Python files
    of this project and its virtualenv hold 3 or more), and only when the text also has fewer
    real line breaks than the file: code that gains escaped strings (a test writing a fixture,
    a help text) gains lines too. A new file is never refused for it."""
    added = len(_ESCAPED_BREAK.findall(new)) - len(_ESCAPED_BREAK.findall(old))
    return added >= _ESCAPES_ADDED and new.count("\n") < old.count("\n")
