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
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, Literal

import orjson

from vtcode.lineshape import LineShape
from vtcode.validate.lifecycle import Boundary, SpeculativeLifecycle
from vtcode.validate.lines import LineReader
from vtcode.validate.profile import first_object, resolve_profile
from vtcode.validate.report import FormatOption, Profile, ValidateOptions
from vtcode.validate.scan import Problems, ScanState, new_lifecycle, scan, seq_gap

__all__ = ["SPLIT_MIN_BYTES", "can_split", "validate_split"]

SPLIT_MIN_BYTES = 8 << 20
"""Below this a second process costs more than it saves (`--jobs 2` splits any file)."""

_WINDOW = 4 << 20  # how far past the middle to look for a turn boundary
_PROBE_LINES = 1000  # lines read to learn the shape of an `--format auto` log
# A turn.started line, as any writer spells it: compact or with Python's `", "`/`": "` spacing,
# `type` first or not, raw or wrapped. Only the compact spelling was looked for, so logs
# written by `json.dumps` defaults, jq or Node, or with other key order, never split (one
# process at --jobs 2: 0.87-1.00x the json.loads floor where compact logs reached 1.8-1.9x).
# A match inside a free-form object (`arguments`) is only a worse split point: a join that
# does not hold is declined and the second half scanned again (`_merge`).
_TURN_MARK = re.compile(rb'"type"[ \t]*:[ \t]*"turn\.started"')

Progress = Callable[[int], None]


def can_split() -> bool:
    """True where a second process can run at the same time as this one."""
    if not (hasattr(os, "fork") and hasattr(os, "pread") and hasattr(os, "preadv")):
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return cpus >= 2


@dataclass
class _Half:
    """The child's result: its scan of the second half (without the lifecycle, whose items map
    stays in the child) and the boundary the lifecycle left open."""

    before: int  # newlines the child counted before the split (the parent must agree)
    state: ScanState
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


def _split_point(fd: int, size: int) -> int | None:
    """The start of the first turn.started line after the aim; None when there is none near
    (a one-turn log, as `exec` writes: the speculation would not hold, so do not fork)."""
    mid = int(size * _FIRST_SHARE)
    window = os.pread(fd, _WINDOW, mid)
    found = _TURN_MARK.search(window)
    mark = -1 if found is None else found.start()
    if mark > 0:
        start = window.rfind(b"\n", 0, mark)
        if start >= 0 and mid + start + 1 < size:
            return mid + start + 1
    return None


def _count_lines(fd: int, end: int) -> int:
    """Newlines in the first `end` bytes, read into one reused buffer (no 4 MiB allocations)."""
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    count = 0
    offset = 0
    while offset < end:
        n = os.preadv(fd, [view[: min(len(buf), end - offset)]], offset)
        if not n:
            break
        count += buf.count(b"\n", 0, n)
        offset += n
    return count


class _PreadStream:
    """A read-only stream over a shared file descriptor that never moves its offset (the
    parent reads the same open file: `pread` keeps the two processes out of each other's way,
    and the child never opens the path again, which may by now name another file or a FIFO)."""

    def __init__(self, fd: int, offset: int) -> None:
        self._fd = fd
        self._offset = offset

    def read1(self, size: int = -1) -> bytes:
        block = os.pread(self._fd, size if size > 0 else 1 << 20, self._offset)
        self._offset += len(block)
        return block

    read = read1


def _die_with_parent(parent: int) -> None:
    """The child must not outlive a parent killed by SIGTERM/SIGKILL (it would hold the
    caller's pipes open and burn a core): Linux's parent-death signal, then a check."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the parent's kill on any exception is the only guard
    if os.getppid() != parent:
        os._exit(1)


def _second_half(fd: int, offset: int, opts: ValidateOptions, shape: LineShape) -> _Half:
    """The child's work: scan from `offset` to the end of the file."""
    first_line = _count_lines(fd, offset)
    problems = Problems(opts.max_problems)
    life = new_lifecycle(opts, problems, shape, SpeculativeLifecycle)
    state = ScanState(opts=opts, problems=problems, shape=shape, life=life, last_seq=math.nan)
    state.lines = first_line
    stream = _PreadStream(fd, offset)
    scan(state, LineReader(stream, opts.max_line_bytes, first_line=first_line + 1))
    boundary = life.close() if isinstance(life, SpeculativeLifecycle) else None
    state.life = None
    return _Half(before=first_line, state=state, boundary=boundary)


_STOP = {signal.SIGINT, signal.SIGTERM}


def _fork_second_half(
    fd: int, offset: int, opts: ValidateOptions, shape: LineShape
) -> tuple[int, int]:
    """Start the child; returns (pid, read end of the pipe its pickled `_Half` comes on)."""
    read_end, write_end = os.pipe()
    parent = os.getpid()
    # no Ctrl-C between fork and the child's `try` (it would run the parent's exit path)
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP)
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        os.close(read_end)
        os.close(write_end)
        raise
    if pid == 0:  # the child: never returns
        code = 0
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
            _die_with_parent(parent)
            os.close(read_end)
            try:
                payload = pickle.dumps(_second_half(fd, offset, opts, shape))
            except BaseException:
                payload = pickle.dumps(None)
            view = memoryview(payload)
            while view:
                view = view[os.write(write_end, view) :]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    os.close(write_end)
    return pid, read_end


