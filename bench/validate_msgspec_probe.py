"""Probe for issue 14 item 3: what would typed decoding with msgspec buy `vtcode validate`?

Not product code and not a test: msgspec is not a dependency (install it next to the project,
e.g. `pip install --target /tmp/ms msgspec` and run with `PYTHONPATH=/tmp/ms`). The structs below
are a hand-written approximation of the wire types that bench/validate.py writes (tagged unions,
strict ints, unknown fields refused), just precise enough to decode every line of that log; they
are NOT the published schema (no patterns, bounds or enums) and must not be used to validate.
The point is the per-line cost of the candidate hot path against the same floors bench/validate.py
reports, measured in one process:

  * json.loads per line (the floor), orjson.loads;
  * msgspec typed decode of the whole envelope (what would replace orjson + jsonschema-rs);
  * that decode plus the current duplicate-key screen (orjson re-encode compared to the bytes);
  * that decode plus a msgspec re-encode compared to the bytes (the screen a typed reader could
    use instead; it only holds if the structs' field order and omitted defaults match the writer
    exactly, which these approximations do not: the row says how many lines round-trip).

msgspec keeps the LAST value of a repeated key without complaint (serde_json refuses), so a typed
fast path still needs a duplicate-key screen.

Usage: PYTHONPATH=/tmp/ms python bench/validate_msgspec_probe.py [--lines N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson
from msgspec import Struct

sys.path.insert(0, str(Path(__file__).parent))
from validate import build_log  # the same log bench/validate.py measures

_I = {"forbid_unknown_fields": True, "tag_field": "type", "omit_defaults": True}
_E = {"forbid_unknown_fields": True, "tag_field": "type"}


class Reasoning(Struct, tag="reasoning", **_I):  # type: ignore[call-arg]
    id: str
    text: str
    stage: str | None = None


class AgentMessage(Struct, tag="agent_message", **_I):  # type: ignore[call-arg]
    id: str
    text: str


class ToolInvocation(Struct, tag="tool_invocation", **_I):  # type: ignore[call-arg]
    id: str
    tool_name: str
    arguments: Any = None
    tool_call_id: str | None = None
    status: str = "in_progress"
    outcome: str | None = None


class CommandExecution(Struct, tag="command_execution", **_I):  # type: ignore[call-arg]
    id: str
    command: str
    arguments: Any = None
    aggregated_output: str = ""
    exit_code: int | None = None
    status: str = "in_progress"


class ToolOutput(Struct, tag="tool_output", **_I):  # type: ignore[call-arg]
    id: str
    call_id: str
    tool_call_id: str | None = None
    output: str = ""
    exit_code: int | None = None
    status: str = "completed"


class Change(Struct, forbid_unknown_fields=True):
    path: str
    kind: str


class FileChange(Struct, tag="file_change", **_I):  # type: ignore[call-arg]
    id: str
    changes: list[Change]
    status: str


class Harness(Struct, tag="harness", **_I):  # type: ignore[call-arg]
    id: str
    event: str
    command: str | None = None
    exit_code: int | None = None
    duration_ms: int | None = None


Item = (
    Reasoning | AgentMessage | ToolInvocation | CommandExecution | ToolOutput | FileChange | Harness
)


class Usage(Struct, forbid_unknown_fields=True):
    input_tokens: int
    cached_input_tokens: int = 0
    cache_creation_tokens: int = 0
    output_tokens: int = 0


class Started(Struct, tag="item.started", **_E):  # type: ignore[call-arg]
    item: Item


class Updated(Struct, tag="item.updated", **_E):  # type: ignore[call-arg]
    item: Item


class Completed(Struct, tag="item.completed", **_E):  # type: ignore[call-arg]
    item: Item


class TurnStarted(Struct, tag="turn.started", **_E):  # type: ignore[call-arg]
    pass


class TurnCompleted(Struct, tag="turn.completed", **_E):  # type: ignore[call-arg]
    usage: Usage


class ThreadStarted(Struct, tag="thread.started", **_E):  # type: ignore[call-arg]
    thread_id: str


class Compact(Struct, tag="thread.compact_boundary", **_E):  # type: ignore[call-arg]
    thread_id: str
    trigger: str
    mode: str
    original_message_count: int
    compacted_message_count: int
    previous_segment_id: str | None = None
    new_segment_id: str | None = None


class ThreadCompleted(Struct, tag="thread.completed", **_E):  # type: ignore[call-arg]
    thread_id: str
    session_id: str
    subtype: str
    outcome_code: str
    result: str | None = None
    stop_reason: str | None = None
    usage: Usage | None = None
    total_cost_usd: Any = None
    num_turns: Any = None
    duration_ms: Any = None


Event = (
    Started
    | Updated
    | Completed
    | TurnStarted
    | TurnCompleted
    | ThreadStarted
    | Compact
    | ThreadCompleted
)


class Envelope(Struct, forbid_unknown_fields=True):
    schema_version: str
    event: Event
    seq: int
    ts: str


def best(lines: list[bytes], fn: Callable[[bytes], object], repeat: int) -> float:
    out = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for line in lines:
            fn(line)
        out = min(out, time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vtcode-probe-") as tmp:
        path = Path(tmp) / "events.jsonl"
        build_log(path, args.lines)
        lines = path.read_bytes().splitlines(keepends=True)
    decode = msgspec.json.Decoder(Envelope).decode
    encode = msgspec.json.Encoder().encode
    dumps, loads, nl = orjson.dumps, orjson.loads, orjson.OPT_APPEND_NEWLINE
    for line in lines:  # every line must decode, or the timings measure error paths
        decode(line)

    def with_orjson_screen(line: bytes) -> bool:
        decode(line)
        return dumps(loads(line), option=nl) == line

    def with_msgspec_screen(line: bytes) -> bool:
        return encode(decode(line)) + b"\n" == line

    same = sum(with_msgspec_screen(line) for line in lines)
    floor = best(lines, json.loads, args.repeat)
    rows = [
        ("json.loads per line (floor)", floor),
        ("orjson.loads per line", best(lines, orjson.loads, args.repeat)),
        ("msgspec typed decode (envelope, tagged unions)", best(lines, decode, args.repeat)),
        ("typed decode + orjson re-encode screen", best(lines, with_orjson_screen, args.repeat)),
        (
            f"typed decode + msgspec re-encode screen ({same:,}/{len(lines):,} round-trip)",
            best(lines, with_msgspec_screen, args.repeat),
        ),
    ]
    n = len(lines)
    width = max(len(r[0]) for r in rows)
    print(f"{n:,} lines, msgspec {msgspec.__version__}")
    for name, secs in rows:
        print(
            f"{name:<{width}}  {n / secs:>11,.0f} lines/s  {secs / n * 1e6:5.2f} us/line  "
            f"{floor / secs:5.2f}x floor"
        )


if __name__ == "__main__":
    main()
