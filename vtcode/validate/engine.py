"""Validate ThreadEvent JSONL logs: syntax, schema and lifecycle, one streaming pass per file.

Memory is bounded by the line cap plus the per-id lifecycle state. The hot loop is `scan.py`
(typed screen first, exact checks for the rest); a large regular file is split over two
processes by `split.py`. Speed: bench/validate.py.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from vtcode.errors import ExitCode
from vtcode.lineshape import LineShape
from vtcode.validate.lines import LineReader
from vtcode.validate.report import (
    FileReport,
    FileStatus,
    FormatOption,
    ProblemCode,
    Profile,
    Severity,
    Totals,
    ValidateOptions,
    ValidateReport,
)
from vtcode.validate.scan import Problems, ScanState, new_lifecycle, scan

__all__ = ["Progress", "validate_files", "validate_path", "validate_stream"]

Progress = Callable[[int], None]
"""Called with the number of bytes read so far (every few thousand lines, and at the end)."""

_UNKNOWN_BUCKET = "unknown"


def _unreadable(name: str, message: str, problems: Problems | None = None, **kw: Any) -> FileReport:
    probs = problems or Problems(1)
    probs.add(0, "", ProblemCode.UNREADABLE, Severity.ERROR, message)
    return FileReport(
        path=name,
        status=FileStatus.UNREADABLE,
        errors=probs.errors,
        warnings=probs.warnings,
        suppressed=probs.suppressed,
        problems=probs.items,
        **kw,
    )


def start_state(opts: ValidateOptions) -> ScanState:
    """A fresh scan of a whole stream (shape known up front unless `--format auto`)."""
    problems = Problems(opts.max_problems)
    shape = None if opts.format is FormatOption.AUTO else LineShape(opts.format.value)
    state = ScanState(opts=opts, problems=problems, shape=shape)
    if shape is not None:
        state.life = new_lifecycle(opts, problems, shape)
    return state


def finish_report(name: str, state: ScanState) -> FileReport:
    """End-of-log rules and the report of a whole stream."""
    opts = state.opts
    problems = state.problems
    if state.events == 0:
        lifecycle = opts.lifecycle and opts.profile is not Profile.UPSTREAM
        sev = Severity.ERROR if lifecycle and not opts.partial else Severity.WARNING
        what = "empty file" if state.lines == 0 else f"no events in {state.lines} line(s)"
        problems.add(
            0, "", ProblemCode.EMPTY_LOG, sev, f"{what} (a log starts with thread.started)"
        )
    elif state.life is not None:
        state.life.finish(state.lines)
    event_types = {k: v for k, v in state.counts.items() if v}
    if state.unknown_types:
        event_types[_UNKNOWN_BUCKET] = state.unknown_types
    return FileReport(
        path=name,
        status=FileStatus.INVALID if problems.errors else FileStatus.VALID,
        format=state.shape,
        lines=state.lines,
        events=state.events,
        bytes=state.bytes,
        errors=problems.errors,
        warnings=problems.warnings,
        suppressed=problems.suppressed,
        event_types=dict(sorted(event_types.items())),
        problems=problems.items,
    )


def _read_failed(name: str, state: ScanState, e: OSError) -> FileReport:
    return _unreadable(
        name,
        f"read failed after line {state.lines}: {e.strerror or e}",
        state.problems,
        lines=state.lines,
        events=state.events,
        bytes=state.bytes,
        format=state.shape,
    )


def validate_stream(
    stream: BinaryIO,
    name: str,
    options: ValidateOptions | None = None,
    progress: Progress | None = None,
    *,
    split: bool = False,
) -> FileReport:
    """Validate one JSONL stream (a file or stdin) and report every problem up to the cap.

    `split`: `stream` is a regular file at offset 0 that may use two processes (`split.py`).
    """
    opts = options or ValidateOptions()
    state = start_state(opts)
    try:
        started = None
        if split:
            from vtcode.validate.split import validate_split

            started = validate_split(stream, state, progress)
        if started is None:
            scan(state, LineReader(stream, opts.max_line_bytes), progress)
    except OSError as e:
        return _read_failed(name, state, e)
    if progress is not None:
        progress(state.bytes)
    return finish_report(name, state)


def validate_path(
    path: str | os.PathLike[str],
    options: ValidateOptions | None = None,
    progress: Progress | None = None,
    *,
    display: str | None = None,
    jobs: int | None = None,
) -> FileReport:
    """Validate one file; a missing file, a folder or an I/O error is an `unreadable` report."""
    name = display if display is not None else os.fspath(path)
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below; open errors are reported, not raised
    except FileNotFoundError:
        return _unreadable(name, "no such file")
    except IsADirectoryError:
        return _unreadable(name, "is a directory, not a log file")
    except PermissionError:
        return _unreadable(name, "permission denied")
    except OSError as e:
        return _unreadable(name, f"cannot open: {e.strerror or e}")
    with f:
        try:
            st = os.fstat(f.fileno())
        except OSError as e:
            return _unreadable(name, f"cannot stat: {e.strerror or e}")
        if stat.S_ISDIR(st.st_mode):
            return _unreadable(name, "is a directory, not a log file")
        return validate_stream(f, name, options, progress, split=_should_split(st, jobs))


def _should_split(st: os.stat_result, jobs: int | None) -> bool:
    """Two processes for a large regular file (`jobs` None: automatic; 2: any size)."""
    if jobs == 1 or not stat.S_ISREG(st.st_mode):
        return False
    from vtcode.validate.split import SPLIT_MIN_BYTES, can_split

    if not can_split():
        return False
    return jobs == 2 or st.st_size >= SPLIT_MIN_BYTES


def exit_code_for(files: Sequence[FileReport]) -> int:
    """2 if any input was unreadable, else 1 if any was invalid, else 0."""
    if any(f.status is FileStatus.UNREADABLE for f in files):
        return int(ExitCode.USAGE)
    if any(f.status is FileStatus.INVALID for f in files):
        return int(ExitCode.FAILURE)
    return int(ExitCode.OK)


def build_report(files: list[FileReport], options: ValidateOptions) -> ValidateReport:
    """Wrap per-file results into the published report document."""
    code = exit_code_for(files)
    return ValidateReport(
        valid=code == 0,
        exit_code=code,
        options=options,
        totals=Totals(
            files=len(files),
            lines=sum(f.lines for f in files),
            events=sum(f.events for f in files),
            errors=sum(f.errors for f in files),
            warnings=sum(f.warnings for f in files),
        ),
        files=files,
    )


def validate_files(
    paths: Sequence[str],
    options: ValidateOptions | None = None,
    *,
    stdin: BinaryIO | None = None,
    progress_for: Callable[[str, int | None], Progress | None] | None = None,
    jobs: int | None = None,
) -> ValidateReport:
    """Validate each path (`-` = `stdin`) and build the report.

    `progress_for(name, size)` may return a progress callback for one file (size None when the
    input is not a regular file); the CLI uses it for a progress bar on large files. `jobs`: 1
    keeps one process; None (automatic) or 2 lets a large regular file use two (`split.py`);
    the report is the same either way.
    """
    opts = options or ValidateOptions()
    out: list[FileReport] = []
    for p in paths:
        if p == "-":
            if stdin is None:
                out.append(_unreadable("-", "no standard input available"))
                continue
            cb = progress_for("-", None) if progress_for else None
            out.append(validate_stream(stdin, "-", opts, cb))
            continue
        cb = None
        if progress_for is not None:
            try:
                st = Path(p).stat()
                size = st.st_size if stat.S_ISREG(st.st_mode) else None
            except OSError:
                size = None
            cb = progress_for(p, size)
        out.append(validate_path(p, opts, cb, jobs=jobs))
    return build_report(out, opts)
