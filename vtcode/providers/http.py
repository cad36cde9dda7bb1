"""HTTP plumbing shared by the OpenAI-compatible and Anthropic providers.

One streaming POST over httpx, read as Server-Sent Events, with every failure turned into one
`ProviderError` line a user can act on (status, auth hint naming the key variable, the server's
own message) and classified for the loop: transient (retry), fatal, or context length. A request
keeps its `Deadlines` (total and idle, see `vtcode.providers.deadline`): the socket timeouts are
capped by them, every chunk is checked against them, and a watchdog shuts the socket down when
one passes while a read is blocked.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import socket
import threading
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from httpcore import NetworkStream

from vtcode import __version__
from vtcode.errors import UsageError
from vtcode.providers.base import FailureKind, ProviderError, ProviderInterrupted
from vtcode.providers.deadline import Deadlines, RequestClock
from vtcode.providers.retry import parse_retry_after
from vtcode.providers.sse import SSEEvent, SSEParser
from vtcode.redact import redact_text
from vtcode.threads import wait_event

__all__ = [
    "DEFAULT_TIMEOUT",
    "Endpoint",
    "SSETransport",
    "classify_error",
    "is_local_url",
    "json_or_error",
    "resolve_endpoint",
]

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0)
# httpcore trace events whose return value is a newly connected stream (TCP, Unix, then TLS)
_CONNECTED = frozenset(
    f"connection.{step}.complete" for step in ("connect_tcp", "connect_unix_socket", "start_tls")
)
_MAX_ERROR_BODY = 64 * 1024
_MAX_LINE = 300

_CONTEXT_PATTERNS = re.compile(
    r"context[_ ]length|context window|maximum context|prompt is too long|too many tokens|"
    r"input is too long|exceeds? the (?:model'?s? )?(?:maximum|context)|reduce the length|"
    r"request_too_large|input length .* exceed|"
    r"exceed_context_size|exceeds the available context",  # llama.cpp's llama-server
    re.IGNORECASE,
)


def is_local_url(url: str) -> bool:
    """Loopback hosts (local Ollama, llama.cpp, vLLM, test servers) may need no API key."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback or host == "0.0.0.0"  # noqa: S104
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Endpoint:
    base_url: str
    api_key: str | None
    key_env: str


def resolve_endpoint(
    *,
    provider: str,
    base_url: str | None,
    base_env: str,
    default_base: str,
    api_key: str | None,
    key_env: str,
) -> Endpoint:
    """Base URL (argument, then `base_env`, then the default) and key (argument, then env)."""
    url = (base_url or os.environ.get(base_env) or default_base).strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"invalid base URL for {provider}: {redact_text(url)!r}",
            hint=(
                f"set providers.{provider}.base_url to an http(s) URL"
                if base_url
                else f"set {base_env} to an http(s) URL, e.g. {default_base}"
            ),
        )
    key = api_key if api_key is not None else os.environ.get(key_env)
    key = key.strip() if key else None
    if not key and not is_local_url(url):
        raise UsageError(
            f"{key_env} is not set (needed for {provider} at {redact_text(url)})",
            hint=f"export {key_env}=... or point {base_env} at a local server",
        )
    return Endpoint(base_url=url, api_key=key or None, key_env=key_env)


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_LINE else flat[: _MAX_LINE - 1] + "…"


