"""The replay provider: plays a script's turns as streamed model responses, deterministically.

It is the embedded test provider: it drives the real loop, real tools and real persistence
without a network. Each `stream()` consumes the next `[[turn]]` (or, for a compaction summary
request, the next `[[summary]]`), streams its reasoning, text and tool calls as deltas of
`chunk_size` characters, and ends with one `ResponseCompleted`. Running out of turns is a FATAL
`ProviderError`, never a hang.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from vtcode.events.types import Usage
from vtcode.messages import (
    LEDGER_NAME,
    Message,
    ModelRequest,
    ReasoningDelta,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from vtcode.providers.base import FailureKind, Pricing, ProviderError, ProviderInterrupted
from vtcode.providers.script import (
    ReplayScript,
    ScriptSummary,
    ScriptTurn,
    ScriptUsage,
    compact_json,
    load_script,
)
from vtcode.threads import wait_event

__all__ = ["DEFAULT_CHUNK_SIZE", "DEFAULT_MODEL", "ReplayProvider", "estimate_tokens"]

DEFAULT_CHUNK_SIZE = 24
DEFAULT_MODEL = "replay-1"
_EXCERPT = 120


def estimate_tokens(nbytes: int) -> int:
    """The replay provider's deterministic token estimate: ceil(UTF-8 bytes / 4)."""
    return math.ceil(nbytes / 4)


# How the workspace's own path is counted in an estimate (see `_neutral_bytes`).
WORKSPACE_PLACEHOLDER = "<workspace>"


def _neutral_bytes(text: str, paths: tuple[str, ...]) -> int:
    """UTF-8 size of `text` with each workspace path counted as `WORKSPACE_PLACEHOLDER`.

    The exec prompt names the working folder (and tools quote it), so a plain byte count would
    make the same script report other token counts in another checkout, temp dir or user's
    home: a replay log is meant to be the same wherever it is played. `paths` is longest
    first, so a path inside another is not counted twice.
    """
    for path in paths:
        if path in text:
            text = text.replace(path, WORKSPACE_PLACEHOLDER)
    return len(text.encode("utf-8"))


def _request_bytes(request: ModelRequest, paths: tuple[str, ...] = ()) -> int:
    total = 0
    for m in request.messages:
        total += _neutral_bytes(m.content, paths) + len(m.role)
        total += sum(len(c.name) + _neutral_bytes(c.arguments, paths) for c in m.tool_calls)
    for t in request.tools:
        total += len(t.name) + len(t.description.encode("utf-8"))
        total += len(compact_json(t.parameters))
    return total


def _chunks(text: str, size: int) -> Iterator[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


def _newest(messages: tuple[Message, ...], role: str) -> Message | None:
    """The newest message of `role` in the conversation (the decision ledger note a request
    carries after its history is the harness's, not a message a script expects)."""
    return next((m for m in reversed(messages) if m.role == role and m.name != LEDGER_NAME), None)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 1] + "…"


def _spellings(workspace: Path | None) -> tuple[str, ...]:
    """The ways a prompt may spell `workspace` (as given, resolved), longest first."""
    if workspace is None:
        return ()
    found = {str(workspace), str(workspace.resolve())} - {"/", "."}
    return tuple(sorted(found, key=len, reverse=True))


