"""Recording: pass a real provider's stream through and keep every response as a replay script.

The loop wires it for `--record FILE`. Each completed response becomes a `[[turn]]` (or a
`[[summary]]` for compaction summaries) with its text, reasoning, tool calls (arguments kept byte
for byte), usage and stop reason spelled out; a failure becomes a `fail` turn (after the partial
output when deltas had already streamed). The file is rewritten atomically after every response
and at `close()`, so a killed run still leaves a valid script of what it saw. Retries inside the
wrapped provider are not visible here: only the outcome the loop saw is recorded.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from vtcode import __version__
from vtcode.messages import ModelRequest, StreamEvent
from vtcode.outpath import TargetKind, check_output
from vtcode.providers.base import (
    Abortable,
    Pricing,
    Provider,
    ProviderError,
    ProviderInterrupted,
)
from vtcode.providers.collect import ResponseAccumulator
from vtcode.providers.script import (
    FailMode,
    ReplayScript,
    ScriptPricing,
    ScriptProviderInfo,
    ScriptSummary,
    ScriptTurn,
    ScriptUsage,
)
from vtcode.providers.script_write import tool_call_for_arguments, write_script
from vtcode.redact import Redactor

__all__ = ["RecordingProvider"]


class RecordingProvider:
    """A `Provider` that delegates to `inner` and writes what it answered to `path`."""

    def __init__(self, inner: Provider, path: Path) -> None:
        self.inner = inner
        self.path = path
        # A file is rewritten after every response (a crash keeps what was recorded); a device,
        # FIFO or stdout gets the script once, at close (a second write would be a second copy).
        self._incremental = check_output(path).kind is TargetKind.FILE
        self.name = inner.name
        self.model = inner.model
        self._turns: list[ScriptTurn] = []
        self._summaries: list[ScriptSummary] = []
        self._lock = threading.Lock()
        self._closed = False

    @property
    def context_window(self) -> int | None:
        return self.inner.context_window

    @property
    def pricing(self) -> Pricing | None:
        return self.inner.pricing

    def interrupt(self) -> None:
        stop = getattr(self.inner, "interrupt", None)
        if callable(stop):
            stop()

    def abort_active(self) -> None:
        """End the wrapped provider's response in progress (a signal's wake, never the next)."""
        if isinstance(self.inner, Abortable):
            self.inner.abort_active()

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        acc = ResponseAccumulator()
        try:
            for event in self.inner.stream(request):
                acc.add(event)
                yield event
        except ProviderInterrupted:
            raise  # cancellation is not a model response
        except ProviderError as exc:
            self._record(request, acc, exc)
            raise
        else:
            if acc.completed is not None:
                self._record(request, acc, None)

    def _record(
        self, request: ModelRequest, acc: ResponseAccumulator, exc: ProviderError | None
    ) -> None:
        got = acc.result()
        mid = exc is not None and acc.deltas > 0
        keep = exc is None or mid
        usage = None
        if exc is None:
            u = got.usage
            usage = ScriptUsage(
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                cached_input_tokens=u.cached_input_tokens,
                cache_creation_tokens=u.cache_creation_tokens,
            )
        fail: FailMode | None = None if exc is None else exc.kind.value
        message = None if exc is None else exc.message
        with self._lock:
            if request.purpose == "summary":
                self._summaries.append(
                    ScriptSummary(
                        text=(got.text or None) if keep else None,
                        reasoning=(got.reasoning or None) if keep else None,
                        usage=usage,
                        fail=fail,
                        message=message,
                        fail_mid_stream=mid,
                    )
                )
            else:
                calls = [tool_call_for_arguments(c.name, c.arguments, c.id) for c in got.tool_calls]
                self._turns.append(
                    ScriptTurn(
                        reasoning=(got.reasoning or None) if keep else None,
                        text=(got.text or None) if keep else None,
                        tool_calls=calls if keep else [],
                        stop_reason=got.stop_reason if exc is None else None,
                        usage=usage,
                        fail=fail,
                        message=message,
                        fail_mid_stream=mid,
                    )
                )
            if self._incremental:
                self._write()

    def script(self) -> ReplayScript:
        """What has been recorded so far."""
        p = self.inner.pricing
        pricing = (
            None
            if p is None
            else ScriptPricing(
                input_per_mtok=p.input_per_mtok,
                output_per_mtok=p.output_per_mtok,
                cached_input_per_mtok=p.cached_input_per_mtok,
                cache_write_per_mtok=p.cache_write_per_mtok,
            )
        )
        return ReplayScript(
            provider=ScriptProviderInfo(
                model=self.inner.model, context_window=self.inner.context_window, pricing=pricing
            ),
            turn=list(self._turns),
            summary=list(self._summaries),
        )

    def _write(self) -> None:
        header = f"Recorded by vtcode {__version__} from provider {self.name}, model {self.model}."
        # A model that repeats a credential must not leave it in the script (`vtcode.redact`).
        write_script(self.path, Redactor.from_environ().value(self.script()), header=header)

    def close(self) -> None:
        """Write the script (even when empty) and close the wrapped provider."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._write()
            finally:
                self.inner.close()
