"""A small pure-Python PNG reader for checking Chromium screenshots (no Pillow needed), and its
tests: a round trip through every PNG row filter, so the screenshot checks rest on a decoder
that is itself checked.
"""

from __future__ import annotations

import dataclasses
import struct
import zlib

import pytest

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel (8-bit only)


@dataclasses.dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]  # unfiltered scanlines

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        row, c = self.rows[y], self.channels
        if c < 3:
            v = row[x * c]
            return (v, v, v)
        return (row[x * c], row[x * c + 1], row[x * c + 2])

    def count(self, rgb: tuple[int, int, int], *, tolerance: int = 0) -> list[tuple[int, int]]:
        """Every (x, y) whose colour is within `tolerance` of `rgb` on each channel."""
        tables = [bytes(int(abs(v - want) <= tolerance) for v in range(256)) for want in rgb]
        return [(x, y) for y in range(self.height) for x in self._matches(y, tables)]

    def _matches(self, y: int, tables: list[bytes]) -> list[int]:
        """The x of each pixel of row `y` whose every channel maps to 1 in its table.

        Each channel's bytes (a strided slice) go through its table, and the three results are
        ANDed as one big integer: C speed. A per-pixel Python loop took 28 s of one
        1280x3600 screenshot's check (2026-12-07)."""
        row, c = self.rows[y], self.channels
        hit = -1
        for k, table in enumerate(tables):
            plane = row[k::c] if c >= 3 else row[0::c]
            hit &= int.from_bytes(plane.translate(table), "big")
        flags = hit.to_bytes(self.width, "big")
        out, start = [], 0
        while (x := flags.find(1, start)) != -1:
            out.append(x)
            start = x + 1
        return out


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _add_bytes(a: int, b: int, low: int, high: int) -> int:
    """Byte-wise (a + b) mod 256 of two packed rows at once (SWAR: no carry between bytes)."""
    return ((a & low) + (b & low)) ^ ((a ^ b) & high)


def _unfilter(kind: int, line: bytes, prev: bytes, bpp: int) -> bytes:
    n = len(line)
    if kind == 0:
        return line
    if kind in (1, 2):
        low = int.from_bytes(b"\x7f" * n, "big")
        high = int.from_bytes(b"\x80" * n, "big")
        x = int.from_bytes(line, "big")
        if kind == 2:  # Up: one packed add
            return _add_bytes(x, int.from_bytes(prev, "big"), low, high).to_bytes(n, "big")
        # Sub: a prefix sum per channel, as a log-step scan of packed adds
        shift = bpp
        while shift < n:
            x = _add_bytes(x, x >> (8 * shift), low, high)
            shift *= 2
        return x.to_bytes(n, "big")
    out = bytearray(line)
    if kind == 3:  # Average
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + ((left + prev[i]) >> 1)) & 0xFF
    elif kind == 4:  # Paeth
        for i in range(n):
            if i >= bpp:
                a, c = out[i - bpp], prev[i - bpp]
            else:
                a = c = 0
            b = prev[i]
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - c - c)
            out[i] = (out[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    else:
        raise ValueError(f"unknown PNG filter type {kind}")
    return bytes(out)


def read_png(data: bytes) -> Image:
    """Decode an 8-bit, non-interlaced PNG (what Chromium writes)."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG file")
    pos, idat = len(SIGNATURE), []
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace or ctype not in CHANNELS:
                raise ValueError(f"unsupported PNG (depth {depth}, type {ctype}, {interlace})")
            channels = CHANNELS[ctype]
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = _unfilter(raw[start], raw[start + 1 : start + 1 + stride], prev, channels)
        rows.append(line)
        prev = line
    return Image(width, height, channels, rows)


# ---- an encoder for the round-trip test only ---------------------------------------------


def _filter(kind: int, line: bytes, prev: bytes, bpp: int) -> bytes:
    out = bytearray(len(line))
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up_left = prev[i - bpp] if i >= bpp else 0
        pred = [0, left, prev[i], (left + prev[i]) >> 1, _paeth(left, prev[i], up_left)][kind]
        out[i] = (line[i] - pred) & 0xFF
    return bytes(out)


def write_png(width: int, height: int, rgba_rows: list[bytes], filters: list[int]) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    prev, raw = bytes(width * 4), bytearray()
    for row, kind in zip(rgba_rows, filters, strict=True):
        raw.append(kind)
        raw += _filter(kind, row, prev, 4)
        prev = row
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        SIGNATURE
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(bytes(raw)))
        + chunk(b"IEND", b"")
    )


def _pattern(width: int, height: int) -> list[bytes]:
    return [
        bytes(
            v
            for x in range(width)
            for v in ((x * 37 + y * 11) & 0xFF, (x * y) & 0xFF, (255 - x * 5) & 0xFF, 255)
        )
        for y in range(height)
    ]


@pytest.mark.parametrize("kind", [0, 1, 2, 3, 4])
def test_every_filter_round_trips(kind: int) -> None:
    rows = _pattern(17, 6)
    img = read_png(write_png(17, 6, rows, [kind] * 6))
    assert (img.width, img.height, img.channels) == (17, 6, 4)
    assert img.rows == rows


def test_mixed_filters_and_colour_search() -> None:
    rows = _pattern(9, 10)
    img = read_png(write_png(9, 10, rows, [0, 1, 2, 3, 4, 4, 3, 2, 1, 0]))
    assert img.rows == rows
    target = img.pixel(4, 7)
    assert (4, 7) in img.count(target)
    assert all(img.pixel(x, y) == target for x, y in img.count(target))


@pytest.mark.parametrize("tolerance", [0, 1, 8, 40, 255])
def test_colour_search_within_a_tolerance_is_the_per_pixel_rule(tolerance: int) -> None:
    rows = _pattern(23, 9)
    img = read_png(write_png(23, 9, rows, [0, 1, 2, 3, 4, 4, 3, 2, 1]))
    for target in (img.pixel(3, 4), img.pixel(22, 8), (0, 0, 0), (255, 128, 7)):
        expected = [
            (x, y)
            for y in range(9)
            for x in range(23)
            if all(abs(a - b) <= tolerance for a, b in zip(img.pixel(x, y), target, strict=True))
        ]
        assert img.count(target, tolerance=tolerance) == expected
    grey = Image(4, 1, 1, [bytes([10, 20, 30, 200])])
    assert grey.count((20, 20, 20), tolerance=10) == [(0, 0), (1, 0), (2, 0)]


def test_not_a_png_is_refused() -> None:
    with pytest.raises(ValueError, match="not a PNG"):
        read_png(b"GIF89a")
