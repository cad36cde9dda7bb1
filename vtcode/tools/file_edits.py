"""The mutating file tools: write_file and apply_patch.

Each path is located once beneath the workspace fd (`vtcode.tools.beneath`), checked there, and
every later access (reading the old content, creating folders, the atomic replace, the delete,
the rollback) goes through that folder fd and name: nothing is re-resolved from a path string
between the check and the write. Writes never touch `.vtcode/` or any `.git/`, refuse to replace
a FIFO, socket or device, keep an existing file's permission bits, and are atomic (temp file,
fsync, renameat, fsync folder). `apply_patch` checks every hunk of every file before it writes
anything and restores what it already wrote if a later write fails.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from typing import Any

from vtcode.events.enums import FileChangeKind
from vtcode.store.artifacts import DIFF_INPUT_LIMIT, record_diff
from vtcode.tools.base import FileChange, ToolContext, ToolError, ToolResult
from vtcode.tools.beneath import (
    Beneath,
    EntryChanged,
    Located,
    not_regular,
    open_entry,
    open_workspace,
    os_errors,
)
from vtcode.tools.fdops import existing_mode, link_at, read_link, replace_at, unlink_at
from vtcode.tools.files import BINARY_SNIFF, tool_spec
from vtcode.tools.patch import FileOp, apply_hunks, parse_patch

WRITE_MAX_BYTES = 16 * 1024 * 1024


def _read_text(loc: Located, raw: str, limit: int = WRITE_MAX_BYTES) -> str:
    """The UTF-8 text of the regular file at `loc` (refused if binary, larger than `limit`)."""
    if loc.name is None:
        raise ToolError(f"{raw!r} is a directory")
    try:
        fd, is_dir = open_entry(loc.dir_fd, loc.name, raw, loc.rel)
    except EntryChanged as exc:
        raise ToolError(f"{raw!r} changed while it was read; try again") from exc
    with os.fdopen(fd, "rb") as f:
        if is_dir:
            raise ToolError(f"{raw!r} is a directory")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ToolError(f"{raw!r} is larger than {limit} bytes")
    if b"\x00" in data[:BINARY_SNIFF]:
        raise ToolError(f"{raw!r} looks like a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{raw!r} is not UTF-8 text (byte {exc.start})") from exc


class WriteFileTool:
    """Writes a whole file atomically, creating parent folders."""

    spec = tool_spec(
        "write_file",
        "Create or overwrite a text file in the workspace with `content` (parent folders are "
        "created). vtcode.toml, .vtcode/ and .git/ cannot be written.",
        {"path": {"type": "string", "minLength": 1}, "content": {"type": "string"}},
        ["path", "content"],
    )
    read_only = False

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        with os_errors(repr(arguments["path"])):
            return self._run(arguments, ctx)

    def _run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = arguments["path"]
        content = arguments["content"].encode("utf-8")
        if len(content) > WRITE_MAX_BYTES:
            raise ToolError(f"content is larger than {WRITE_MAX_BYTES} bytes")
        with open_workspace(ctx.workspace) as ws, ws.locate(raw, write=True, create=True) as loc:
            if loc.name is None:
                raise ToolError(f"{raw!r} is a folder")
            mode = existing_mode(loc)
            old, unread = _previous(loc, raw, mode is not None)
            if old == content:  # read whole (a longer file is never read): nothing would change
                return ToolResult(
                    output=f"unchanged: {loc.rel} already holds exactly this content; nothing "
                    "was written",
                    data={"path": loc.rel, "bytes": len(content), "kind": "unchanged"},
                )
            try:
                replace_at(loc, content, mode)
            except OSError as exc:
                raise ToolError(f"cannot write {raw!r}: {exc.strerror or exc}") from exc
            rel = loc.rel
        existed = mode is not None
        kind = FileChangeKind.UPDATE if existed else FileChangeKind.ADD
        record_diff(ctx.workspace, ctx.session_id, rel, kind.value, old, content, note=unread)
        verb = "updated" if existed else "created"
        return ToolResult(
            output=f"{verb} {rel} ({len(content)} bytes)",
            file_changes=(FileChange(path=rel, kind=kind),),
            data={"path": rel, "bytes": len(content), "kind": kind.value},
        )


def _previous(loc: Located, raw: str, existed: bool) -> tuple[bytes | None, str | None]:
    """What a file held before `write_file` replaces it (for the session's diff record), or
    why that is not known; never fails the write."""
    if not existed:
        return None, None
    try:
        return _read_text(loc, raw, DIFF_INPUT_LIMIT).encode("utf-8"), None
    except (ToolError, OSError) as exc:
        return None, f"previous content not recorded: {exc}"


@dataclass(slots=True)
class _Step:
    """One planned change: `new` content, or None to delete the entry."""

    loc: Located
    new: bytes | None
    kind: FileChangeKind
    mode: int | None = None  # the replaced file's permission bits
    previous: bytes | None = None  # for the rollback: the old content ...
    link: str | None = None  # ... or the old symlink's target


class ApplyPatchTool:
    """Applies a "*** Begin Patch" envelope all-or-nothing (see `vtcode.tools.patch`)."""

    spec = tool_spec(
        "apply_patch",
        "Apply a patch in the '*** Begin Patch' format: '*** Add File: p' (+lines), "
        "'*** Delete File: p', '*** Update File: p' (optional '*** Move to: q') with '@@' hunks "
        "of ' ' context, '-' removed and '+' added lines, then '*** End Patch'. Every hunk is "
        "checked before any file changes; if one fails, nothing is written.",
        {"input": {"type": "string", "minLength": 1, "description": "The whole patch text."}},
        ["input"],
    )
    read_only = False

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        with os_errors("the patch's files"):
            return self._run(arguments, ctx)

    def _run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ops = parse_patch(arguments["input"])
        steps: list[_Step] = []
        with open_workspace(ctx.workspace) as ws:
            try:
                for op in ops:  # raises before anything is written
                    _plan(ws, op, steps)
                result = _apply(steps)
                for s in steps:
                    new, kind = s.new, s.kind.value
                    record_diff(ctx.workspace, ctx.session_id, s.loc.rel, kind, s.previous, new)
                return result
            finally:
                for step in steps:
                    step.loc.close()


def _apply(steps: list[_Step]) -> ToolResult:
    done: list[_Step] = []
    try:
        for step in steps:
            if step.new is None:
                unlink_at(step.loc)
            else:
                replace_at(step.loc, step.new, step.mode)
            done.append(step)
    except OSError as exc:
        _rollback(done)
        raise ToolError(
            f"apply_patch failed while writing ({exc.strerror or exc}); "
            "files already changed were restored"
        ) from exc
    changes = [FileChange(path=s.loc.rel, kind=s.kind) for s in steps]
    summary = "\n".join(f"{c.kind.value[0].upper()} {c.path}" for c in changes)
    return ToolResult(
        output=f"patch applied:\n{summary}",
        file_changes=tuple(changes),
        data={"changes": [{"path": c.path, "kind": c.kind.value} for c in changes]},
    )


def _plan(ws: Beneath, op: FileOp, steps: list[_Step]) -> None:
    where = f"patch line {op.line}"

    def locate(raw: str, *, follow_last: bool = True, create: bool = False) -> Located:
        try:
            loc = ws.locate(raw, write=True, follow_last=follow_last, create=create)
        except ToolError as exc:
            raise ToolError(f"{where}: {exc}") from exc
        return loc  # the caller closes it, or hands it to a step (closed after the patch)

    if op.kind == "add":
        loc = locate(op.path, create=True)
        if loc.name is None or loc.lstat() is not None:
            loc.close()
            raise ToolError(f"{where}: cannot add {op.path!r}: it already exists")
        steps.append(_Step(loc, op.content.encode("utf-8"), FileChangeKind.ADD))
        return
    loc = locate(op.path, follow_last=op.kind != "delete")
    st = loc.lstat()
    if op.kind == "delete" and st is not None and stat.S_ISLNK(st.st_mode):
        # deleting a symlink removes the link, never its target
        steps.append(_Step(loc, None, FileChangeKind.DELETE, link=read_link(loc)))
        return
    if st is None or stat.S_ISDIR(st.st_mode):
        loc.close()
        raise ToolError(f"{where}: {op.path!r} does not exist (or is not a file)")
    if not stat.S_ISREG(st.st_mode):
        loc.close()
        raise ToolError(f"{where}: {not_regular(loc.rel, st.st_mode)}")
    step = _Step(loc, None, FileChangeKind.DELETE, mode=stat.S_IMODE(st.st_mode))
    steps.append(step)
    try:
        original = _read_text(loc, op.path)
    except ToolError as exc:
        raise ToolError(f"{where}: {exc}") from exc
    step.previous = original.encode("utf-8")
    if op.kind == "delete":
        return
    new = apply_hunks(original, op).encode("utf-8") if op.hunks else step.previous
    if op.move_to is None:
        step.new, step.kind = new, FileChangeKind.UPDATE
        return
    dest = locate(op.move_to, create=True)
    if dest.name is None or dest.lstat() is not None:
        dest.close()
        raise ToolError(f"{where}: cannot move to {op.move_to!r}: it already exists")
    steps.insert(len(steps) - 1, _Step(dest, new, FileChangeKind.ADD, mode=step.mode))


def _rollback(done: list[_Step]) -> None:
    for step in reversed(done):
        with contextlib.suppress(OSError):
            if step.link is not None:
                link_at(step.loc, step.link)
            elif step.previous is None:
                unlink_at(step.loc)
            else:
                replace_at(step.loc, step.previous, step.mode)
