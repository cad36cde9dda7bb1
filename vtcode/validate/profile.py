"""`--profile auto` (the default): vtcode's rules on vtcode's logs, upstream's verdict on others.

A log "carries vtcode's envelope" when its first JSON object line is wrapped and has vtcode's
`seq` or `ts` (what `events.jsonl` lines always have). Such a log gets every rule group
(shape, strict, envelope, lifecycle); any other log (raw lines, upstream's bare
`{schema_version, event}` envelope) gets upstream's reader verdict on each line and nothing
else, as `--profile upstream` does. `--strict` asks for vtcode's stricter rules by name, so it
keeps them on every log. A log with no object line in its first lines keeps vtcode's rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import orjson

from vtcode.validate.lines import TOO_LONG, LineReader
from vtcode.validate.report import Profile, ValidateOptions

__all__ = ["ReplayReader", "carries_vtcode_envelope", "resolve_in_stream", "resolve_profile"]

_PROBE_RUNS = 8  # blocks (of up to 1 MiB) read before giving up on finding an object line


def carries_vtcode_envelope(obj: Any) -> bool:
    return type(obj) is dict and "event" in obj and ("seq" in obj or "ts" in obj)


def resolve_profile(opts: ValidateOptions, first_object: Any) -> ValidateOptions:
    """`opts` with `auto` replaced by the profile that applies to a log starting so."""
    if opts.profile is not Profile.AUTO:
        return opts
    vtcode = opts.strict or first_object is None or carries_vtcode_envelope(first_object)
    return dataclasses.replace(opts, profile=Profile.VTCODE if vtcode else Profile.UPSTREAM)


def first_object(lines: list[bytes] | list[bytes | bytearray]) -> Any:
    for data in lines:
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            continue
        if type(obj) is dict:
            return obj
    return None


class ReplayReader:
    """A `LineReader` whose first runs were already read (to resolve the profile)."""

    def __init__(self, reader: LineReader, head: list[tuple[int, list[bytes], int]]) -> None:
        self._reader = reader
        self._head = head
        self._rest: Iterator[tuple[int, list[bytes], int]] | None = None

    @property
    def bytes_read(self) -> int:
        return self._reader.bytes_read

    @property
    def long_line_size(self) -> int:
        return self._reader.long_line_size

    def bind(self, rest: Iterator[tuple[int, list[bytes], int]]) -> None:
        self._rest = rest

    def runs(self) -> Iterator[tuple[int, list[bytes], int]]:
        yield from self._head
        self._head = []
        if self._rest is not None:
            yield from self._rest


def resolve_in_stream(opts: ValidateOptions, reader: LineReader) -> tuple[ValidateOptions, Any]:
    """Read runs until the first object line, resolve `auto`; returns (options, replay reader)."""
    runs = reader.runs()
    head: list[tuple[int, list[bytes], int]] = []
    found = None
    for run in runs:
        head.append(run)
        if run[2] != TOO_LONG:
            found = first_object(run[1])
        if found is not None or len(head) >= _PROBE_RUNS:
            break
    replay = ReplayReader(reader, head)
    replay.bind(runs)
    return resolve_profile(opts, found), replay
