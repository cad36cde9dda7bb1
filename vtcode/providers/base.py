"""The Provider protocol: stream one model response for a request, or fail with a typed error."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from vtcode.events.types import Usage
from vtcode.messages import ModelRequest, StreamEvent


class FailureKind(enum.StrEnum):
    """How the loop should treat a provider failure."""

    TRANSIENT = "transient"  # retry / recovery compaction may help (5xx, 429, timeouts, resets)
    FATAL = "fatal"  # do not retry (auth, bad request, unknown model)
    CONTEXT_LENGTH = "context_length"  # the request is too large: compaction may help


class ProviderError(Exception):
    """A provider failed; `message` is one clear line a user can act on."""

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind = FailureKind.TRANSIENT,
        status: int | None = None,
        provider: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status
        self.provider = provider
        self.retry_after = retry_after  # seconds the server asked us to wait (Retry-After)
        # Requests already sent for this failure (set by the HTTP providers' own retries): a
        # caller that retries too can skip errors that were retried below it.
        self.attempts = 1

    @property
    def retryable(self) -> bool:
        return self.kind is FailureKind.TRANSIENT


class ProviderInterrupted(ProviderError):
    """The stream was aborted by `interrupt()` (cancellation); callers should not retry it."""

    def __init__(
        self, message: str = "model request interrupted", *, provider: str | None = None
    ) -> None:
        super().__init__(message, kind=FailureKind.FATAL, provider=provider)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pricing:
    """USD per million tokens; cached input and cache writes fall back to the input price."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None

    def cost(self, usage: Usage) -> float:
        cached = self.cached_input_per_mtok
        write = self.cache_write_per_mtok
        return (
            usage.uncached_input_tokens * self.input_per_mtok
            + usage.cached_input_tokens * (self.input_per_mtok if cached is None else cached)
            + usage.cache_creation_tokens * (self.input_per_mtok if write is None else write)
            + usage.output_tokens * self.output_per_mtok
        ) / 1_000_000


@runtime_checkable
class OutputCapped(Protocol):
    """A provider whose default output cap a harness profile may lower (the HTTP providers).
    A Protocol, so that checking a provider for it does not import httpx."""

    def lower_default_output_cap(self, cap: int) -> None: ...


@runtime_checkable
class Abortable(Protocol):
    """A provider whose response in progress can be ended from another thread (the HTTP
    providers, and a recording of one): the cancel token's signal watcher calls it to end a
    socket read that a signal did not interrupt (`vtcode.loop.cancel`). Unlike `interrupt()`, it
    never aborts a later request: a chat's next turn after Ctrl-C must go through."""

    def abort_active(self) -> None: ...


def active_abort(provider: Provider) -> Callable[[], None] | None:
    """`provider.abort_active` when it has one: the `wake` of the block that reads its stream."""
    return provider.abort_active if isinstance(provider, Abortable) else None


@runtime_checkable
class Provider(Protocol):
    """A model backend. Implementations: replay (embedded default), openai, anthropic."""

    name: str
    model: str

    @property
    def context_window(self) -> int | None:
        """The provider's hard context capacity in tokens (None when unknown)."""
        ...

    @property
    def pricing(self) -> Pricing | None:
        """Pricing of the active model (None: unknown, so budgets are not enforced)."""
        ...

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        """Yield deltas, then exactly one `ResponseCompleted`; raise `ProviderError` on failure."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
