"""OpenTelemetry export of a run: a span tree built from the ThreadEvent stream.

An Exporter behind the dispatch gate (`handle(event)`, `finish()`), so spans follow exactly the
canonical order. The tree (names and attributes: docs/telemetry-and-mcp.md):

    vtcode.session                       thread.started .. thread.completed
      vtcode.turn                        turn.started .. turn.completed | turn.failed
        vtcode.tool                      tool_invocation started .. its tool_output completed
                                         (an mcp_tool_call: its started .. completed)
        vtcode.compaction                at thread.compact_boundary (zero length)

Spans go through a `BatchSpanProcessor` to an OTLP/HTTP (protobuf) exporter. `finish()` flushes
with a bounded timeout (each export request is bounded by it too) and then shuts the provider
down; a collector that cannot be reached costs at most that timeout and ONE warning on stderr.
Telemetry never fails or hangs a run: no exception leaves `handle` or `finish`, and the SDK's
own log records are captured (not printed) while the exporter lives, to explain that warning.
The tracer provider is private to the run (never installed globally).
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import re
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span, Status, StatusCode

from vtcode import __version__
from vtcode.config.model import OtelConfig
from vtcode.events.types import (
    ErrorItem,
    HarnessItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    McpToolCallItem,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadEvent,
    ThreadStartedEvent,
    ToolInvocationItem,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
    Usage,
)
from vtcode.telemetry import stderr_warning

__all__ = [
    "DEFAULT_ENDPOINT",
    "DEFAULT_TIMEOUT_SECS",
    "OtelExporter",
    "resolve_endpoint",
    "resolve_timeout",
]

DEFAULT_ENDPOINT = "http://localhost:4318"
TRACES_PATH = "/v1/traces"
DEFAULT_TIMEOUT_SECS = 5.0
ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
TIMEOUT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
_SDK_LOGGER = "opentelemetry"


class EndpointError(ValueError):
    """The configured endpoint is not an http(s) URL."""


def resolve_endpoint(config: OtelConfig, env: Mapping[str, str] | None = None) -> str:
    """The full traces URL: `telemetry.otel.endpoint` (a base URL, like the standard
    `OTEL_EXPORTER_OTLP_ENDPOINT`), else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), else
    `OTEL_EXPORTER_OTLP_ENDPOINT`, else http://localhost:4318; `/v1/traces` is appended to a base.
    """
    env = os.environ if env is None else env
    source = "telemetry.otel.endpoint"
    if config.endpoint:
        url = _with_path(config.endpoint)
    elif env.get(TRACES_ENDPOINT_ENV):
        url, source = env[TRACES_ENDPOINT_ENV], TRACES_ENDPOINT_ENV
    elif env.get(ENDPOINT_ENV):
        url, source = _with_path(env[ENDPOINT_ENV]), ENDPOINT_ENV
    else:
        url = DEFAULT_ENDPOINT + TRACES_PATH
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise EndpointError(f"{source}: {url!r} is not an http(s) URL")
    return url


def _with_path(base: str) -> str:
    base = base.strip()
    return base if base.rstrip("/").endswith(TRACES_PATH) else base.rstrip("/") + TRACES_PATH


def resolve_timeout(env: Mapping[str, str] | None = None) -> float:
    """Seconds per export (and for the final flush): the OTLP timeout variables, read in
    seconds as the Python SDK reads them, else 5 s; bad or non-positive values are ignored."""
    env = os.environ if env is None else env
    for name in TIMEOUT_ENVS:
        raw = env.get(name)
        if raw:
            try:
                value = float(raw)
            except ValueError:
                continue
            if 0 < value < 3600:
                return value
    return DEFAULT_TIMEOUT_SECS


def _text(value: Any) -> str:
    return str(value.value) if isinstance(value, enum.Enum) else str(value)


def _usage(span: Span, usage: Usage) -> None:
    span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
    span.set_attribute("vtcode.usage.cached_input_tokens", usage.cached_input_tokens)
    span.set_attribute("vtcode.usage.cache_creation_tokens", usage.cache_creation_tokens)


_ERRNO = re.compile(r"\[Errno -?\d+\] [^\"')\]]+")
_GENERIC = "due to timeout, max retries or shutdown"


def _reason(messages: Sequence[str]) -> str | None:
    """The most telling of the SDK's messages: an OS error first, else the first specific one."""
    for m in messages:
        found = _ERRNO.search(m)
        if found:
            return found.group(0).strip()
    specific = [m for m in messages if m.strip() and _GENERIC not in m]
    rest = specific or [m for m in messages if m.strip()]
    return rest[0] if rest else None


def _probe(url: str, timeout: float) -> str | None:
    """Why the collector cannot be reached, when the SDK gave up without saying (one connect)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as e:  # a port out of range
        return str(e)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as e:
        return f"cannot connect to {host}:{port}: {e}"


class _LogCapture(logging.Handler):
    """The SDK's warnings while we export: kept to explain a failure, never printed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            if len(self.messages) < 100:
                self.messages.append(record.getMessage())


