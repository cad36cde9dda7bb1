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

import json
import re
from collections.abc import Collection

from vtcode.loop.text_calls import MAX_CALLS, MAX_SCAN_CHARS, TextCall

__all__ = ["SHELL_FENCES", "scan_file_blocks"]

SHELL_FENCES = frozenset({"sh", "bash", "shell", "console", "zsh"})
# A fence: its info string, its body, and a closing fence alone on a line.
_BLOCK = re.compile(
    r"^(?P<fence>`{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
# A fence opened and never closed, to the end of the text.
_OPEN_TAIL = re.compile(
    r"^(?P<fence>`{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>(?:(?!^`{3}).)*)\Z", re.M | re.S
)
# A file path as a model writes it: no spaces, no URL scheme, an extension or a folder.
_PATH = re.compile(r"^(?!-)(?![a-z]+://)[\w.@+-]*(?:/[\w.@+-]+)*$")
_DECORATION = "*#`'\" \t>"
_MAX_PATH = 255


def scan_file_blocks(
    text: str, catalog: Collection[str], *, ended: bool = False
) -> tuple[TextCall, ...]:
    """The writes and commands written as blocks in `text`, in order (at most `MAX_CALLS`),
    for the tools of `catalog` (`write_file`, `exec_command`); an empty tuple when none.

    `ended`: the reply ended on its own (not at the output cap), so a last block left open
    ends with the text (qwen0.5b often stops before the closing fence)."""
    head = text[:MAX_SCAN_CHARS]
    found = list(_BLOCK.finditer(head))
    rest = head[found[-1].end() :] if found else head
    last = _OPEN_TAIL.search(rest) if ended and len(head) == len(text) else None
    calls: list[TextCall] = []
    for m in [*found, *([last] if last else [])]:
        if len(calls) >= MAX_CALLS:
            break
        info = m.group("info").strip()
        body = m.group("body")
        if m is last and body and not body.endswith("\n"):
            body += "\n"
        where = head if m is not last else rest
        path = _path_of(_line_before(where, m.start())) or _path_of(info)
        if path is not None and "write_file" in catalog:
            args_json = json.dumps({"path": path, "content": body}, ensure_ascii=False)
            calls.append(TextCall("write_file", args_json, ("file block read as write_file",)))
        elif path is None and info.lower() in SHELL_FENCES and "exec_command" in catalog:
            command = "\n".join(_unprompted(line) for line in body.splitlines()).strip()
            if command:
                args_json = json.dumps({"command": command}, ensure_ascii=False)
                calls.append(
                    TextCall("exec_command", args_json, ("shell block read as exec_command",))
                )
    return tuple(calls)


def _line_before(text: str, start: int) -> str:
    """The line just before the fence opening at `start` (empty when the fence opens the text)."""
    if start == 0:
        return ""
    end = start - 1  # the newline before the fence
    return text[text.rfind("\n", 0, end) + 1 : end]


def _path_of(line: str) -> str | None:
    """The path a line names, when it names one and nothing else: `greet.py`, `**greet.py**`,
    `### src/app.py`, `File: greet.py`, `Here is sum_to.py:`. A line of prose that does not end
    with a path and a colon names none, nor does a language name (`python`: no dot, no slash)."""
    s = line.strip().strip(_DECORATION)
    if not s or len(s) > 200:
        return None
    if " " in s:
        if not s.endswith(":"):
            return None
        s = s[:-1].rsplit(" ", 1)[-1].strip(_DECORATION)
    s = s.rstrip(":").strip(_DECORATION)
    if s.startswith("./"):
        s = s[2:]
    if not s or len(s) > _MAX_PATH or not _PATH.match(s) or s.endswith("/"):
        return None
    if "." not in s.lstrip(".") and "/" not in s:
        return None  # a language name or a word, not a file
    return s


def _unprompted(line: str) -> str:
    """A command line without the `$ ` prompt a model copies from a terminal transcript."""
    return line[2:] if line.startswith("$ ") else line
