"""Validate a large regular file in two processes: the second half runs in a forked child.

Speed on a large log needs both cores, but the lifecycle rules are sequential: whether an
`item.completed` is right depends on every line before it. The child therefore checks the
second half under an assumption about the state at its start (`SpeculativeLifecycle`: a thread
is running, no turn is open, none of its item ids was used before) and records every decision
that needed the first half (call ids, thread ids, the first seq). The parent checks the first
half, then `Lifecycle.join` tests the assumption against the real state and makes the deferred
checks. If the assumption fails (a split inside an open turn, an id reused across the halves, a
second `thread.started`, a seq that went back), the file is validated again in one pass. Either
way the report is the one a single pass gives, problem for problem and in the same order; the
tests compare the two at every possible split point of their logs.

The split point is the first `turn.started` line after the middle (turn boundaries are where the
assumption holds), else the first line after the middle. The child is a `fork` (no re-import; it
runs only this module's code, never touches stdio, and leaves with `os._exit`), opens the file
again by path and refuses to go on if that is not the same file. Platforms without `fork`, and
streams that are not regular files, are validated in one pass.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from vtcode.lineshape import LineShape
from vtcode.validate.lifecycle import Boundary, SpeculativeLifecycle
from vtcode.validate.lines import LineReader
from vtcode.validate.report import FormatOption, Problem, ValidateOptions
from vtcode.validate.scan import Problems, ScanState, new_lifecycle, scan, seq_gap

__all__ = ["SPLIT_MIN_BYTES", "can_split", "validate_split"]

SPLIT_MIN_BYTES = 8 << 20
"""Below this a second process costs more than it saves (`--jobs 2` splits any file)."""

_WINDOW = 4 << 20  # how far past the middle to look for a turn boundary
_PROBE_LINES = 1000  # lines read to learn the shape of an `--format auto` log
_TURN_MARK = {
    LineShape.WRAPPED: b'"event":{"type":"turn.started"',
    LineShape.RAW: b'{"type":"turn.started"',
}

Progress = Callable[[int], None]


def can_split() -> bool:
    """True where a second process can run at the same time as this one."""
    if not hasattr(os, "fork"):
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return cpus >= 2


@dataclass
class _Half:
    """The child's result: what a scan of the second half found, and its open boundary."""

    problems: list[Problem]
    errors: int
    warnings: int
    counts: dict[str, int]
    unknown_types: int
    events: int
    lines: int
    bytes: int
    first_seq: tuple[int, int] | None
    boundary: Boundary | None


def _shape_of(head: bytes, opts: ValidateOptions) -> tuple[LineShape, int] | None:
    """The shape a single pass would detect, and where its line ends; None when unsure."""
    from vtcode.validate.schemacheck import detect_shape

    if opts.format is not FormatOption.AUTO:
        return LineShape(opts.format.value), 0
    end = 0
    for n, line in enumerate(head.split(b"\n")[:-1]):  # whole lines only
        end += len(line) + 1
        if n >= _PROBE_LINES:
            return None
        if len(line) > opts.max_line_bytes:
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if type(obj) is dict:
            return detect_shape(obj), end
    return None


_FIRST_SHARE = 0.53
"""Where the split aims: the child also counts the first half's lines (about 8% of a scan)."""


def _split_point(fd: int, size: int, shape: LineShape) -> int | None:
    """The start of the first turn.started line after the aim, else of the next line."""
    mid = int(size * _FIRST_SHARE)
    window = os.pread(fd, _WINDOW, mid)
    mark = window.find(_TURN_MARK[shape])
    if mark > 0:
        start = window.rfind(b"\n", 0, mark)
        if start >= 0:
            return mid + start + 1
    newline = window.find(b"\n")
    if newline < 0 or mid + newline + 1 >= size:
        return None
    return mid + newline + 1


def _count_lines(fd: int, end: int) -> int:
    count = 0
    offset = 0
    while offset < end:
        block = os.pread(fd, min(_WINDOW, end - offset), offset)
        if not block:
            break
        count += block.count(b"\n")
        offset += len(block)
    return count


