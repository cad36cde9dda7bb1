"""The model-visible conversation of a session, kept beside its event log for `exec resume`.

ThreadEvents do not carry user prompts or the exact tool results the model saw, so the loop also
appends each message to `<session>/transcript.jsonl` (one JSON object per line, one write each).
Reading is tolerant: a torn or hand-edited line is skipped and reported, never fatal.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from vtcode.fsutil import open_append, write_all
from vtcode.messages import Message, ReasoningBlock, ToolCall
from vtcode.ownfile import read_own
from vtcode.redact import Redactor

TRANSCRIPT_NAME = "transcript.jsonl"
# What `exec resume` loads whole: far past any real conversation, short of a planted 2 GiB file.
TRANSCRIPT_MAX_BYTES = 256 << 20


def message_to_json(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls
        ]
    for key in ("tool_call_id", "name", "intent_id", "reasoning"):
        value = getattr(m, key)
        if value is not None:
            out[key] = value
    if m.images:
        out["images"] = m.images
    if m.reasoning_blocks:
        out["reasoning_blocks"] = [_block_to_json(b) for b in m.reasoning_blocks]
    return out


def _block_to_json(b: ReasoningBlock) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": b.kind}
    if b.text:
        out["text"] = b.text
    for key in ("signature", "data", "id"):
        value = getattr(b, key)
        if value is not None:
            out[key] = value
    if b.summary:
        out["summary"] = list(b.summary)
    return out


def _block_from_json(d: Any) -> ReasoningBlock:
    if not isinstance(d, dict) or d.get("kind") not in (
        "thinking",
        "redacted_thinking",
        "reasoning_item",
    ):
        raise ValueError("not a reasoning block with a known kind")

    def opt(key: str) -> str | None:
        value = d.get(key)
        return value if isinstance(value, str) else None

    return ReasoningBlock(
        kind=d["kind"],
        text=str(d.get("text", "")),
        signature=opt("signature"),
        data=opt("data"),
        id=opt("id"),
        summary=tuple(str(x) for x in d.get("summary") or ()),
    )


def message_from_json(d: Any) -> Message:
    if not isinstance(d, dict) or d.get("role") not in ("system", "user", "assistant", "tool"):
        raise ValueError("not a message object with a known role")
    calls = tuple(
        ToolCall(id=str(c["id"]), name=str(c["name"]), arguments=str(c.get("arguments", "")))
        for c in d.get("tool_calls") or ()
    )
    return Message(
        role=d["role"],
        content=str(d.get("content", "")),
        tool_calls=calls,
        tool_call_id=d.get("tool_call_id"),
        name=d.get("name"),
        intent_id=d.get("intent_id"),
        reasoning=d.get("reasoning"),
        images=int(d.get("images", 0) or 0),
        reasoning_blocks=tuple(_block_from_json(b) for b in d.get("reasoning_blocks") or ()),
    )


@dataclass(frozen=True, slots=True)
class LoadedTranscript:
    messages: list[Message]
    skipped_lines: list[int]


def load_transcript(path: Path) -> LoadedTranscript:
    """Every readable message of the transcript (missing file: empty)."""
    messages: list[Message] = []
    skipped: list[int] = []
    try:
        data = read_own(path, TRANSCRIPT_MAX_BYTES)
    except FileNotFoundError:
        return LoadedTranscript([], [])
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            messages.append(message_from_json(orjson.loads(line)))
        except (ValueError, KeyError, TypeError):
            skipped.append(n)
    return LoadedTranscript(messages, skipped)


class TranscriptWriter:
    """Appends messages; the caller holds the session lock (one writer per session)."""

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        self.path = path
        self.durable = durable
        self._fd = open_append(path)
        self._redactor = Redactor.from_environ()  # the run's secrets stay out of this file too
        # A torn last line (killed mid-write) would glue onto the next append: end it first.
        size = os.fstat(self._fd).st_size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            write_all(self._fd, b"\n")

    def append(self, message: Message) -> None:
        write_all(self._fd, self._redactor.encode(message_to_json(message)) + b"\n")

    def sync(self) -> None:
        if self.durable:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1