def _error_parts(body: Any) -> tuple[str | None, str | None]:
    """(error type/code, message) from OpenAI- or Anthropic-shaped error JSON."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            kind = err.get("type") or err.get("code")
            msg = err.get("message")
            return (
                str(kind) if kind is not None else None,
                msg if isinstance(msg, str) else None,
            )
        if isinstance(err, str):
            return None, err
    return None, None


def classify_error(
    *,
    provider: str,
    key_env: str,
    model: str,
    status: int | None,
    err_type: str | None,
    message: str | None,
    retry_after: float | None = None,
) -> ProviderError:
    """One clear, classified line for an HTTP status or an in-stream error event."""
    detail = _one_line(message or "")
    tail = f": {detail}" if detail else ""
    kind_text = _one_line(err_type or "").lower()  # cut: the context patterns search it
    code = f"HTTP {status}" if status is not None else (err_type or "stream error")

    def err(text: str, kind: FailureKind) -> ProviderError:
        # The server's own message may echo the key or the URL with its userinfo.
        return ProviderError(
            redact_text(text), kind=kind, status=status, provider=provider, retry_after=retry_after
        )

    if status in (401, 403) or kind_text in ("authentication_error", "permission_error"):
        return err(
            f"authentication failed for {provider} (check {key_env}){tail}", FailureKind.FATAL
        )
    if (
        status == 413
        or kind_text == "request_too_large"
        or (
            (status == 400 or status is None or kind_text == "invalid_request_error")
            and _CONTEXT_PATTERNS.search(f"{kind_text} {detail}")
        )
    ):
        return err(
            f"context length exceeded for {provider} ({code}){tail}", FailureKind.CONTEXT_LENGTH
        )
    if status == 404 or kind_text == "not_found_error":
        return err(f"model {model!r} not found at {provider} ({code}){tail}", FailureKind.FATAL)
    if status == 429 or kind_text in ("rate_limit_error", "rate_limit_exceeded"):
        return err(f"rate limited by {provider} ({code}){tail}", FailureKind.TRANSIENT)
    server_status = status is not None and (status >= 500 or status in (408, 409))
    if server_status or kind_text in ("overloaded_error", "api_error", "server_error", "timeout"):
        return err(f"{provider} server error ({code}){tail}", FailureKind.TRANSIENT)
    if status is None:
        return err(f"{provider} stream error ({code}){tail}", FailureKind.FATAL)
    return err(f"{provider} rejected the request ({code}){tail}", FailureKind.FATAL)


def _server_verdict(error: ProviderError, headers: Mapping[str, str]) -> ProviderError:
    """`x-should-retry: true|false` (sent by OpenAI and Anthropic, honoured by their SDKs) wins
    over the status-based guess; a context-length failure stays one (retrying cannot fix it)."""
    verdict = (headers.get("x-should-retry") or "").strip().lower()
    if verdict not in ("true", "false") or error.kind is FailureKind.CONTEXT_LENGTH:
        return error
    kind = FailureKind.TRANSIENT if verdict == "true" else FailureKind.FATAL
    if kind is error.kind:
        return error
    return ProviderError(
        error.message,
        kind=kind,
        status=error.status,
        provider=error.provider,
        retry_after=error.retry_after,
    )


def json_or_error(provider: str, event: SSEEvent) -> Any:
    """The event's JSON data; invalid JSON is a protocol violation (fatal, not retried)."""
    try:
        return orjson.loads(event.data)
    except orjson.JSONDecodeError:
        raise ProviderError(
            f"malformed stream from {provider}: event data is not JSON: "
            f"{redact_text(_one_line(event.data))!r}",
            kind=FailureKind.FATAL,
            provider=provider,
        ) from None


