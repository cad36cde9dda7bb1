"""File tools: read_file, list_files, grep (read-only) and write_file, apply_patch (mutating).

Every path goes through `paths.resolve_path` (workspace confinement; writes never touch `.vtcode/`
or `.git/`). Every answer is bounded: line and byte caps, entry and match caps, each reporting
when it cut something. Writes are atomic (temp file, fsync, rename, fsync folder) and keep an
existing file's permission bits; `apply_patch` validates every hunk of every file before it
writes anything, and restores what it already wrote if a later write fails.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

from vtcode.events.enums import FileChangeKind
from vtcode.fsutil import atomic_write_bytes
from vtcode.providers.messages import ToolSpec
from vtcode.tools.base import FileChange, Tool, ToolContext, ToolError, ToolResult
from vtcode.tools.patch import FileOp, apply_hunks, parse_patch
from vtcode.tools.paths import relative, resolve_entry, resolve_path

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
GREP_TIME_BUDGET_SECS = 20.0  # checked between files; one pathological regex can still overrun
WRITE_MAX_BYTES = 16 * 1024 * 1024
SKIP_DIRS = frozenset({".git", ".vtcode"})
_BINARY_SNIFF = 8192
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


_DEFAULT_FILE_MODE = 0o666 & ~_umask()


def _spec(name: str, description: str, props: dict[str, Any], required: list[str]) -> ToolSpec:
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


def _open_regular(path: Path, raw: str) -> int:
    """An O_NOFOLLOW read fd on a regular file, or a clear ToolError."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC)
    except FileNotFoundError:
        raise ToolError(f"{raw!r} does not exist") from None
    except IsADirectoryError:
        raise ToolError(f"{raw!r} is a directory") from None
    except OSError as exc:
        raise ToolError(f"cannot open {raw!r}: {exc.strerror}") from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ToolError(f"{raw!r} is {kind}")
    return fd


def _read_text(path: Path, raw: str, limit: int = WRITE_MAX_BYTES) -> str:
    fd = _open_regular(path, raw)
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ToolError(f"{raw!r} is larger than {limit} bytes")
    if b"\x00" in data[:_BINARY_SNIFF]:
        raise ToolError(f"{raw!r} looks like a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{raw!r} is not UTF-8 text (byte {exc.start})") from exc


def _clip(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit] + " [line truncated]"


class ReadFileTool:
    """Lines of a text file, `offset` (1-based) and `limit`, bounded in lines and bytes."""

    spec = _spec(
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
        raw = arguments["path"]
        path = resolve_path(ctx.workspace, raw)
        offset = int(arguments.get("offset", 1))
        limit = int(arguments.get("limit", READ_DEFAULT_LINES))
        fd = _open_regular(path, raw)
        with os.fdopen(fd, "rb") as f:
            if b"\x00" in f.read(_BINARY_SNIFF):
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
            "path": relative(ctx.workspace, path),
            "start_line": offset,
            "end_line": max(end, offset - 1),
            "truncated": more,
        }
        if exact:
            data["total_lines"] = total
        return ToolResult(output=body, data=data)


def _read_lines(f: Any, offset: int, limit: int) -> tuple[list[str], int, bool]:
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


