"""Validate ThreadEvent JSONL logs: syntax, schema and lifecycle, one streaming pass per file.

Memory is bounded by the line cap plus the per-id lifecycle state; time is dominated by orjson
and the precompiled per-variant jsonschema-rs check (see bench/validate.py).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from vtcode.errors import ExitCode
from vtcode.events.codec import LineShape
from vtcode.events.types import EVENT_TYPES
from vtcode.validate.lifecycle import Lifecycle
from vtcode.validate.lines import LAST_UNTERMINATED, OK, TOO_LONG, LineReader
from vtcode.validate.parity import NEWLINE, ReaderParity, parity_for
from vtcode.validate.report import (
    FileReport,
    FileStatus,
    FormatOption,
    Problem,
    ProblemCode,
    Severity,
    Totals,
    ValidateOptions,
    ValidateReport,
)
from vtcode.validate.schemacheck import (
    SchemaChecker,
    checker_for,
    detect_shape,
    json_type,
    version_finding,
)
from vtcode.validate.syntax import explain_syntax

__all__ = ["Progress", "validate_files", "validate_path", "validate_stream"]

Progress = Callable[[int], None]
"""Called with the number of bytes read so far (every few thousand lines, and at the end)."""

_PROGRESS_MASK = (1 << 14) - 1
_UNKNOWN_BUCKET = "unknown"
_MAX_MESSAGE = 400  # a hostile log must not blow up the report (or the terminal)
_MAX_VALUE = 160


class _Problems:
    """Collects problems up to the cap; counts every one (listed or suppressed) by severity."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.items: list[Problem] = []
        self.errors = 0
        self.warnings = 0
        self.suppressed = 0

    def add(
        self,
        line: int,
        ptr: str,
        code: ProblemCode,
        severity: Severity,
        message: str,
        value: Any = None,
        column: int | None = None,
    ) -> None:
        if severity is Severity.ERROR:
            self.errors += 1
        else:
            self.warnings += 1
        if len(self.items) < self.cap:
            if len(message) > _MAX_MESSAGE:
                message = message[: _MAX_MESSAGE - 1] + "…"
            if isinstance(value, str) and len(value) > _MAX_VALUE:
                value = value[: _MAX_VALUE - 1] + "…"
            self.items.append(
                Problem(
                    line=line,
                    column=column,
                    pointer=ptr,
                    code=code,
                    severity=severity,
                    message=message,
                    value=value,
                )
            )
        else:
            self.suppressed += 1


def _unreadable(
    name: str, message: str, problems: _Problems | None = None, **kw: Any
) -> FileReport:
    probs = problems or _Problems(1)
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


def _explain(
    checker: SchemaChecker, obj: dict[str, Any], line: int, problems: _Problems, *, strict: bool
) -> None:
    """The slow path, for a line that failed the fast check: say exactly what is wrong."""
    soft = Severity.ERROR if strict else Severity.WARNING
    findings = checker.explain(obj, strict=strict)
    if checker.shape is LineShape.WRAPPED:
        vf = version_finding(obj.get("schema_version"), strict=strict)
        if vf is not None:
            findings.append(vf)
    for f in findings:
        severity = soft if f.reader_ok else Severity.ERROR
        problems.add(line, f.pointer, f.code, severity, f.message, f.value)


