"""What the HTTP providers share: endpoint resolution, the SSE transport, retries, capacity and
pricing lookups, interruption, deadlines. A subclass names its API (`name`, `PATH`, environment
variables, auth headers) and says how to build a request body and decode the event stream.

Every request carries an output cap (`max_output_tokens`, default `DEFAULT_MAX_OUTPUT_TOKENS`)
unless the request names its own: without one, a weak model on a local server generates until
the context is full (708 s were seen with llama.cpp).

Deadlines are kept per attempt: the idle clock restarts whenever the decoder yields a stream
event (a delta or the end), so what resets it is model output, not keep-alive traffic.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from vtcode.messages import ModelRequest, StreamEvent
from vtcode.providers.base import Pricing
from vtcode.providers.deadline import Deadlines
from vtcode.providers.http import DEFAULT_TIMEOUT, SSETransport, resolve_endpoint
from vtcode.providers.pricing import context_window_for, pricing_for
from vtcode.providers.retry import RetryPolicy, with_retries
from vtcode.providers.sse import SSEEvent

__all__ = ["DEFAULT_MAX_OUTPUT_TOKENS", "HTTPProvider"]

DEFAULT_MAX_OUTPUT_TOKENS = 8192


class HTTPProvider:
    """Base of `OpenAIProvider` and `AnthropicProvider`."""

    name = ""
    PATH = ""  # the streaming endpoint, relative to the base URL
    BASE_ENV = ""  # environment variable overriding the base URL
    KEY_ENV = ""  # environment variable holding the API key
    DEFAULT_BASE = ""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        context_window: int | None = None,
        pricing: Pricing | None = None,
        deadlines: Deadlines | None = None,
        api_key_env: str | None = None,
        headers: Mapping[str, str] | None = None,
        max_output_tokens: int | None = None,
        label: str | None = None,
        images: bool | None = None,
    ) -> None:
        self.model = model
        self.accepts_images = images  # providers.NAME.images; None: providers/vision.py decides
        self.label = label or self.name  # the config name, for messages
        self.max_output_tokens = max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
        self._cap_configured = max_output_tokens is not None
        self.endpoint = resolve_endpoint(
            provider=self.label,
            base_url=base_url,
            base_env=self.BASE_ENV,
            default_base=self.DEFAULT_BASE,
            api_key=api_key,
            key_env=api_key_env or self.KEY_ENV,
        )
        self._http = SSETransport(
            provider=self.name,
            endpoint=self.endpoint,
            headers={**self.auth_headers(self.endpoint.api_key), **(headers or {})},
            timeout=timeout,
            model=model,
        )
        self._retry = retry or RetryPolicy()
        self._deadlines = deadlines or Deadlines()
        self._context_window = context_window or context_window_for(self.name, model)
        self._pricing = pricing or pricing_for(self.name, model)

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        """Headers every request carries (authentication, API version)."""
        raise NotImplementedError

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body sent for `request`."""
        raise NotImplementedError

    def _decode(self, events: Iterator[SSEEvent]) -> Iterator[StreamEvent]:
        raise NotImplementedError

    @property
    def context_window(self) -> int | None:
        return self._context_window

    @property
    def pricing(self) -> Pricing | None:
        return self._pricing

    def close(self) -> None:
        self._http.close()

    def lower_default_output_cap(self, cap: int) -> None:
        """Lower the output cap to `cap` unless `providers.NAME.max_output_tokens` set one (the
        compact harness: a small model's runaway list of calls otherwise runs to 8,192 tokens,
        minutes on a CPU)."""
        if not self._cap_configured:
            self.max_output_tokens = min(self.max_output_tokens, cap)

    def interrupt(self) -> None:
        self._http.interrupt()

    def abort_active(self) -> None:
        self._http.abort_active()

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        body = self.body(request)

        def attempt() -> Iterator[StreamEvent]:
            clock = self._http.clock(self._deadlines)
            try:
                for event in self._decode(self._http.stream(self.PATH, body, clock)):
                    clock.progress()
                    yield event
            finally:
                clock.stop()

        return with_retries(attempt, self._retry, sleep=self._http.wait)