class ListFilesTool:
    """Entries of a folder (optionally recursive), sorted, skipping `.git` and `.vtcode`."""

    spec = _spec(
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
        raw = arguments.get("path", ".")
        base = resolve_path(ctx.workspace, raw, must_exist=True)
        if not base.is_dir():
            raise ToolError(f"{raw!r} is not a folder")
        cap = int(arguments.get("max_entries", LIST_DEFAULT_ENTRIES))
        recursive = bool(arguments.get("recursive", False))
        entries: list[str] = []
        truncated = False
        stack = [base]
        while stack and not truncated:
            folder = stack.pop()
            try:
                items = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError as exc:
                if folder == base:
                    raise ToolError(f"cannot list {raw!r}: {exc.strerror}") from exc
                continue
            subdirs: list[Path] = []
            for entry in items:
                is_dir = entry.is_dir(follow_symlinks=False)
                if is_dir and _skip_dir(entry.name):
                    continue
                if len(entries) >= cap:
                    truncated = True
                    break
                rel = relative(ctx.workspace, Path(entry.path))
                entries.append(rel + "/" if is_dir else rel)
                if is_dir and recursive:
                    subdirs.append(Path(entry.path))
            stack.extend(reversed(subdirs))
        body = "\n".join(entries) if entries else "[empty folder]"
        if truncated:
            body += f"\n[listing cut at {cap} entries; narrow the path or raise max_entries]"
        data = {
            "path": relative(ctx.workspace, base),
            "count": len(entries),
            "truncated": truncated,
        }
        return ToolResult(output=body, data=data)


class GrepTool:
    """A pure-Python regex search over workspace files (no ripgrep needed)."""

    spec = _spec(
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
        flags = re.IGNORECASE if arguments.get("case_insensitive") else 0
        try:
            regex = re.compile(arguments["pattern"], flags)
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from exc
        raw = arguments.get("path", ".")
        base = resolve_path(ctx.workspace, raw, must_exist=True)
        glob = arguments.get("glob")
        cap = int(arguments.get("max_matches", GREP_DEFAULT_MATCHES))
        matches: list[str] = []
        files_searched = 0
        truncated = False
        deadline = time.monotonic() + GREP_TIME_BUDGET_SECS
        stopped: str | None = None
        for file in _walk_files(base):
            if ctx.cancel.is_set():
                stopped = "cancelled"
            elif time.monotonic() > deadline:
                stopped = f"time budget of {GREP_TIME_BUDGET_SECS:g} s used up"
            if stopped:
                break
            rel = relative(ctx.workspace, file)
            if glob and not _glob_match(glob, rel):
                continue
            files_searched += 1
            for lineno, line in _text_lines(file):
                if regex.search(line):
                    if len(matches) >= cap:
                        truncated = True
                        break
                    matches.append(f"{rel}:{lineno}:{_clip(line, GREP_LINE_CHARS)}")
            if truncated:
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
    from vtcode.tools.permissions import path_glob_match

    if "/" not in glob:
        return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], glob)
    return path_glob_match(glob, rel)


def _walk_files(base: Path) -> list[Path]:
    if base.is_file():
        return [base]
    out: list[Path] = []
    for root, dirs, files in os.walk(base, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not _skip_dir(d))
        for name in sorted(files):
            p = Path(root, name)
            if not p.is_symlink():
                out.append(p)
    return out


def _text_lines(path: Path) -> list[tuple[int, str]]:
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > GREP_MAX_FILE_BYTES:
            return []
        data = f.read()
    if b"\x00" in data[:_BINARY_SNIFF]:
        return []
    text = data.decode("utf-8", "replace")
    return list(enumerate(text.splitlines(), start=1))