def _second_half(
    path: str, ident: tuple[int, int], offset: int, opts: ValidateOptions, shape: LineShape
) -> _Half | None:
    """The child's work: scan from `offset` to the end of the file."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if (st.st_dev, st.st_ino) != ident:
            return None  # the path now names another file
        first_line = _count_lines(f.fileno(), offset)
        f.seek(offset)
        problems = Problems(opts.max_problems)
        life = new_lifecycle(opts, problems, shape, SpeculativeLifecycle)
        state = ScanState(opts=opts, problems=problems, shape=shape, life=life, last_seq=math.nan)
        state.lines = first_line
        scan(state, LineReader(f, opts.max_line_bytes, first_line=first_line + 1))
    return _Half(
        problems=problems.items,
        errors=problems.errors,
        warnings=problems.warnings,
        counts=state.counts,
        unknown_types=state.unknown_types,
        events=state.events,
        lines=state.lines,
        bytes=state.bytes,
        first_seq=state.first_seq,
        boundary=life.close() if isinstance(life, SpeculativeLifecycle) else None,
    )


def _fork_second_half(
    path: str, ident: tuple[int, int], offset: int, opts: ValidateOptions, shape: LineShape
) -> tuple[int, int]:
    """Start the child; returns (pid, read end of the pipe its pickled `_Half` comes on)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(read_end)
            try:
                payload = pickle.dumps(_second_half(path, ident, offset, opts, shape))
            except BaseException:
                payload = pickle.dumps(None)
            view = memoryview(payload)
            while view:
                view = view[os.write(write_end, view) :]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def _collect(pid: int, read_end: int) -> _Half | None:
    chunks: list[bytes] = []
    try:
        while chunk := os.read(read_end, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    try:
        half = pickle.loads(b"".join(chunks))  # noqa: S301 - our own child's bytes, via a pipe
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None
    return half if isinstance(half, _Half) else None


def _merge(state: ScanState, half: _Half) -> bool:
    """Append the child's findings to the first half's state; False if it must be redone."""
    extras = Problems(2**31)
    first_extras = Problems(2**31)
    if half.first_seq is not None:
        line, seq = half.first_seq
        if seq < state.last_seq + 1:
            return False  # a seq that went back: a single pass resyncs differently
        if seq != state.last_seq + 1:
            seq_gap(first_extras.add, line, seq, int(state.last_seq))
    if state.life is not None:
        assert half.boundary is not None
        if not state.life.join(half.boundary, extras.add):
            return False
    ranked = sorted(
        [(p.line, 0, i, p) for i, p in enumerate(first_extras.items)]
        + [(p.line, 1, i, p) for i, p in enumerate(half.problems)]
        + [(p.line, 2, i, p) for i, p in enumerate(extras.items)],
        key=lambda r: (r[0], r[1], r[2]),
    )
    problems = state.problems
    problems.items = (problems.items + [r[3] for r in ranked])[: problems.cap]
    problems.errors += half.errors + extras.errors + first_extras.errors
    problems.warnings += half.warnings + extras.warnings + first_extras.warnings
    problems.suppressed = problems.errors + problems.warnings - len(problems.items)
    for key, count in half.counts.items():
        state.counts[key] += count
    state.unknown_types += half.unknown_types
    state.events += half.events
    state.lines = half.lines
    state.bytes += half.bytes
    return True


def validate_split(
    path: str,
    opts: ValidateOptions,
    progress: Progress | None = None,
    *,
    at: int | None = None,
) -> ScanState | None:
    """The state after both halves of `path`, or None: then validate it in one pass.

    `at` forces the split at that byte offset (the start of a line; for the tests).
    """
    from vtcode.validate.engine import start_state

    with open(path, "rb") as f:
        fd = f.fileno()
        st = os.fstat(fd)
        size = st.st_size
        probe = _shape_of(os.pread(fd, _WINDOW, 0), opts)
        if probe is None:
            return None
        shape, probe_end = probe
        offset = at if at is not None else _split_point(fd, size, shape)
        if offset is None or not 0 < offset < size or offset < probe_end:
            return None
        pid, read_end = _fork_second_half(path, (st.st_dev, st.st_ino), offset, opts, shape)
        try:
            state = start_state(opts)
            state.shape = shape
            state.life = new_lifecycle(opts, state.problems, shape)
            scaled = None if progress is None else (lambda n: progress(n * size // offset))
            try:
                scan(state, LineReader(f, opts.max_line_bytes, limit=offset), scaled)
            except OSError:
                return None  # a single pass reports the read error where it happens
        except BaseException:
            os.kill(pid, signal.SIGKILL)
            raise
        finally:
            half = _collect(pid, read_end)
    if half is None or not _merge(state, half):
        return None
    return state
