"""Facts the event contract does not carry, kept beside a session's log for people to read.

`.vtcode/sessions/<id>/artifacts/`:

- `runs.jsonl`: one line per run (the first and every `exec resume`): the prompt it was given,
  the provider and model it started with, and the seq its `thread.started` gets. Events carry
  none of these (ThreadEvent 0.11.0 has no field for them), and the transcript loses prompts to
  compaction.
- `prompts.jsonl`: one line per message a user typed in chat (`ts`, `prompt`), so the page can
  show each turn's request (a chat run has no single prompt).
- `diffs.jsonl`: one line per file a mutating tool wrote, with a unified diff of what it changed,
  recorded at write time (the only moment the old content is known: `file_change` items carry a
  path and a kind, and a file overwritten by `write_file` leaves no trace of what it held).

Both are redacted like every file beside the log (`vtcode.redact`) and written by the process
that holds the session's lock, one whole line per write, so a reader never sees half a record; a
crash can at most lose a line, and the page then shows "no diff recorded" instead of a wrong one
(it matches a diff to its `file_change` item by path and time window, never by position).
Nothing is written for a session folder that does not exist (tools used outside a session,
tests), and a failure to write never fails the tool or the run.
"""

from __future__ import annotations

import contextlib
import difflib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from vtcode.clock import rfc3339
from vtcode.errors import InvalidIdError
from vtcode.fsutil import append_line_locked, ensure_private_dir, read_regular
from vtcode.redact import Redactor
from vtcode.store.layout import is_real_dir, session_dir

ARTIFACTS_DIR = "artifacts"
RUNS = "runs.jsonl"
DIFFS = "diffs.jsonl"
PROMPTS = "prompts.jsonl"

DIFF_INPUT_LIMIT = 1024 * 1024  # bytes per side: difflib is quadratic in the worst case
DIFF_TEXT_LIMIT = 256 * 1024  # characters of one recorded diff
PROMPT_LIMIT = 64 * 1024  # characters of one recorded prompt
READ_LIMIT = 64 * 1024 * 1024  # a hostile artifacts file is read no further
NO_NEWLINE = "\\ No newline at end of file"


@dataclass(frozen=True, slots=True)
class InstructionRecord:
    """One instruction file a run used (see vtcode.orient.instructions)."""

    path: str
    label: str
    scope: str  # user | project
    bytes: int
    used_bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class RunRecord:
    """How one run of a session started."""

    ts: str
    first_seq: int  # the seq of this run's `thread.started`
    prompt: str | None
    provider: str | None
    model: str | None
    # The replay script the run played (a shipped name or an absolute path): `exec resume`
    # without --script plays it again instead of the default script.
    script: str | None = None
    # The instruction files (AGENTS.md) this run's system prompt holds, and the sha256 of that
    # section: `sessions show` lists them, and a changed digest between runs explains a new
    # request segment after `exec resume`.
    instructions: list[InstructionRecord] = field(default_factory=list)
    instructions_digest: str | None = None


@dataclass(frozen=True, slots=True)
class PromptRecord:
    """A message the user typed, when (before its turn starts)."""

    ts: str
    prompt: str


@dataclass(frozen=True, slots=True)
class DiffRecord:
    """What one write did to one file; `diff` is None when no text diff could be made (`note`)."""

    ts: str
    path: str
    kind: str
    diff: str | None
    note: str | None = None


def _dir(workspace: Path, session_id: str) -> Path | None:
    try:
        folder = session_dir(workspace, session_id)
    except InvalidIdError:
        return None
    return folder if is_real_dir(folder) else None


def _append(
    workspace: Path, session_id: str, name: str, record: RunRecord | DiffRecord | PromptRecord
) -> None:
    folder = _dir(workspace, session_id)
    if folder is None:
        return
    line = Redactor.from_environ().encode(asdict(record)) + b"\n"  # no secret lands here either
    with contextlib.suppress(OSError, ValueError):
        # A run record is fsynced (resume reads its script back); a diff or prompt record is
        # not: the tool's own write was, and losing the record to a power cut only means "no
        # diff recorded" on the page (bench/file_diffs.py: the fsync was most of the cost)
        path = ensure_private_dir(folder / ARTIFACTS_DIR) / name
        append_line_locked(path, line, durable=isinstance(record, RunRecord))


def record_run(
    workspace: Path,
    session_id: str,
    *,
    first_seq: int,
    prompt: str | None,
    provider: str | None,
    model: str | None,
    script: str | None = None,
    instructions: list[InstructionRecord] | None = None,
    instructions_digest: str | None = None,
) -> None:
    """Note how a run starts (called once the session's writer is open, before its first event)."""
    clipped = None if prompt is None else _clip(prompt)
    record = RunRecord(
        rfc3339(),
        first_seq,
        clipped,
        provider,
        model,
        script,
        instructions=list(instructions or []),
        instructions_digest=instructions_digest,
    )
    _append(workspace, session_id, RUNS, record)


