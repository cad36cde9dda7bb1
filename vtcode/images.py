"""Reading the images a user attaches (`exec -i FILE`): type by magic bytes, size and count caps.

The type is read from the file's first bytes, never from its name: a `.png` that holds a JPEG is
sent as the JPEG it is, and a text file named `x.png` is refused before any request. The caps are
the strictest of the providers vtcode speaks (Anthropic: 5 MB of image data per image; OpenAI
allows 20 MB), so an image vtcode accepts is one every provider accepts; the count cap keeps a
request far below every provider's payload limit. Every refusal is a located exit-2 error.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Literal

from vtcode.errors import UsageError
from vtcode.messages import Image
from vtcode.ownfile import read_fd

__all__ = ["MAX_IMAGES", "MAX_IMAGE_BYTES", "ImageType", "load_image", "load_images", "sniff"]

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # per image, the file as read (Anthropic's per-image limit)
MAX_IMAGES = 20  # per message

ImageType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
SUPPORTED = "PNG, JPEG, GIF or WebP"


def sniff(head: bytes) -> ImageType | None:
    """The image type the bytes start with (PNG, JPEG, GIF, WebP), or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def load_image(path: Path, *, option: str = "-i") -> Image:
    """The image at `path`; a missing, unreadable, non-image or oversized file is exit 2."""
    where = f"{option} {path}"
    try:
        data = _read_regular(path, MAX_IMAGE_BYTES + 1)
    except FileNotFoundError:
        raise UsageError("no such file", location=where) from None
    except IsADirectoryError:
        raise UsageError("a folder, not an image file", location=where) from None
    except OSError as e:
        why = "permission denied" if e.errno == errno.EACCES else (e.strerror or str(e))
        raise UsageError(f"cannot read the image: {why}", location=where) from None
    if len(data) > MAX_IMAGE_BYTES:
        raise UsageError(
            f"the image is larger than the limit of {MAX_IMAGE_BYTES // (1024 * 1024)} MiB",
            location=where,
            hint="scale it down or crop it (the limit is the strictest provider's)",
        )
    kind = sniff(data[:16])
    if kind is None:
        raise UsageError(
            f"not a {SUPPORTED} image (its first bytes are no image signature)",
            location=where,
            hint="the type is read from the file's content, not its name",
        )
    return Image(media_type=kind, data=data)


def load_images(paths: list[Path] | tuple[Path, ...], *, option: str = "-i") -> tuple[Image, ...]:
    """Every image in order, within the count cap."""
    if len(paths) > MAX_IMAGES:
        raise UsageError(
            f"{len(paths)} images given; at most {MAX_IMAGES} go with one message",
            location=option,
        )
    return tuple(load_image(p, option=option) for p in paths)


def _read_regular(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of a regular file (a link to one is the user's to give); a FIFO or
    device is refused without blocking on it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder")
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return read_fd(fd, limit)
    finally:
        os.close(fd)
