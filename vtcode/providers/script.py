"""The replay script format: TOML model turns that drive the real loop deterministically.

One set of dataclasses is the format: `parse_script` reads a file with `tomllib` and validates it
into them (every error located as file:line:col plus the key path), `dump_script` writes them back
(recording uses it), and `vtcode.schemagen` publishes them as the `replay-script` schema. Unknown
keys are errors (with a did-you-mean) so a typo never silently turns into a default.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson

from vtcode.config.provider_model import Price
from vtcode.errors import UsageError
from vtcode.jsontypes import U64, Doc, IntRange
from vtcode.tomlcheck import Locator, PathKey, decode_toml

__all__ = [
    "MAX_SCRIPT_BYTES",
    "REPLAY_SCRIPT_SCHEMA_VERSION",
    "FailMode",
    "ReplayScript",
    "ReplayScriptError",
    "ScriptPricing",
    "ScriptProviderInfo",
    "ScriptSummary",
    "ScriptToolCall",
    "ScriptTurn",
    "ScriptUsage",
    "load_script",
    "parse_script",
    "resolve_script",
    "scripts_dir",
    "shipped_scripts",
]

REPLAY_SCRIPT_SCHEMA_VERSION = 1
MAX_SCRIPT_BYTES = 16 * 1024 * 1024  # a script is test data; anything larger is a mistake
DEFAULT_SCRIPT = "default"

FailMode = Literal["transient", "fatal", "context_length"]


class ReplayScriptError(UsageError):
    """A replay script cannot be found, read or validated (exit 2, located message)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptPricing:
    """USD per million tokens; cached input and cache writes fall back to the input price."""

    input_per_mtok: Annotated[Price, Doc("USD per million uncached input tokens")]
    output_per_mtok: Annotated[Price, Doc("USD per million output tokens")]
    cached_input_per_mtok: Price | None = None
    cache_write_per_mtok: Price | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptProviderInfo:
    """`[provider]`: what the replay provider reports about itself (all optional)."""

    model: str | None = None
    context_window: Annotated[
        int | None, IntRange(1, 2**63 - 1), Doc("provider capacity in tokens")
    ] = None
    pricing: Annotated[ScriptPricing | None, Doc("absent: pricing unknown")] = None
    enforce_context_window: Annotated[
        bool,
        Doc("fail with context_length when a request's estimated size exceeds context_window"),
    ] = False
    images: Annotated[
        bool,
        Doc("the scripted model accepts images (`exec -i`); false: a run with images is exit 2"),
    ] = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptUsage:
    """Reported token usage; an absent input/output count is estimated (ceil(bytes / 4))."""

    input_tokens: Annotated[U64 | None, Doc("TOTAL prompt tokens incl. cached")] = None
    output_tokens: U64 | None = None
    cached_input_tokens: U64 | None = None
    cache_creation_tokens: U64 | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptToolCall:
    """`[[turn.tool_calls]]`: one tool call; `arguments_json` scripts raw (even invalid) JSON."""

    name: str
    arguments: Annotated[dict[str, Any] | None, Doc("a table, sent as compact JSON")] = None
    arguments_json: Annotated[str | None, Doc("raw argument text, sent verbatim")] = None
    id: Annotated[str | None, Doc("default: call_<n>, n counting every call of the script")] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptTurn:
    """`[[turn]]`: one model response (or one injected failure), consumed in order."""

    reasoning: str | None = None
    text: str | None = None
    tool_calls: list[ScriptToolCall] = field(default_factory=list)
    stop_reason: Annotated[
        str | None, Doc("default: tool_calls when tool_calls are present, else end_turn")
    ] = None
    usage: ScriptUsage | None = None
    fail: Annotated[FailMode | None, Doc("an injected provider failure")] = None
    message: Annotated[str | None, Doc("the failure's message")] = None
    fail_mid_stream: Annotated[
        bool, Doc("stream this turn's deltas, then fail instead of completing")
    ] = False
    delay_ms: Annotated[int | None, IntRange(0, 3_600_000), Doc("wait before the first delta")] = (
        None
    )
    chunk_size: Annotated[int | None, IntRange(1, 2**31), Doc("chars per delta (default 24)")] = (
        None
    )
    expect_last_tool_output_contains: Annotated[
        str | None, Doc("fatal error unless the newest tool message contains this")
    ] = None
    expect_user_contains: Annotated[
        str | None, Doc("fatal error unless the newest user message contains this")
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptSummary:
    """`[[summary]]`: one answer to a compaction summary request (`purpose == "summary"`)."""

    text: str | None = None
    reasoning: str | None = None
    usage: ScriptUsage | None = None
    fail: FailMode | None = None
    message: str | None = None
    fail_mid_stream: bool = False
    delay_ms: Annotated[int | None, IntRange(0, 3_600_000)] = None
    chunk_size: Annotated[int | None, IntRange(1, 2**31)] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayScript:
    """A replay script: provider facts, model turns, compaction summaries."""

    provider: ScriptProviderInfo = field(default_factory=ScriptProviderInfo)
    turn: list[ScriptTurn] = field(default_factory=list)
    summary: list[ScriptSummary] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Validation


def _script_error(message: str, location: str, hint: str | None) -> ReplayScriptError:
    return ReplayScriptError(message, location=location, hint=hint)


def _check_json_value(value: Any, path: PathKey, loc: Locator) -> None:
    """Tool arguments become JSON: reject TOML dates/times and non-finite floats."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_json_value(v, (*path, k), loc)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_json_value(v, (*path, i), loc)
    elif isinstance(value, float) and not math.isfinite(value):
        raise loc.error(path, f"{value!r} is not representable in JSON")
    elif not isinstance(value, str | int | float | bool):
        raise loc.error(path, f"a TOML {type(value).__name__} is not a JSON value; use a string")


def _check_semantics(script: ReplayScript, loc: Locator) -> None:
    for i, turn in enumerate(script.turn):
        base: PathKey = ("turn", i)
        has_content = bool(turn.text or turn.reasoning or turn.tool_calls)
        if turn.fail is not None and has_content and not turn.fail_mid_stream:
            raise loc.error(
                (*base, "fail"),
                "a failing turn with text, reasoning or tool calls never streams them",
                hint="set fail_mid_stream = true to stream them first, or remove them",
            )
        if turn.fail is None and (turn.message is not None or turn.fail_mid_stream):
            key = "message" if turn.message is not None else "fail_mid_stream"
            raise loc.error((*base, key), "only meaningful together with `fail`")
        seen: set[str] = set()
        for j, call in enumerate(turn.tool_calls):
            cpath: PathKey = (*base, "tool_calls", j)
            if not call.name.strip():
                raise loc.error((*cpath, "name"), "a tool call needs a non-empty name")
            if call.arguments is not None and call.arguments_json is not None:
                raise loc.error(
                    (*cpath, "arguments_json"), "give either `arguments` or `arguments_json`"
                )
            if call.arguments is not None:
                _check_json_value(call.arguments, (*cpath, "arguments"), loc)
            if call.id is not None:
                if call.id in seen:
                    raise loc.error((*cpath, "id"), f"duplicate tool call id {call.id!r}")
                seen.add(call.id)
    for i, summary in enumerate(script.summary):
        content = bool(summary.text or summary.reasoning)
        if summary.fail is not None and content and not summary.fail_mid_stream:
            raise loc.error(
                ("summary", i, "fail"),
                "a failing summary never streams its text",
                hint="set fail_mid_stream = true, or remove the text",
            )


def parse_script(text: str, *, source: str = "<script>") -> ReplayScript:
    """Validate TOML text into a `ReplayScript`; `ReplayScriptError` (exit 2) names the spot."""
    script, _, loc = decode_toml(ReplayScript, text, source=source, make_error=_script_error)
    _check_semantics(script, loc)
    return script


def load_script(path: Path) -> ReplayScript:
    """Read and validate a script file."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_SCRIPT_BYTES + 1)
    except OSError as exc:
        raise ReplayScriptError(
            f"cannot read replay script: {exc.strerror}", location=str(path)
        ) from None
    if len(raw) > MAX_SCRIPT_BYTES:
        raise ReplayScriptError(
            f"replay script is larger than {MAX_SCRIPT_BYTES} bytes", location=str(path)
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReplayScriptError(
            f"replay script is not UTF-8 (byte {exc.start})", location=f"{path}:1:1"
        ) from None
    return parse_script(text, source=str(path))


# --------------------------------------------------------------------------------------------
# Finding scripts


@functools.cache
def scripts_dir() -> Path:
    """Shipped scripts: `vtcode/_data/scripts/` in a wheel, `fixtures/scripts/` in a checkout."""
    packaged = Path(str(resources.files("vtcode") / "_data" / "scripts"))
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "fixtures" / "scripts"


def shipped_scripts() -> list[str]:
    """Names of the shipped scripts (file stems), sorted."""
    d = scripts_dir()
    return sorted(p.stem for p in d.glob("*.toml")) if d.is_dir() else []


def resolve_script(ref: str | None, *, workspace: Path | None = None) -> Path:
    """A path (absolute, or relative to cwd or the workspace) or a bare shipped-script name."""
    if ref is None or not ref.strip():
        ref = DEFAULT_SCRIPT
    candidate = Path(ref).expanduser()
    tried = [candidate]
    if not candidate.is_absolute() and workspace is not None:
        tried.append(workspace / candidate)
    for p in tried:
        if p.is_file():
            return p
    if "/" not in ref and "\\" not in ref:
        stem = ref[:-5] if ref.endswith(".toml") else ref
        shipped = scripts_dir() / f"{stem}.toml"
        if shipped.is_file():
            return shipped
    known = ", ".join(shipped_scripts()) or "(none)"
    raise ReplayScriptError(
        f"replay script {ref!r} not found (not a file, not a shipped script)",
        hint=f"shipped scripts: {known}",
    )


def compact_json(value: Any) -> str:
    """The exact argument text the replay provider sends for an `arguments` table."""
    return orjson.dumps(value).decode("utf-8")
