"""The `apply_patch` format (Codex's "*** Begin Patch" envelope), parsed and applied in memory.

    *** Begin Patch
    *** Add File: path/new.txt
    +every line of the new file, each prefixed with '+'
    *** Delete File: path/old.txt
    *** Update File: path/file.py
    *** Move to: path/renamed.py          (optional)
    @@ def some_context():                (optional anchor; the hunk is searched after it)
     context line
    -removed line
    +added line
    *** End of File                       (optional: the hunk must end at the end of file)
    *** End Patch

`plan_patch` computes the new content of every file without touching disk and raises
`PatchError` (with the patch line number) if any hunk fails to match, so `apply_patch` can be
all-or-nothing. Hunks match exactly first, then ignoring trailing whitespace, then ignoring
surrounding whitespace (as Codex does), always searching forward from the previous hunk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from vtcode.tools.base import ToolError

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARK = "*** End of File"


class PatchError(ToolError):
    """The patch is malformed or does not apply; nothing was changed."""


@dataclass(slots=True)
class Hunk:
    line: int  # 1-based line of the hunk in the patch, for messages
    anchor: str | None
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    at_eof: bool = False


@dataclass(slots=True)
class FileOp:
    kind: Literal["add", "delete", "update"]
    path: str
    line: int
    content: str = ""  # for add
    move_to: str | None = None
    hunks: list[Hunk] = field(default_factory=list)


def parse_patch(text: str) -> list[FileOp]:
    """Parse the envelope into file operations (no file system access)."""
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and lines[-1].strip() == "":
        lines.pop()
    while lines and lines[0].strip() == "":
        lines.pop(0)
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError(f"patch line 1: the patch must start with {BEGIN!r}")
    if lines[-1].strip() != END:
        raise PatchError(f"patch line {len(lines)}: the patch must end with {END!r}")
    ops: list[FileOp] = []
    i = 1
    last = len(lines) - 1
    while i < last:
        raw = lines[i]
        lineno = i + 1
        if raw.startswith(ADD):
            op = FileOp("add", _path(raw[len(ADD) :], lineno), lineno)
            i += 1
            body: list[str] = []
            while i < last and not lines[i].startswith("*** "):
                if not lines[i].startswith("+"):
                    raise PatchError(
                        f"patch line {i + 1}: lines of an added file must start with '+'"
                    )
                body.append(lines[i][1:])
                i += 1
            op.content = "\n".join(body) + ("\n" if body else "")
            ops.append(op)
        elif raw.startswith(DELETE):
            ops.append(FileOp("delete", _path(raw[len(DELETE) :], lineno), lineno))
            i += 1
        elif raw.startswith(UPDATE):
            op = FileOp("update", _path(raw[len(UPDATE) :], lineno), lineno)
            i += 1
            if i < last and lines[i].startswith(MOVE):
                op.move_to = _path(lines[i][len(MOVE) :], i + 1)
                i += 1
            i = _parse_hunks(lines, i, last, op)
            if not op.hunks and op.move_to is None:
                raise PatchError(f"patch line {lineno}: update of {op.path!r} has no hunks")
            ops.append(op)
        elif raw.strip() == "":
            i += 1
        else:
            raise PatchError(
                f"patch line {lineno}: expected '*** Add File:', '*** Delete File:' or "
                f"'*** Update File:', got {raw[:60]!r}"
            )
    if not ops:
        raise PatchError("the patch contains no file operations")
    seen: set[str] = set()
    for op in ops:
        for p in (op.path, op.move_to):
            if p is None:
                continue
            if p in seen:
                raise PatchError(f"patch line {op.line}: {p!r} appears in more than one operation")
            seen.add(p)
    return ops


def _path(raw: str, lineno: int) -> str:
    path = raw.strip()
    if not path:
        raise PatchError(f"patch line {lineno}: missing file path")
    return path


def _parse_hunks(lines: list[str], i: int, last: int, op: FileOp) -> int:
    hunk: Hunk | None = None
    while i < last:
        raw = lines[i]
        if raw.startswith(EOF_MARK):
            if hunk is None:
                raise PatchError(f"patch line {i + 1}: {EOF_MARK!r} outside a hunk")
            hunk.at_eof = True
            i += 1
            continue
        if raw.startswith("*** "):
            break
        if raw.startswith("@@"):
            anchor = raw[2:].strip()
            hunk = Hunk(i + 1, anchor or None)
            op.hunks.append(hunk)
            i += 1
            continue
        if hunk is None:  # Codex allows the first hunk without an @@ header
            hunk = Hunk(i + 1, None)
            op.hunks.append(hunk)
        tag, body = (raw[:1], raw[1:]) if raw else (" ", "")
        if tag == " ":
            hunk.old.append(body)
            hunk.new.append(body)
        elif tag == "-":
            hunk.old.append(body)
        elif tag == "+":
            hunk.new.append(body)
        else:
            raise PatchError(
                f"patch line {i + 1}: hunk lines must start with ' ', '-' or '+', got {raw[:60]!r}"
            )
        i += 1
    for h in op.hunks:
        if not h.old and not h.new:
            raise PatchError(f"patch line {h.line}: empty hunk in {op.path!r}")
    return i


def apply_hunks(original: str, op: FileOp) -> str:
    """The file's new text after every hunk of `op`, or `PatchError` naming the failing hunk."""
    had_newline = original.endswith("\n") or original == ""
    lines = original.split("\n") if original else []
    if original.endswith("\n"):
        lines.pop()
    cursor = 0
    for h in op.hunks:
        if h.anchor is not None:
            found = _seek(lines, [h.anchor], cursor, eof=False)
            if found is None:
                raise PatchError(
                    f"patch line {h.line}: context {h.anchor!r} not found in {op.path!r}"
                )
            cursor = found + 1
        if not h.old:  # pure insertion: at the anchor, or at the end of the file
            at = len(lines) if h.at_eof or h.anchor is None else cursor
            lines[at:at] = h.new
            cursor = at + len(h.new)
            continue
        pos = _seek(lines, h.old, cursor, eof=h.at_eof)
        if pos is None:
            preview = "\\n".join(h.old[:3])
            raise PatchError(
                f"patch line {h.line}: hunk does not match {op.path!r} "
                f"(expected lines starting {preview!r})"
            )
        lines[pos : pos + len(h.old)] = h.new
        cursor = pos + len(h.new)
    text = "\n".join(lines)
    return text + "\n" if lines and had_newline else text


def _seek(lines: list[str], pattern: list[str], start: int, *, eof: bool) -> int | None:
    n = len(pattern)
    if n > len(lines):
        return None
    starts: range | list[int]
    starts = [len(lines) - n] if eof else range(start, len(lines) - n + 1)
    for norm in (lambda s: s, str.rstrip, str.strip):
        want = [norm(p) for p in pattern]
        for i in starts:
            if i < 0:
                continue
            if all(norm(lines[i + k]) == want[k] for k in range(n)):
                return i
    return None


def touched_paths(text: str) -> list[str]:
    """Every path a patch names (for permission checks); [] if it does not parse."""
    try:
        ops = parse_patch(text)
    except PatchError:
        return []
    out: list[str] = []
    for op in ops:
        out.append(op.path)
        if op.move_to:
            out.append(op.move_to)
    return out