class SSETransport:
    """A pooled httpx client that POSTs JSON and yields the SSE events of the response."""

    def __init__(
        self,
        *,
        provider: str,
        endpoint: Endpoint,
        headers: Mapping[str, str],
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        model: str,
    ) -> None:
        self.provider = provider
        self.endpoint = endpoint
        self.model = model
        self._timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self._client = httpx.Client(
            timeout=self._timeout,
            headers={
                "user-agent": f"vtcode/{__version__}",
                "accept": "text/event-stream",
                **headers,
            },
        )
        self._interrupt = threading.Event()
        self._active: httpx.Response | None = None
        # A request sent whose response (headers) has not come yet: no `_active` to abort, so
        # an abort shuts down every socket the client has connected (`_connected`).
        self._awaiting = False
        self._connected: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        # Guards `_active`: an abort from another thread (interrupt, deadline watchdog) shuts
        # down the socket of the response being read, never one already back in the pool.
        self._active_lock = threading.RLock()  # re-entrant: a signal handler may abort

    def url(self, path: str) -> str:
        return f"{self.endpoint.base_url}{path}"

    def close(self) -> None:
        self._client.close()

    def interrupt(self) -> None:
        """Abort the response being read, or else the next request (one interrupt, one abort).

        Best effort from another thread: a read blocked in the kernel ends when the response is
        closed; the loop's signal-driven cancellation interrupts the read directly.
        """
        self._interrupt.set()
        self.abort_active()

    def abort_active(self) -> None:
        """Make the read in progress (if any) fail now; safe from any thread.

        While the response's headers are awaited (a local server may load the model or read
        a long prompt first, minutes on a CPU) the request's connection is not known, pooled
        or new: every socket of the client is shut down. Only this request uses the client at
        a time (`_active` is one), so the others are idle ones, dropped from the pool when it
        next finds them closed; the next request opens a fresh connection."""
        with self._active_lock:
            active = self._active
            if active is None:
                if self._awaiting:
                    for connected in list(self._connected):
                        with contextlib.suppress(OSError):  # closed already
                            connected.shutdown(socket.SHUT_RDWR)
                return
            # Closing the response from another thread does not wake a read blocked in recv();
            # shutting the socket down does (the reader then sees EOF and raises).
            stream = active.extensions.get("network_stream")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(httpx.HTTPError, OSError, RuntimeError):
            active.close()

    def _set_active(self, response: httpx.Response | None) -> None:
        with self._active_lock:
            self._active = response
            self._awaiting = False

    def _awaiting_response(self) -> None:
        with self._active_lock:
            self._awaiting = True

    def _trace(self, event: str, info: Mapping[str, object]) -> None:
        """httpcore's `trace` extension: keeps every socket the client connects (for the abort
        while headers are awaited); a socket closed and dropped by the pool leaves the set."""
        if event not in _CONNECTED:
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if isinstance(stream, NetworkStream) else None
        if isinstance(sock, socket.socket):
            with self._active_lock:
                self._connected.add(sock)

    def wait(self, seconds: float) -> None:
        """Sleep between retries, cut short (and raising) by `interrupt()`."""
        wait_event(self._interrupt, seconds)
        self.check_interrupt()

    def check_interrupt(self) -> None:
        if self._interrupt.is_set():
            self._interrupt.clear()
            raise ProviderInterrupted(provider=self.provider)

    def _error(self, text: str, kind: FailureKind = FailureKind.TRANSIENT) -> ProviderError:
        return ProviderError(redact_text(text), kind=kind, provider=self.provider)  # URLs

    def _map_transport(
        self, exc: Exception, url: str, clock: RequestClock | None = None
    ) -> ProviderError:
        if self._interrupt.is_set():
            self._interrupt.clear()
            return ProviderInterrupted(provider=self.provider)
        if clock is not None:
            if clock.expired() is not None:
                return clock.error()
            if isinstance(exc, httpx.ReadTimeout):
                mapped = clock.read_timed_out()
                if mapped is not None:
                    return mapped
        if isinstance(exc, httpx.TimeoutException):
            phase = {
                httpx.ConnectTimeout: "connect",
                httpx.ReadTimeout: "read",
                httpx.WriteTimeout: "write",
                httpx.PoolTimeout: "pool",
            }.get(type(exc), "request")
            limit = getattr(self._timeout, phase, None) if phase != "request" else None
            after = f" after {limit:g} s" if isinstance(limit, int | float) else ""
            return self._error(f"{self.provider} request timed out ({phase}{after}) at {url}")
        if isinstance(exc, httpx.ConnectError):
            return self._error(f"cannot connect to {self.provider} at {url}: {_one_line(str(exc))}")
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            why = _one_line(str(exc)) or "closed"
            return self._error(f"connection to {self.provider} broke mid-response: {why}")
        return self._error(
            f"{self.provider} request failed: {_one_line(str(exc)) or type(exc).__name__}"
        )

    def clock(self, deadlines: Deadlines) -> RequestClock:
        """A started clock for one request attempt; its watchdog aborts the active read."""
        return RequestClock(self.provider, deadlines, self.abort_active).start()

    def _timeouts(self, deadlines: Deadlines) -> httpx.Timeout:
        """Every phase capped by the total; reads by the tightest configured limit."""
        if not deadlines.any:
            return self._timeout
        t = self._timeout

        def cap(v: float | None) -> float | None:
            if deadlines.total <= 0:
                return v
            return deadlines.total if v is None else min(v, deadlines.total)

        return httpx.Timeout(
            connect=cap(t.connect),
            read=deadlines.read_timeout(t.read),
            write=cap(t.write),
            pool=cap(t.pool),
        )

    def stream(
        self, path: str, body: dict[str, Any], clock: RequestClock | None = None
    ) -> Iterator[SSEEvent]:
        """POST `body` and yield SSE events; raise a classified `ProviderError` on failure.

        With a `clock`, a passed deadline ends the stream with its own error whatever the
        abort made the read do (raise, or end early).
        """
        url = self.url(path)
        payload = orjson.dumps(body)
        self.check_interrupt()
        timeout = self._timeouts(clock.deadlines) if clock is not None else self._timeout
        self._awaiting_response()
        try:
            with self._client.stream(
                "POST",
                url,
                content=payload,
                headers={"content-type": "application/json"},
                timeout=timeout,
                extensions={"trace": self._trace},
            ) as response:
                self._set_active(response)
                try:
                    if clock is not None:
                        clock.check()  # passed while the headers were awaited
                    if response.status_code >= 400:
                        raise self._status_error(response)
                    ctype = response.headers.get("content-type", "")
                    if "text/event-stream" not in ctype and "json" in ctype:
                        raise self._json_instead_of_stream(response, ctype)
                    parser = SSEParser()
                    for chunk in response.iter_raw():
                        self.check_interrupt()
                        if clock is not None:
                            clock.check()
                        yield from parser.feed(chunk)
                    self.check_interrupt()
                    if clock is not None:
                        clock.check()  # an aborted read may end like a clean close
                    yield from parser.close()
                finally:
                    self._set_active(None)
        except (httpx.HTTPError, httpx.StreamError) as exc:
            raise self._map_transport(exc, url, clock) from None
        finally:
            self._set_active(None)  # also when no response came

    def _json_instead_of_stream(self, response: httpx.Response, ctype: str) -> ProviderError:
        """A 200 JSON answer to a stream request: an error object, or a server ignoring `stream`."""
        raw = response.read()[:_MAX_ERROR_BODY]
        try:
            parsed: Any = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and "error" in parsed:
            return self.stream_error(parsed)
        return ProviderError(
            f"{self.provider} answered with {ctype or 'no content type'} instead of an event "
            f"stream (does the server support stream: true?)",
            kind=FailureKind.FATAL,
            provider=self.provider,
        )

    def _status_error(self, response: httpx.Response) -> ProviderError:
        raw = b""
        for chunk in response.iter_raw():
            raw += chunk
            if len(raw) >= _MAX_ERROR_BODY:
                break
        return self._body_error(response.status_code, raw[:_MAX_ERROR_BODY], response.headers)

    def _body_error(self, status: int, raw: bytes, headers: Mapping[str, str]) -> ProviderError:
        try:
            parsed: Any = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = raw.decode("utf-8", "replace")
        err_type, message = _error_parts(parsed)
        if message is None and isinstance(parsed, str):
            message = parsed
        error = classify_error(
            provider=self.provider,
            key_env=self.endpoint.key_env,
            model=self.model,
            status=status if status >= 400 else None,
            err_type=err_type,
            message=message,
            retry_after=parse_retry_after(headers),
        )
        return _server_verdict(error, headers)

    def stream_error(self, data: Any) -> ProviderError:
        """Classify an error object sent inside the stream."""
        err_type, message = _error_parts(data)
        status = int(err_type) if err_type and err_type.isdigit() and len(err_type) == 3 else None
        return classify_error(
            provider=self.provider,
            key_env=self.endpoint.key_env,
            model=self.model,
            status=status,
            err_type=err_type,
            message=message or _one_line(str(data)),
        )
