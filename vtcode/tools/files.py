"""File tools: read_file, list_files, grep (read-only); write_file and apply_patch live in
`vtcode.tools.file_edits`.

Every path is opened through `vtcode.tools.beneath` (resolved beneath a workspace fd, never a
path string checked and then reopened), and only regular files and folders are ever opened:
FIFOs, sockets and devices are refused by name (read_file) or skipped (grep, list_files marks
them) without blocking. Every answer is bounded: line and byte caps, entry and match caps, each
reporting when it cut something.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import stat
import time
from collections.abc import Callable, Generator
from functools import partial
from typing import Any, BinaryIO

from vtcode.messages import ToolSpec
from vtcode.tools.base import Tool, ToolContext, ToolError, ToolResult
from vtcode.tools.beneath import Opened, open_regular_in, open_workspace, os_errors
from vtcode.tools.fdops import Entry, walk

READ_DEFAULT_LINES = 2000
READ_MAX_LINES = 10_000
READ_MAX_BYTES = 256 * 1024
LINE_MAX_CHARS = 2000
READ_COUNT_MAX_BYTES = 64 * 1024 * 1024  # beyond this, read_file stops counting lines
_READ_PIECE = 64 * 1024
LIST_DEFAULT_ENTRIES = 500
LIST_MAX_ENTRIES = 5000
GREP_DEFAULT_MATCHES = 200
GREP_MAX_MATCHES = 2000
GREP_MAX_FILE_BYTES = 8 * 1024 * 1024
GREP_LINE_CHARS = 500
GREP_TIME_BUDGET_SECS = 20.0  # the whole search, one line's match included (`regex` timeout)
WRITE_MAX_BYTES = 16 * 1024 * 1024
SKIP_DIRS = frozenset({".git", ".vtcode"})
BINARY_SNIFF = 8192


def tool_spec(name: str, description: str, props: dict[str, Any], required: list[str]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": False,
        },
    )


def open_in_workspace(ctx: ToolContext, raw: str) -> Opened:
    """`raw` opened beneath the workspace (a regular file or a folder), or a ToolError."""
    with open_workspace(ctx.workspace) as ws:
        return ws.open(raw)


def _clip(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit] + " [line truncated]"


class ReadFileTool:
    """Lines of a text file, `offset` (1-based) and `limit`, bounded in lines and bytes."""

    spec = tool_spec(
        "read_file",
        "Read a UTF-8 text file in the workspace. `offset` is the first line (1-based), "
        f"`limit` the number of lines (default {READ_DEFAULT_LINES}). Long output is cut and "
        "says how to continue.",
        {
            "path": {"type": "string", "minLength": 1},
            "offset": {"type": "integer", "minimum": 1, "default": 1},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": READ_MAX_LINES,
                "default": READ_DEFAULT_LINES,
            },
        },
        ["path"],
    )
    read_only = True

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        with os_errors(repr(arguments["path"])):
            return self._run(arguments, ctx)

    def _run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = arguments["path"]
        offset = int(arguments.get("offset", 1))
        limit = int(arguments.get("limit", READ_DEFAULT_LINES))
        opened = open_in_workspace(ctx, raw)
        if opened.is_dir:
            os.close(opened.fd)
            raise ToolError(f"{raw!r} is a directory")
        with os.fdopen(opened.fd, "rb") as f:
            if b"\x00" in f.read(BINARY_SNIFF):
                raise ToolError(f"{raw!r} looks like a binary file")
            f.seek(0)
            out, total, exact = _read_lines(f, offset, limit)
        end = offset + len(out) - 1
        body = "\n".join(out)
        more = end < total or not exact
        if more and out:
            of = f"of {total}" if exact else "(the file is too large to count its lines)"
            body += (
                f"\n[showing lines {offset}-{end} {of}; "
                f"call read_file with offset={end + 1} to continue]"
            )
        elif offset > total and total:
            body = f"[offset {offset} is past the end of the file ({total} lines)]"
        data: dict[str, Any] = {
            "path": opened.rel,
            "start_line": offset,
            "end_line": max(end, offset - 1),
            "truncated": more,
        }
        if exact:
            data["total_lines"] = total
        return ToolResult(output=body, data=data)


def _read_lines(f: BinaryIO, offset: int, limit: int) -> tuple[list[str], int, bool]:
    """Lines offset..offset+limit-1 (clipped, within READ_MAX_BYTES), the line count, and
    whether that count is exact (counting stops after READ_COUNT_MAX_BYTES).

    Reads in bounded pieces, so a gigabyte without a newline never sits in memory.
    """
    out: list[str] = []
    size = 0
    lineno = 0
    consumed = 0
    at_start = True
    full = False
    while True:
        piece = f.readline(_READ_PIECE)
        if not piece:
            return out, lineno, True
        consumed += len(piece)
        starts_line = at_start
        at_start = piece.endswith(b"\n")
        if not starts_line:
            continue  # the rest of an over-long line: already clipped
        lineno += 1
        if full and consumed > READ_COUNT_MAX_BYTES:
            return out, lineno, False
        if lineno < offset or full:
            continue
        text = piece.decode("utf-8", "replace").rstrip("\n")
        whole = at_start or len(piece) < _READ_PIECE  # a short piece without "\n": last line
        text = _clip(text, LINE_MAX_CHARS) if whole else text[:LINE_MAX_CHARS] + " [line truncated]"
        if size + len(text) + 1 > READ_MAX_BYTES:
            full = True
            continue
        out.append(text)
        size += len(text) + 1
        full = len(out) >= limit


def _skip_dir(name: str) -> bool:
    return name in SKIP_DIRS


def _shown(entry: Entry) -> str:
    """Folders end with '/'; FIFOs, sockets and devices are marked with their kind."""
    if entry.kind == "dir":
        return entry.rel + "/"
    if entry.kind in ("file", "link"):
        return entry.rel
    return f"{entry.rel} [{entry.kind}]"


class ListFilesTool:
    """Entries of a folder (optionally recursive), sorted, skipping `.git` and `.vtcode`."""

    spec = tool_spec(
        "list_files",
        "List files in a workspace folder (folders end with '/'). `recursive` walks "
        "subfolders; `.git` and `.vtcode` are skipped and symlinked folders are not followed.",
        {
            "path": {"type": "string", "minLength": 1, "default": "."},
            "recursive": {"type": "boolean", "default": False},
            "max_entries": {
                "type": "integer",
                "minimum": 1,
                "maximum": LIST_MAX_ENTRIES,
                "default": LIST_DEFAULT_ENTRIES,
            },
        },
        [],
    )
    read_only = True

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        with os_errors(repr(arguments.get("path", "."))):
            return self._run(arguments, ctx)

    def _run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = arguments.get("path", ".")
        opened = open_in_workspace(ctx, raw)
        if not opened.is_dir:
            os.close(opened.fd)
            raise ToolError(f"{raw!r} is not a folder")
        cap = int(arguments.get("max_entries", LIST_DEFAULT_ENTRIES))
        recursive = bool(arguments.get("recursive", False))
        entries: list[str] = []
        truncated = False
        try:
            with contextlib.closing(
                walk(opened.fd, opened.rel, recursive=recursive, skip=_skip_dir)
            ) as folders:
                for folder in folders:
                    if len(entries) + len(folder) > cap:
                        entries.extend(_shown(e) for e in folder[: cap - len(entries)])
                        truncated = True
                        break
                    entries.extend(_shown(e) for e in folder)
        except OSError as exc:
            raise ToolError(f"cannot list {raw!r}: {exc.strerror}") from exc
        finally:
            os.close(opened.fd)
        body = "\n".join(entries) if entries else "[empty folder]"
        if truncated:
            body += f"\n[listing cut at {cap} entries; narrow the path or raise max_entries]"
        data = {
            "path": opened.rel,
            "count": len(entries),
            "truncated": truncated,
        }
        return ToolResult(output=body, data=data)


class GrepTool:
    """A pure-Python regex search over workspace files (no ripgrep needed)."""

    spec = tool_spec(
        "grep",
        "Search files for a Python regular expression. Prints `path:line:text`. `glob` filters "
        "file paths (e.g. '*.py' or 'src/**/*.ts'); `.git`, `.vtcode`, binary and very large "
        "files are skipped.",
        {
            "pattern": {"type": "string", "minLength": 1},
            "path": {"type": "string", "minLength": 1, "default": "."},
            "glob": {"type": "string", "minLength": 1},
            "case_insensitive": {"type": "boolean", "default": False},
            "max_matches": {
                "type": "integer",
                "minimum": 1,
                "maximum": GREP_MAX_MATCHES,
                "default": GREP_DEFAULT_MATCHES,
            },
        },
        ["pattern"],
    )
    read_only = True

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        with os_errors(repr(arguments.get("path", "."))):
            return self._run(arguments, ctx)

    def _run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        # The `regex` package in its `re`-compatible mode: the model writes the pattern, and one
        # like `(a+)+b` on a long line of `a` backtracks exponentially; `re` has no time limit,
        # `regex` takes one per call, so the budget bounds the search however it is spent.
        import regex as regex_engine

        flags = regex_engine.VERSION0 | (
            regex_engine.IGNORECASE if arguments.get("case_insensitive") else 0
        )
        try:
            pattern = regex_engine.compile(arguments["pattern"], flags)
        except (regex_engine.error, ValueError, OverflowError) as exc:
            raise ToolError(f"invalid regular expression: {exc}") from exc
        raw = arguments.get("path", ".")
        opened = open_in_workspace(ctx, raw)
        glob = arguments.get("glob")
        cap = int(arguments.get("max_matches", GREP_DEFAULT_MATCHES))
        matches: list[str] = []
        files_searched = 0
        truncated = False
        deadline = time.monotonic() + GREP_TIME_BUDGET_SECS
        stopped: str | None = None
        with contextlib.closing(_candidates(opened)) as candidates:
            for rel, open_file in candidates:
                if ctx.cancel.is_set():
                    stopped = "cancelled"
                elif time.monotonic() > deadline:
                    stopped = f"time budget of {GREP_TIME_BUDGET_SECS:g} s used up"
                if stopped:
                    break
                if glob and not _glob_match(glob, rel):
                    continue
                files_searched += 1
                for lineno, line in _text_lines(open_file()):
                    try:
                        hit = pattern.search(line, timeout=max(0.0, deadline - time.monotonic()))
                    except TimeoutError:
                        stopped = f"time budget of {GREP_TIME_BUDGET_SECS:g} s used up"
                        break
                    if hit:
                        if len(matches) >= cap:
                            truncated = True
                            break
                        matches.append(f"{rel}:{lineno}:{_clip(line, GREP_LINE_CHARS)}")
                if truncated or stopped:
                    break
        body = "\n".join(matches) if matches else "[no matches]"
        if truncated:
            body += f"\n[stopped at {cap} matches; narrow the pattern, path or glob]"
        if stopped:
            body += f"\n[search stopped after {files_searched} files: {stopped}]"
        data = {
            "matches": len(matches),
            "files_searched": files_searched,
            "truncated": truncated or stopped is not None,
        }
        return ToolResult(output=body, data=data)


def _glob_match(glob: str, rel: str) -> bool:
    """`*.py` matches by file name; a glob with '/' matches the workspace-relative path."""
    from vtcode.tools.path_rules import path_glob_match

    if "/" not in glob:
        return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], glob)
    return path_glob_match(glob, rel)


def _candidates(opened: Opened) -> Generator[tuple[str, Callable[[], int | None]], None, None]:
    """(relative path, opener) for each regular file grep may search: the file itself, or every
    one under the folder (FIFOs, sockets, devices and symlinks are skipped, never opened). The
    opener opens relative to the folder fd the walk holds; `opened.fd` is closed at the end."""
    try:
        if not opened.is_dir:
            yield opened.rel, partial(os.dup, opened.fd)
            return
        with contextlib.closing(
            walk(opened.fd, opened.rel, recursive=True, skip=_skip_dir)
        ) as folders:
            for folder in folders:
                for e in folder:
                    if e.kind == "file":
                        yield e.rel, partial(open_regular_in, e.dir_fd, e.name)
    finally:
        os.close(opened.fd)


def _text_lines(fd: int | None) -> list[tuple[int, str]]:
    if fd is None:
        return []
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > GREP_MAX_FILE_BYTES:
            return []
        data = f.read(GREP_MAX_FILE_BYTES + 1)
    if len(data) > GREP_MAX_FILE_BYTES or b"\x00" in data[:BINARY_SNIFF]:
        return []
    text = data.decode("utf-8", "replace")
    return list(enumerate(text.splitlines(), start=1))


def file_tools() -> list[Tool]:
    """Fresh instances of every built-in file tool."""
    from vtcode.tools.file_edits import ApplyPatchTool, WriteFileTool  # they build on this module

    return [ReadFileTool(), ListFilesTool(), GrepTool(), WriteFileTool(), ApplyPatchTool()]
