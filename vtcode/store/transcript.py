"""The model-visible conversation of a session, kept beside its event log for `exec resume`.

ThreadEvents do not carry user prompts or the exact tool results the model saw, so the loop also
appends each message to `<session>/transcript.jsonl` (one JSON object per line, one write each).
Reading is tolerant: a torn or hand-edited line is skipped and reported, never fatal.

Images a user attached (`exec -i`) are not inlined: each is written once, before the line that
names it, as `images/<sha256>.<ext>` in the session folder, and the line keeps `{media_type,
sha256, path}`. Loading reads the file back and checks its digest; a missing or altered image
makes its line unreadable (skipped and reported like a torn line), never a different image sent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from vtcode.fsutil import atomic_write_bytes, ensure_private_dir, open_append, write_all
from vtcode.images import MAX_IMAGE_BYTES, sniff
from vtcode.messages import Image, Message, ReasoningBlock, ToolCall
from vtcode.ownfile import read_own
from vtcode.redact import Redactor

TRANSCRIPT_NAME = "transcript.jsonl"
# What `exec resume` loads whole: far past any real conversation, short of a planted 2 GiB file.
TRANSCRIPT_MAX_BYTES = 256 << 20
IMAGES_DIR = "images"  # beside the transcript: <session>/images/<sha256>.<ext>


def image_name(image: Image) -> str:
    """The image's file name in the session's images folder (content-addressed)."""
    return f"{image.sha256}.{image.extension}"


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
        out["images"] = [
            {
                "media_type": i.media_type,
                "sha256": i.sha256,
                "path": f"{IMAGES_DIR}/{image_name(i)}",
            }
            for i in m.images
        ]
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


def _image_from_json(d: Any, base: Path | None) -> Image:
    """The image a line names, read back from the session folder and checked by digest."""
    if not isinstance(d, dict) or base is None:
        raise ValueError("an image reference needs the session folder")
    digest = d.get("sha256")
    if not isinstance(digest, str) or len(digest) != 64 or digest.strip("0123456789abcdef"):
        raise ValueError("an image reference without a sha256")
    names = list((base / IMAGES_DIR).glob(f"{digest}.*"))
    if len(names) != 1:
        raise ValueError(f"image {digest} is missing from the session")
    data = read_own(names[0], MAX_IMAGE_BYTES)
    kind = sniff(data[:16])
    image = Image(media_type=kind, data=data) if kind is not None else None
    if image is None or image.sha256 != digest:
        raise ValueError(f"image {digest} was altered")
    return image


def message_from_json(d: Any, base: Path | None = None) -> Message:
    """A transcript line as a message; `base` is the session folder its images are read from."""
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
        images=tuple(_image_from_json(i, base) for i in d.get("images") or ()),
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
            messages.append(message_from_json(orjson.loads(line), path.parent))
        except (ValueError, KeyError, TypeError, OSError):
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
        for image in message.images:  # the bytes first: a line never names a file not written
            self._keep(image)
        write_all(self._fd, self._redactor.encode(message_to_json(message)) + b"\n")

    def _keep(self, image: Image) -> None:
        folder = ensure_private_dir(self.path.parent / IMAGES_DIR)
        target = folder / image_name(image)
        if not target.exists():
            atomic_write_bytes(target, image.data, durable=self.durable)

    def sync(self) -> None:
        if self.durable:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1