def _clip(prompt: str) -> str:
    if len(prompt) <= PROMPT_LIMIT:
        return prompt
    return prompt[:PROMPT_LIMIT] + f"\n… ({len(prompt) - PROMPT_LIMIT:,} more characters)"


def record_prompt(workspace: Path, session_id: str, prompt: str) -> None:
    """Note a message the user typed (called before it is handed to the loop)."""
    _append(workspace, session_id, PROMPTS, PromptRecord(rfc3339(), _clip(prompt)))


def unified_diff(path: str, old: bytes | None, new: bytes | None) -> tuple[str | None, str | None]:
    """(diff, note): a `git diff`-style unified diff of one file, or why there is none."""
    sides = [b"" if side is None else side for side in (old, new)]
    if any(len(side) > DIFF_INPUT_LIMIT for side in sides):
        return None, f"too large for a diff ({max(len(s) for s in sides):,} bytes)"
    try:
        before, after = (side.decode("utf-8") for side in sides)
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    if b"\x00" in sides[0] or b"\x00" in sides[1]:
        return None, "binary content"
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile="/dev/null" if new is None else f"b/{path}",
    )
    text = "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}\n" for line in lines)
    if len(text) > DIFF_TEXT_LIMIT:
        more = len(text) - DIFF_TEXT_LIMIT
        text = text[:DIFF_TEXT_LIMIT] + f"\n… ({more:,} more characters of diff)\n"
    return text, None


def record_diff(
    workspace: Path,
    session_id: str,
    path: str,
    kind: str,
    old: bytes | None,
    new: bytes | None,
    *,
    note: str | None = None,
) -> None:
    """Note what a write did to `path` (old None: created; new None: deleted); with `note`, no
    diff is made and the note says why (the old content could not be read)."""
    if _dir(workspace, session_id) is None:
        return  # no session to record into: do not even compute the diff
    diff: str | None = None
    if note is None:
        diff, note = unified_diff(path, old, new)
    _append(workspace, session_id, DIFFS, DiffRecord(rfc3339(), path, kind, diff, note))


def _lines(workspace: Path, session_id: str, name: str) -> Iterator[dict[str, object]]:
    folder = _dir(workspace, session_id)
    if folder is None:
        return
    try:
        data = read_regular(folder / ARTIFACTS_DIR / name, READ_LIMIT)
    except OSError:
        return
    for raw in data.splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            continue  # a torn last line: the record is lost, the others stand
        if isinstance(value, dict):
            yield value


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def read_runs(workspace: Path, session_id: str) -> list[RunRecord]:
    """The session's run records, in order (malformed lines skipped)."""
    out: list[RunRecord] = []
    for v in _lines(workspace, session_id, RUNS):
        seq, ts = v.get("first_seq"), _str(v.get("ts"))
        if isinstance(seq, int) and not isinstance(seq, bool) and ts is not None:
            prompt, provider, model, script = (
                _str(v.get(k)) for k in ("prompt", "provider", "model", "script")
            )
            out.append(
                RunRecord(
                    ts,
                    seq,
                    prompt,
                    provider,
                    model,
                    script,
                    instructions=_instruction_records(v.get("instructions")),
                    instructions_digest=_str(v.get("instructions_digest")),
                )
            )
    return out


def _instruction_records(value: object) -> list[InstructionRecord]:
    """The instruction files of a run record (entries of the wrong shape skipped)."""
    out: list[InstructionRecord] = []
    for v in value if isinstance(value, list) else []:
        if not isinstance(v, dict):
            continue
        path, label, scope, sha = (_str(v.get(k)) for k in ("path", "label", "scope", "sha256"))
        size, used = v.get("bytes"), v.get("used_bytes")
        if path is None or label is None or scope is None or sha is None:
            continue
        if not (isinstance(size, int) and isinstance(used, int)):
            continue
        out.append(InstructionRecord(path, label, scope, size, used, sha))
    return out


def read_diffs(workspace: Path, session_id: str) -> list[DiffRecord]:
    """The session's diff records, in order (malformed lines skipped)."""
    out: list[DiffRecord] = []
    for v in _lines(workspace, session_id, DIFFS):
        ts, path, kind = _str(v.get("ts")), _str(v.get("path")), _str(v.get("kind"))
        if ts is not None and path is not None and kind is not None:
            out.append(DiffRecord(ts, path, kind, _str(v.get("diff")), _str(v.get("note"))))
    return out


def read_prompts(workspace: Path, session_id: str) -> list[PromptRecord]:
    """The session's typed prompts, in order (malformed lines skipped)."""
    out: list[PromptRecord] = []
    for v in _lines(workspace, session_id, PROMPTS):
        ts, prompt = _str(v.get("ts")), _str(v.get("prompt"))
        if ts is not None and prompt is not None:
            out.append(PromptRecord(ts, prompt))
    return out