class _Counting(SpanExporter):
    """Wraps the real exporter to count what did not arrive."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.exported = 0
        self.failed = 0
        self.error: str | None = None

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception as e:  # an exporter bug must not kill the batch thread
            result, self.error = SpanExportResult.FAILURE, f"{type(e).__name__}: {e}"
        if result is SpanExportResult.SUCCESS:
            self.exported += len(spans)
        else:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class OtelExporter:
    """One run's spans; see the module docstring for the tree."""

    name = "otel"

    def __init__(
        self,
        config: OtelConfig,
        session_id: str,
        *,
        span_exporter: SpanExporter | None = None,
        env: Mapping[str, str] | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.session_id = session_id
        self.timeout = resolve_timeout(env)
        self._warn = warn or stderr_warning
        if span_exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            self.endpoint: str | None = resolve_endpoint(config, env)
            span_exporter = OTLPSpanExporter(endpoint=self.endpoint, timeout=self.timeout)
        else:
            self.endpoint = None
        self._capture = _LogCapture()
        self._sdk_logger = logging.getLogger(_SDK_LOGGER)
        self._propagate = self._sdk_logger.propagate
        self._sdk_logger.addHandler(self._capture)
        self._sdk_logger.propagate = False
        self._exporter = _Counting(span_exporter)
        resource = Resource.create(
            {"service.name": config.service_name, "service.version": __version__}
        )
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.provider.add_span_processor(
            BatchSpanProcessor(self._exporter, export_timeout_millis=int(self.timeout * 1000))
        )
        self._tracer = self.provider.get_tracer("vtcode", __version__)
        self._root: Span | None = None
        self._turn: Span | None = None
        self._turns = 0
        self._tools: dict[str, Span] = {}  # item id (invocation / mcp call) -> open span
        self._outcomes: dict[str, str] = {}  # invocation item id -> its ToolOutcome
        self._finished = False
        self._bug: str | None = None

    # ------------------------------------------------------------------ spans

    def _start(self, name: str, parent: Span | None, **attributes: Any) -> Span:
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = self._tracer.start_span(name, context=context)
        for key, value in attributes.items():
            if value is not None:
                span.set_attribute(key, value)
        return span

    def _session(self) -> Span:
        if self._root is None:
            self._root = self._start(
                "vtcode.session", None, **{"vtcode.session.id": self.session_id}
            )
        return self._root

    def _current(self) -> Span:
        return self._turn if self._turn is not None else self._session()

    def _end_tools(self) -> None:
        for span in self._tools.values():
            span.set_attribute("vtcode.tool.unfinished", True)
            span.end()
        self._tools.clear()

    def _end_turn(self, error: str | None = None, usage: Usage | None = None) -> None:
        self._end_tools()
        turn, self._turn = self._turn, None
        if turn is None:
            return
        if usage is not None:
            _usage(turn, usage)
        if error is not None:
            turn.set_attribute("vtcode.turn.failure", error)
            turn.set_status(Status(StatusCode.ERROR, error))
        turn.end()

    # ------------------------------------------------------------------ events

    def handle(self, event: ThreadEvent) -> None:
        if self._finished:
            return
        try:
            self._handle(event)
        except Exception as e:  # a telemetry bug must not end the run; the log keeps everything
            self._bug = self._bug or f"{type(e).__name__} at {type(event).__name__}: {e}"

    def _handle(self, event: ThreadEvent) -> None:
        if isinstance(event, ThreadStartedEvent):
            self._session().set_attribute("vtcode.thread.id", event.thread_id)
        elif isinstance(event, TurnStartedEvent):
            self._end_turn()
            self._turns += 1
            self._turn = self._start(
                "vtcode.turn", self._session(), **{"vtcode.turn.index": self._turns}
            )
        elif isinstance(event, TurnCompletedEvent):
            self._end_turn(usage=event.usage)
        elif isinstance(event, TurnFailedEvent):
            self._end_turn(error=event.message, usage=event.usage)
        elif isinstance(event, ItemStartedEvent | ItemCompletedEvent):
            self._item(event)
        elif isinstance(event, ThreadCompactBoundaryEvent):
            self._compaction(event)
        elif isinstance(event, ThreadCompletedEvent):
            self._completed(event)

    def _tool_span(self, item_id: str, tool: str, kind: str, call_id: str | None) -> Span:
        span = self._start(
            "vtcode.tool",
            self._current(),
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": call_id,
                "vtcode.tool.kind": kind,
                "vtcode.item.id": item_id,
            },
        )
        self._tools[item_id] = span
        return span

    def _item(self, event: ItemStartedEvent | ItemCompletedEvent) -> None:
        item = event.item
        details = item.details
        started = isinstance(event, ItemStartedEvent)
        if isinstance(details, ToolInvocationItem):
            span = self._tools.get(item.id)
            if span is None:
                span = self._tool_span(item.id, details.tool_name, "builtin", details.tool_call_id)
            if not started and details.outcome is not None:
                self._outcomes[item.id] = _text(details.outcome)
                span.set_attribute("vtcode.tool.outcome", self._outcomes[item.id])
        elif isinstance(details, ToolOutputItem) and not started:
            span = self._tools.pop(details.call_id, None)
            if span is None:
                return
            status = _text(details.status)
            span.set_attribute("vtcode.tool.status", status)
            if details.exit_code is not None:
                span.set_attribute("vtcode.tool.exit_code", details.exit_code)
            outcome = self._outcomes.pop(details.call_id, None)
            if status == "failed" or (outcome is not None and outcome != "success"):
                span.set_status(Status(StatusCode.ERROR, f"{outcome or status}"))
            span.end()
        elif isinstance(details, McpToolCallItem):
            span = self._tools.get(item.id) or self._tool_span(
                item.id, details.tool_name, "mcp", None
            )
            if started:
                return
            self._tools.pop(item.id, None)
            status = _text(details.status) if details.status is not None else "completed"
            span.set_attribute("vtcode.tool.status", status)
            outcome = "success" if status == "completed" else "error"
            span.set_attribute("vtcode.tool.outcome", outcome)
            if status == "failed":
                span.set_status(Status(StatusCode.ERROR, (details.result or "failed")[:200]))
            span.end()
        elif isinstance(details, ErrorItem) and not started:
            self._current().add_event("vtcode.warning", {"message": details.message})
        elif isinstance(details, HarnessItem) and not started:
            attrs = {"vtcode.harness.event": _text(details.event)}
            if details.message:
                attrs["message"] = details.message
            self._current().add_event("vtcode.harness", attrs)

    def _compaction(self, event: ThreadCompactBoundaryEvent) -> None:
        span = self._start(
            "vtcode.compaction",
            self._current(),
            **{
                "vtcode.compaction.trigger": _text(event.trigger),
                "vtcode.compaction.mode": _text(event.mode),
                "vtcode.compaction.original_message_count": event.original_message_count,
                "vtcode.compaction.compacted_message_count": event.compacted_message_count,
                "vtcode.compaction.history_artifact_path": event.history_artifact_path,
                "vtcode.compaction.new_segment_id": event.new_segment_id,
            },
        )
        span.end()

    def _completed(self, event: ThreadCompletedEvent) -> None:
        self._end_turn()
        root = self._session()
        subtype = _text(event.subtype)
        attrs: dict[str, Any] = {
            "vtcode.outcome.subtype": subtype,
            "vtcode.outcome.code": event.outcome_code,
            "vtcode.num_turns": event.num_turns,
            "vtcode.stop_reason": event.stop_reason,
            "vtcode.cost_usd": event.total_cost_usd,
        }
        for key, value in attrs.items():
            if value is not None:
                root.set_attribute(key, value)
        _usage(root, event.usage)
        if subtype == "success":
            root.set_status(Status(StatusCode.OK))
        else:
            root.set_status(Status(StatusCode.ERROR, f"{subtype} ({event.outcome_code})"))
        root.end()
        self._root = None
        self._finished = True

    # ------------------------------------------------------------------ shutdown

    def finish(self) -> None:
        """End what is still open, flush (bounded), shut down; warn once if spans were lost."""
        try:
            if not self._finished:
                self._end_turn()
                if self._root is not None:
                    self._root.set_status(
                        Status(StatusCode.ERROR, "the run ended without thread.completed")
                    )
                    self._root.end()
                    self._root = None
                self._finished = True
            flushed = self.provider.force_flush(int(self.timeout * 1000))
            if not flushed:
                self._exporter.inner.shutdown()  # abort retries, so shutdown cannot wait on them
            self.provider.shutdown()
        except Exception as e:
            self._exporter.error = self._exporter.error or f"{type(e).__name__}: {e}"
            self._exporter.failed = max(self._exporter.failed, 1)
        finally:
            self._sdk_logger.removeHandler(self._capture)
            self._sdk_logger.propagate = self._propagate
        if self._exporter.failed:
            self._warn(self._failure_message())
        elif self._bug is not None:
            self._warn(f"OpenTelemetry spans of this run may be incomplete ({self._bug})")

    def _failure_message(self) -> str:
        where = f" to {self.endpoint}" if self.endpoint else ""
        reason = self._exporter.error or _reason(self._capture.messages)
        if self.endpoint and (reason is None or _GENERIC in reason):
            reason = _probe(self.endpoint, min(1.0, self.timeout)) or reason
        text = (
            f"OpenTelemetry export{where} failed: {self._exporter.failed} of "
            f"{self._exporter.failed + self._exporter.exported} spans were not delivered"
        )
        if reason:
            one = " ".join(reason.split())
            text += f" ({one[:300]}{'…' if len(one) > 300 else ''})"
        return text + "; the run itself is unaffected"