def validate_stream(
    stream: BinaryIO,
    name: str,
    options: ValidateOptions | None = None,
    progress: Progress | None = None,
) -> FileReport:
    """Validate one JSONL stream (a file or stdin) and report every problem up to the cap."""
    opts = options or ValidateOptions()
    strict = opts.strict
    problems = _Problems(opts.max_problems)
    add = problems.add
    soft = Severity.ERROR if strict else Severity.WARNING  # what readers tolerate
    partial_sev = Severity.WARNING if opts.partial else Severity.ERROR

    shape: LineShape | None = (
        None if opts.format is FormatOption.AUTO else LineShape(opts.format.value)
    )
    checker = checker_for(shape) if shape is not None else None
    parity: ReaderParity | None = parity_for(shape) if shape is not None else None
    suspect = parity.suspect if parity is not None else None
    fast_by_type = checker.fast_by_type if checker is not None else {}
    wrapped = shape is LineShape.WRAPPED
    life: Lifecycle | None = None
    if opts.lifecycle and shape is not None:
        life = Lifecycle(add, partial=opts.partial, event_pointer="/event" if wrapped else "")
    counts = dict.fromkeys(EVENT_TYPES, 0)
    unknown_types = 0
    events = 0
    last_seq = 0
    number = 0
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    reader = LineReader(stream, opts.max_line_bytes)
    try:
        for number, data, kind in reader:
            if kind == TOO_LONG:
                add(
                    number,
                    "",
                    ProblemCode.LINE_TOO_LONG,
                    Severity.ERROR,
                    f"line of {reader.long_line_size} bytes is over the "
                    f"{opts.max_line_bytes}-byte cap (skipped)",
                )
                continue
            try:
                obj = loads(data)
            except decode_error as err:
                if kind == LAST_UNTERMINATED and data.strip():
                    add(
                        number,
                        "",
                        ProblemCode.TORN_LINE,
                        partial_sev,
                        f"torn final line: {len(data)} bytes, no newline, not parsable "
                        "(a write was cut off)",
                    )
                    continue
                syn = explain_syntax(data, err)
                sev = soft if syn.code is ProblemCode.BLANK_LINE else Severity.ERROR
                add(number, "", syn.code, sev, syn.message, None, syn.column)
                continue
            if kind == LAST_UNTERMINATED:
                add(
                    number,
                    "",
                    ProblemCode.MISSING_NEWLINE,
                    Severity.WARNING,
                    "the final line has no newline (writers end every line with one)",
                )
            if type(obj) is dict:
                events += 1
                if checker is None:
                    shape = detect_shape(obj)
                    checker = checker_for(shape)
                    parity = parity_for(shape)
                    suspect = parity.suspect
                    fast_by_type = checker.fast_by_type
                    wrapped = shape is LineShape.WRAPPED
                    if opts.lifecycle:
                        life = Lifecycle(
                            add, partial=opts.partial, event_pointer="/event" if wrapped else ""
                        )
                if wrapped:
                    ev = obj.get("event")
                    seq = obj.get("seq")
                    if seq is not None and type(seq) is int:
                        if seq != last_seq + 1:
                            add(
                                number,
                                "/seq",
                                ProblemCode.SEQ_GAP,
                                Severity.ERROR,
                                f"seq {seq} where {last_seq + 1} was expected "
                                "(1-based and gapless)",
                                seq,
                            )
                        last_seq = max(last_seq + 1, seq)  # resync without cascading
                else:
                    ev = obj
                if type(ev) is not dict:
                    ev = None
                etype = ev.get("type") if ev is not None else None
                if type(etype) is not str:
                    etype = None
                fast = fast_by_type.get(etype) if etype is not None else None
                try:
                    ok = fast is not None and fast(obj)
                except ValueError:  # jsonschema-rs refuses very deep values
                    ok = False
                if not ok:
                    _explain(checker, obj, number, problems, strict=strict)
                assert parity is not None and suspect is not None
                if not ok or suspect(data, obj, ev, etype, NEWLINE if kind == OK else 0):
                    # serde_json's rules hold in every mode: a reader refuses the line
                    for f in parity.findings(data, obj):
                        add(number, f.pointer, f.code, Severity.ERROR, f.message, f.value)
                if etype is not None:
                    if etype in counts:
                        counts[etype] += 1
                    else:
                        unknown_types += 1
                    if life is not None and ev is not None:
                        life.feed(number, etype, ev)
            else:
                add(
                    number,
                    "",
                    ProblemCode.WRONG_TYPE,
                    Severity.ERROR,
                    f"a line must be a JSON object, not {json_type(obj)}",
                )
            if progress is not None and not number & _PROGRESS_MASK:
                progress(reader.bytes_read)
    except OSError as e:
        return _unreadable(
            name,
            f"read failed after line {number}: {e.strerror or e}",
            problems,
            lines=number,
            events=events,
            bytes=reader.bytes_read,
            format=shape,
        )
    if progress is not None:
        progress(reader.bytes_read)
    if events == 0:
        sev = Severity.ERROR if opts.lifecycle and not opts.partial else Severity.WARNING
        what = "empty file" if number == 0 else f"no events in {number} line(s)"
        add(0, "", ProblemCode.EMPTY_LOG, sev, f"{what} (a log starts with thread.started)")
    elif life is not None:
        life.finish(number)
    event_types = {k: v for k, v in counts.items() if v}
    if unknown_types:
        event_types[_UNKNOWN_BUCKET] = unknown_types
    return FileReport(
        path=name,
        status=FileStatus.INVALID if problems.errors else FileStatus.VALID,
        format=shape,
        lines=number,
        events=events,
        bytes=reader.bytes_read,
        errors=problems.errors,
        warnings=problems.warnings,
        suppressed=problems.suppressed,
        event_types=dict(sorted(event_types.items())),
        problems=problems.items,
    )


def validate_path(
    path: str | os.PathLike[str],
    options: ValidateOptions | None = None,
    progress: Progress | None = None,
    *,
    display: str | None = None,
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
            if stat.S_ISDIR(os.fstat(f.fileno()).st_mode):
                return _unreadable(name, "is a directory, not a log file")
        except OSError as e:
            return _unreadable(name, f"cannot stat: {e.strerror or e}")
        return validate_stream(f, name, options, progress)


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
) -> ValidateReport:
    """Validate each path (`-` = `stdin`) and build the report.

    `progress_for(name, size)` may return a progress callback for one file (size None when the
    input is not a regular file); the CLI uses it for a progress bar on large files.
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
        out.append(validate_path(p, opts, cb))
    return build_report(out, opts)