class ReplayProvider:
    """A `Provider` that answers from a `ReplayScript` (thread-safe; one turn per `stream`)."""

    name = "replay"

    def __init__(
        self,
        script: ReplayScript,
        *,
        source: str = "<script>",
        model: str | None = None,
        workspace: Path | None = None,
    ) -> None:
        self.script = script
        self._workspace_paths = _spellings(workspace)
        self.source = source
        self.model = model or script.provider.model or DEFAULT_MODEL
        self._lock = threading.Lock()
        self._next_turn = 0
        self._next_summary = 0
        self._next_call = 0
        self._interrupt = threading.Event()
        p = script.provider.pricing
        self._pricing = (
            None
            if p is None
            else Pricing(
                input_per_mtok=p.input_per_mtok,
                output_per_mtok=p.output_per_mtok,
                cached_input_per_mtok=p.cached_input_per_mtok,
                cache_write_per_mtok=p.cache_write_per_mtok,
            )
        )

    @classmethod
    def from_file(
        cls, path: Path, *, model: str | None = None, workspace: Path | None = None
    ) -> ReplayProvider:
        """Load `path`; messages name the script by its file name (stable across machines)."""
        return cls(load_script(path), source=path.name, model=model, workspace=workspace)

    # ---- Provider protocol -----------------------------------------------------------------

    @property
    def context_window(self) -> int | None:
        return self.script.provider.context_window

    @property
    def pricing(self) -> Pricing | None:
        return self._pricing

    def close(self) -> None:
        """Nothing to release."""

    def interrupt(self) -> None:
        """Abort the stream in progress (its delay or its deltas), or else the next one.

        The stream raises `ProviderInterrupted`; one interrupt aborts exactly one stream.
        """
        self._interrupt.set()

    @property
    def turns_consumed(self) -> int:
        return self._next_turn

    @property
    def turns_remaining(self) -> int:
        return len(self.script.turn) - self._next_turn

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        """Play the next scripted response for `request` (consumed when iteration starts)."""
        if request.purpose == "summary":
            return self._play_summary(request)
        return self._play_turn(request)

    # ---- playback --------------------------------------------------------------------------

    def _error(self, message: str, kind: FailureKind = FailureKind.FATAL) -> ProviderError:
        return ProviderError(message, kind=kind, provider=self.name)

    def _check_capacity(self, request: ModelRequest) -> Callable[[], int]:
        """Enforce the window if asked; return the (lazy) prompt estimate.

        Counting a request's bytes is linear in the history, so it is done only when a scripted
        turn leaves `input_tokens` out or the window is enforced: long scripted sessions stay
        linear overall.
        """
        cached: list[int] = []

        def estimate() -> int:
            if not cached:
                cached.append(estimate_tokens(_request_bytes(request, self._workspace_paths)))
            return cached[0]

        window = self.script.provider.context_window
        if self.script.provider.enforce_context_window and window and estimate() > window:
            raise self._error(
                f"prompt is too long: about {estimate()} tokens > context window {window}",
                FailureKind.CONTEXT_LENGTH,
            )
        return estimate

    def _play_turn(self, request: ModelRequest) -> Iterator[StreamEvent]:
        estimate = self._check_capacity(request)  # a rejected request consumes no turn
        with self._lock:
            n = self._next_turn
            if n >= len(self.script.turn):
                raise self._error(f"replay script exhausted after {n} turns ({self.source})")
            self._next_turn += 1
            turn = self.script.turn[n]
            first_call = self._next_call
            self._next_call += len(turn.tool_calls)
        label = f"replay turn {n + 1} ({self.source})"
        self._check_expectations(turn, request, label)
        yield from self._play(turn, label, estimate, first_call)

    def _play_summary(self, request: ModelRequest) -> Iterator[StreamEvent]:
        estimate = self._check_capacity(request)
        with self._lock:
            n = self._next_summary
            if n >= len(self.script.summary):
                raise self._error("replay script has no [[summary]] left")
            self._next_summary += 1
            entry = self.script.summary[n]
        yield from self._play(entry, f"replay summary {n + 1} ({self.source})", estimate, 0)

    def _check_expectations(self, turn: ScriptTurn, request: ModelRequest, label: str) -> None:
        want = turn.expect_last_tool_output_contains
        if want is not None:
            last = _newest(request.messages, "tool")
            if last is None:
                raise self._error(
                    f"{label}: expect_last_tool_output_contains {want!r}: no tool output yet"
                )
            if want not in last.content:
                raise self._error(
                    f"{label}: expect_last_tool_output_contains {want!r} not found in "
                    f"the last tool output: {_excerpt(last.content)!r}"
                )
        want = turn.expect_user_contains
        if want is not None:
            user = _newest(request.messages, "user")
            got = "" if user is None else user.content
            if want not in got:
                raise self._error(
                    f"{label}: expect_user_contains {want!r} not found in "
                    f"the newest user message: {_excerpt(got)!r}"
                )

    def _wait(self, delay_ms: int | None) -> None:
        if delay_ms:
            wait_event(self._interrupt, delay_ms / 1000)
        if self._interrupt.is_set():
            self._interrupt.clear()
            raise ProviderInterrupted(provider=self.name)

    def _play(
        self,
        entry: ScriptTurn | ScriptSummary,
        label: str,
        estimate: Callable[[], int],
        first_call: int,
    ) -> Iterator[StreamEvent]:
        self._wait(entry.delay_ms)
        if entry.fail is not None and not entry.fail_mid_stream:
            raise self._failure(entry, label)
        size = entry.chunk_size or DEFAULT_CHUNK_SIZE
        out_bytes = 0
        if entry.reasoning:
            out_bytes += len(entry.reasoning.encode("utf-8"))
            for piece in _chunks(entry.reasoning, size):
                self._wait(None)
                yield ReasoningDelta(piece)
        if entry.text:
            out_bytes += len(entry.text.encode("utf-8"))
            for piece in _chunks(entry.text, size):
                self._wait(None)
                yield TextDelta(piece)
        calls = entry.tool_calls if isinstance(entry, ScriptTurn) else []
        for index, call in enumerate(calls):
            call_id = call.id or f"call_{first_call + index + 1}"
            args = (
                call.arguments_json
                if call.arguments_json is not None
                else compact_json(call.arguments or {})
            )
            out_bytes += len(call.name) + len(args.encode("utf-8"))
            pieces = list(_chunks(args, size)) or [""]
            for k, piece in enumerate(pieces):
                self._wait(None)
                if k == 0:
                    yield ToolCallDelta(index, id=call_id, name=call.name, arguments=piece)
                else:
                    yield ToolCallDelta(index, arguments=piece)
        if entry.fail is not None:
            raise self._failure(entry, label)
        stop = getattr(entry, "stop_reason", None) or ("tool_calls" if calls else "end_turn")
        yield ResponseCompleted(stop, _usage(entry.usage, estimate, estimate_tokens(out_bytes)))

    def _failure(self, entry: ScriptTurn | ScriptSummary, label: str) -> ProviderError:
        kind = FailureKind(entry.fail or "fatal")
        default = {
            FailureKind.TRANSIENT: "injected transient provider failure",
            FailureKind.FATAL: "injected fatal provider failure",
            FailureKind.CONTEXT_LENGTH: "injected context length failure: prompt is too long",
        }[kind]
        return self._error(f"{label}: {entry.message or default}", kind)


def _usage(
    scripted: ScriptUsage | None, input_estimate: Callable[[], int], output_estimate: int
) -> Usage:
    s = scripted or ScriptUsage()
    return Usage(
        input_tokens=input_estimate() if s.input_tokens is None else s.input_tokens,
        output_tokens=output_estimate if s.output_tokens is None else s.output_tokens,
        cached_input_tokens=s.cached_input_tokens or 0,
        cache_creation_tokens=s.cache_creation_tokens or 0,
    )