def _collect(pid: int, read_end: int, *, kill: bool) -> _Half | None:
    """The child's result (None if it failed); `kill` stops it first (its result is unused)."""
    chunks: list[bytes] = []
    try:
        if kill:
            os.kill(pid, signal.SIGKILL)
        else:
            while chunk := os.read(read_end, 1 << 20):
                chunks.append(chunk)
    except BaseException:
        os.kill(pid, signal.SIGKILL)  # an interrupt while waiting: never wait for its half
        raise
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    try:
        half = pickle.loads(b"".join(chunks))  # noqa: S301 - our own child's bytes, via a pipe
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None
    return half if isinstance(half, _Half) else None


def _merge(state: ScanState, half: _Half, offset: int) -> bool:
    """Append the child's findings to the first half's state; False (nothing changed) when
    the child's assumption does not hold here or the file changed between the two reads."""
    second = half.state
    if state.lines != half.before or state.bytes != offset:
        return False  # the file was cut back or rewritten while we read it
    extras = Problems(2**31)
    tail = list(second.problems.items)
    first_gap = 0
    if second.first_seq is not None:
        line, seq, found_before = second.first_seq
        if seq < state.last_seq + 1:
            return False  # a seq that went back: a single pass resyncs differently
        if seq != state.last_seq + 1:
            gap = Problems(1)
            seq_gap(gap.add, line, seq, int(state.last_seq))
            if found_before <= len(tail):  # where a single pass would have found it
                tail.insert(found_before, gap.items[0])
            first_gap = 1
    if state.life is not None:
        assert half.boundary is not None
        if not state.life.join(half.boundary, extras.add):
            return False
    # the deferred lifecycle checks come last on their line (as in `Lifecycle.feed`)
    ranked = sorted(
        [(p.line, 0, i, p) for i, p in enumerate(tail)]
        + [(p.line, 1, i, p) for i, p in enumerate(extras.items)],
        key=lambda r: (r[0], r[1], r[2]),
    )
    problems = state.problems
    problems.items = (problems.items + [r[3] for r in ranked])[: problems.cap]
    problems.errors += second.problems.errors + extras.errors + first_gap
    problems.warnings += second.problems.warnings + extras.warnings
    problems.suppressed = problems.errors + problems.warnings - len(problems.items)
    for key, count in second.counts.items():
        state.counts[key] += count
    state.unknown_types += second.unknown_types
    state.events += second.events
    state.lines = second.lines
    state.bytes += second.bytes
    return True


Outcome = Literal["joined", "redone"]


def validate_split(
    f: BinaryIO,
    state: ScanState,
    progress: Progress | None = None,
    *,
    at: int | None = None,
) -> Outcome | None:
    """Scan the open regular file `f` (at offset 0) into the fresh `state` with two processes.

    None: not started (`state` and `f` untouched; scan it in one pass). "joined": the child's
    half was joined. "redone": the parent scanned the second half itself after the join
    declined (the child's work was wasted, the result is the same). A read error propagates
    with `state` as far as it got. `at` forces the split at that byte offset (a line start;
    for the tests).
    """
    fd = f.fileno()
    size = os.fstat(fd).st_size
    head = os.pread(fd, _WINDOW, 0)
    probe = _shape_of(head, state.opts)
    if probe is None:
        return None
    if state.opts.profile is Profile.AUTO:
        lines = head.split(b"\n")[:-1][:_PROBE_LINES]
        found = first_object([x for x in lines if len(x) <= state.opts.max_line_bytes])
        if found is None:
            return None  # one pass decides
        state.opts = resolve_profile(state.opts, found)
        if state.opts.profile is Profile.UPSTREAM:
            state.life = None
    opts = state.opts
    shape, probe_end = probe
    offset = at if at is not None else _split_point(fd, size)
    if offset is None or not 0 < offset < size or offset < probe_end:
        return None
    if state.shape is None:
        state.shape = shape
        state.life = new_lifecycle(opts, state.problems, shape)
    life = state.life
    pid, read_end = _fork_second_half(fd, offset, opts, shape)
    try:
        scaled = None if progress is None else (lambda n: progress(n * size // offset))
        scan(state, LineReader(f, opts.max_line_bytes, limit=offset), scaled)
    except BaseException:
        _collect(pid, read_end, kill=True)
        raise
    # the assumptions the first half alone can refute: then do not wait for the child
    hopeless = life is not None and bool(life.turn_line or life.completed_line or not life.seen_any)
    half = _collect(pid, read_end, kill=hopeless)
    if half is not None and _merge(state, half, offset):
        return "joined"
    rest = None if progress is None else (lambda n: progress(offset + n))
    scan(state, LineReader(f, opts.max_line_bytes, first_line=state.lines + 1), rest)
    return "redone"