def _write_atomic(path: Path, content: bytes) -> None:
    """Atomic replace that keeps the old file's mode (new files get 0666 & ~umask)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = _DEFAULT_FILE_MODE
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, content)
    path.chmod(mode)


class WriteFileTool:
    """Writes a whole file atomically, creating parent folders."""

    spec = _spec(
        "write_file",
        "Create or overwrite a text file in the workspace with `content` (parent folders are "
        "created). Files under .git/ and .vtcode/ cannot be written.",
        {"path": {"type": "string", "minLength": 1}, "content": {"type": "string"}},
        ["path", "content"],
    )
    read_only = False

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = arguments["path"]
        path = resolve_path(ctx.workspace, raw, write=True)
        content = arguments["content"].encode("utf-8")
        if len(content) > WRITE_MAX_BYTES:
            raise ToolError(f"content is larger than {WRITE_MAX_BYTES} bytes")
        if path.is_dir():
            raise ToolError(f"{raw!r} is a folder")
        existed = path.exists()
        try:
            _write_atomic(path, content)
        except OSError as exc:
            raise ToolError(f"cannot write {raw!r}: {exc.strerror or exc}") from exc
        rel = relative(ctx.workspace, path)
        kind = FileChangeKind.UPDATE if existed else FileChangeKind.ADD
        verb = "updated" if existed else "created"
        return ToolResult(
            output=f"{verb} {rel} ({len(content)} bytes)",
            file_changes=(FileChange(path=rel, kind=kind),),
            data={"path": rel, "bytes": len(content), "kind": kind.value},
        )


class ApplyPatchTool:
    """Applies a "*** Begin Patch" envelope all-or-nothing (see `vtcode.tools.patch`)."""

    spec = _spec(
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
        ops = parse_patch(arguments["input"])
        plan = [self._plan(op, ctx) for op in ops]  # raises before anything is written
        done: list[tuple[Path, bytes | None]] = []  # (path, previous content or None)
        changes: list[FileChange] = []
        try:
            for writes in plan:
                for path, new, kind in writes:
                    previous = path.read_bytes() if path.exists() else None
                    if new is None:
                        os.unlink(path)
                    else:
                        _write_atomic(path, new)
                    done.append((path, previous))
                    changes.append(FileChange(path=relative(ctx.workspace, path), kind=kind))
        except OSError as exc:
            _rollback(done)
            raise ToolError(
                f"apply_patch failed while writing ({exc.strerror or exc}); "
                "files already changed were restored"
            ) from exc
        summary = "\n".join(f"{c.kind.value[0].upper()} {c.path}" for c in changes)
        return ToolResult(
            output=f"patch applied:\n{summary}",
            file_changes=tuple(changes),
            data={"changes": [{"path": c.path, "kind": c.kind.value} for c in changes]},
        )

    @staticmethod
    def _plan(op: FileOp, ctx: ToolContext) -> list[tuple[Path, bytes | None, FileChangeKind]]:
        where = f"patch line {op.line}"
        if op.kind == "delete":
            link = _symlink_entry(ctx, op.path)
            if link is not None:  # deleting a symlink removes the link, never its target
                return [(link, None, FileChangeKind.DELETE)]
        path = resolve_path(ctx.workspace, op.path, write=True)
        if op.kind == "add":
            if path.exists():
                raise ToolError(f"{where}: cannot add {op.path!r}: it already exists")
            _check_parent(path, op.path, where)
            return [(path, op.content.encode("utf-8"), FileChangeKind.ADD)]
        if not path.is_file():
            raise ToolError(f"{where}: {op.path!r} does not exist (or is not a file)")
        if op.kind == "delete":
            return [(path, None, FileChangeKind.DELETE)]
        try:
            original = _read_text(path, op.path)
        except ToolError as exc:
            raise ToolError(f"{where}: {exc}") from exc
        new = apply_hunks(original, op).encode("utf-8") if op.hunks else original.encode()
        if op.move_to is None:
            return [(path, new, FileChangeKind.UPDATE)]
        dest = resolve_path(ctx.workspace, op.move_to, write=True)
        if dest.exists():
            raise ToolError(f"{where}: cannot move to {op.move_to!r}: it already exists")
        _check_parent(dest, op.move_to, where)
        return [(dest, new, FileChangeKind.ADD), (path, None, FileChangeKind.DELETE)]


def _symlink_entry(ctx: ToolContext, raw: str) -> Path | None:
    """The link itself when `raw` names a symlink (in a confined, writable folder)."""
    entry = resolve_entry(ctx.workspace, raw, write=True)
    return entry if entry.is_symlink() else None


def _check_parent(path: Path, raw: str, where: str) -> None:
    """Refuse early when a would-be parent folder is a file (mkdir would fail mid-patch)."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ToolError(f"{where}: cannot create {raw!r}: {parent.name!r} is not a folder")
            return


def _rollback(done: list[tuple[Path, bytes | None]]) -> None:
    for path, previous in reversed(done):
        with contextlib.suppress(OSError):
            if previous is None:
                path.unlink(missing_ok=True)
            else:
                _write_atomic(path, previous)


def file_tools() -> list[Tool]:
    """Fresh instances of every built-in file tool."""
    return [ReadFileTool(), ListFilesTool(), GrepTool(), WriteFileTool(), ApplyPatchTool()]
