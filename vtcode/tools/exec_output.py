"""What a command printed, as the model sees it: ANSI stripping, head/tail windows, previews.

Split from `exec_sessions` (one job per module): pure functions over bytes, no processes.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from vtcode.termtext import strip_sequences

DEFAULT_YIELD_MS = 1000
DEFAULT_MAX_OUTPUT_TOKENS = 10_000
MAX_OUTPUT_TOKENS = 50_000
DEFAULT_WAIT_SECONDS = 600
BYTES_PER_TOKEN = 4
SPOOL_THRESHOLD = 64 * 1024  # output beyond this goes to a spool file
SPOOLED_PREVIEW_CAP = 6 * 1024  # guide: spooled previews are capped at min(budget, 6 KiB)
UNREAD_CAP = MAX_OUTPUT_TOKENS * BYTES_PER_TOKEN + 16 * 1024  # per head and per tail
DRAIN_GRACE_SECS = 0.25  # after exit, how long a response waits for the pipe to reach EOF
KILL_GRACE_SECS = 2.0
STDIN_WRITE_TIMEOUT_SECS = 5.0
MAX_SESSIONS = 64
TRUNCATION_MARKER = "\n[Output truncated]"
BACKEND = "pipe"

_INSPECTION_COMMANDS = frozenset(
    {"ls", "cat", "head", "tail", "grep", "rg", "egrep", "fgrep", "find", "fd", "tree", "wc"}
    | {"du", "df", "stat", "file", "jq", "less", "more", "nl", "sort", "uniq", "cut", "awk"}
    | {"sed", "diff", "env", "printenv", "pwd", "which", "whoami", "ps"}
)
_INSPECTION_GIT = frozenset(
    {"log", "show", "diff", "status", "blame", "branch", "ls-files", "grep", "remote"}
)
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (colours, cursor moves, titles): the one definition in
    `vtcode.termtext`, which the terminal renderers use too."""
    return strip_sequences(text)


def is_inspection_command(command: str) -> bool:
    """Whether `command` reads rather than verifies or mutates (head+tail vs tail previews)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # leading VAR=value assignments
    if not words:
        return False
    prog = Path(words[0]).name
    if prog == "git":
        args = iter(words[1:])
        for word in args:
            if word in _GIT_VALUE_OPTIONS:
                next(args, None)  # `-C DIR`, `-c key=value`: skip the value too
            elif not word.startswith("-"):
                return word in _INSPECTION_GIT
        return False
    return prog in _INSPECTION_COMMANDS


def shell_argv(command: str) -> list[str]:
    """`bash -c COMMAND` when bash exists, else `sh -c COMMAND`.

    Not a login shell (`-l`), unlike Codex: a login profile costs ~250 ms per command here and
    can block outright (a profile that takes a lock, prompts, or waits on the network), which a
    headless harness must never do. Commands get vtcode's environment as
    `[shell_environment_policy]` filters it (`vtcode.tools.child_env`).
    """
    bash = shutil.which("bash")
    return [bash, "-c", command] if bash else ["/bin/sh", "-c", command]


def _head_lines(data: bytes, limit: int) -> bytes:
    """At most `limit` leading bytes, ending at a line end when one is in range."""
    if len(data) <= limit:
        return data
    cut = data.rfind(b"\n", 0, limit)
    return data[: cut + 1] if cut > 0 else _cut_utf8(data, limit)


def _tail_lines(data: bytes, limit: int) -> bytes:
    """At most `limit` trailing bytes, starting at a line start when one is in range."""
    if len(data) <= limit:
        return data
    start = len(data) - limit
    nl = data.find(b"\n", start - 1, len(data) - 1)  # `start - 1`: already at a line start?
    return data[nl + 1 :] if nl >= 0 else _tail_utf8(data, limit)


def _cut_utf8(data: bytes, limit: int) -> bytes:
    """The first `limit` bytes, backed off to a UTF-8 character boundary."""
    if len(data) <= limit:
        return data
    cut = limit
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut]


def _tail_utf8(data: bytes, limit: int) -> bytes:
    """The last `limit` bytes, moved forward to a UTF-8 character boundary."""
    if len(data) <= limit:
        return data
    start = len(data) - limit
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:]


class Unread:
    """Output not yet returned to the model: a bounded head, a bounded tail, a dropped count."""

    def __init__(self, cap: int = UNREAD_CAP) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.cap - len(self.head)
        if room > 0 and not self.tail and not self.dropped:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            excess = len(self.tail) - self.cap
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess

    def take(self) -> tuple[bytes, int, bytes]:
        out = (bytes(self.head), self.dropped, bytes(self.tail))
        self.head, self.tail, self.dropped = bytearray(), bytearray(), 0
        return out


@dataclass(frozen=True, slots=True)
class Preview:
    """The model-visible text of one response and how it was cut."""

    text: str
    truncated: bool
    window_bytes: int


def build_preview(
    head: bytes,
    dropped: int,
    tail: bytes,
    *,
    budget: int,
    spooled: bool,
    inspection: bool,
) -> Preview:
    """Turn one window of raw output into the bounded, ANSI-stripped preview.

    Unspooled (upstream rule): the first `budget` bytes + "\\n[Output truncated]". Spooled
    (guide rule): at most min(budget, 6 KiB), head+tail for inspection commands (the start and
    the end of a listing both matter), only the tail for everything else (errors come last).
    """
    window = len(head) + dropped + len(tail)
    clean_head = strip_ansi(head.decode("utf-8", "replace")).encode()
    clean_tail = strip_ansi(tail.decode("utf-8", "replace")).encode()
    if not dropped:
        clean = clean_head + clean_tail
        if len(clean) <= budget:
            return Preview(clean.decode("utf-8", "replace"), False, window)
        clean_head, clean_tail = clean, clean
    if not spooled:
        text = _cut_utf8(clean_head, budget).decode("utf-8", "replace") + TRUNCATION_MARKER
        return Preview(text, True, window)
    cap = min(budget, SPOOLED_PREVIEW_CAP)
    if inspection:
        half = cap // 2
        first = _head_lines(clean_head, half).decode("utf-8", "replace")
        last = _tail_lines(clean_tail, cap - half).decode("utf-8", "replace")
        text = f"{first}\n[... output omitted; full output in the spool file ...]\n{last}"
    else:
        last = _tail_lines(clean_tail, cap).decode("utf-8", "replace")
        text = f"[... earlier output omitted; full output in the spool file ...]\n{last}"
    return Preview(text + TRUNCATION_MARKER, True, window)
