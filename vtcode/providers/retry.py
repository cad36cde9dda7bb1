"""Retries for provider requests: exponential backoff with jitter, honouring `Retry-After`.

A request is retried only while nothing has been yielded to the caller: once a delta reached the
loop, replaying the request would duplicate output, so a later failure is raised (as the
transient `ProviderError` it is) for the loop to handle. Only retryable kinds are retried.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from vtcode.providers.base import ProviderError

__all__ = ["RetryPolicy", "parse_retry_after", "with_retries"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """`max_retries` retries after the first attempt (`agent.max_task_retries`, default 2).

    Delays follow upstream's exec retry (2 s doubling to 30 s) with equal jitter: half the delay
    is fixed, half random, so concurrent clients spread out.
    """

    max_retries: int = 2
    base_delay: float = 2.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0  # a server asking for a longer wait is not retried
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def backoff(self, retry: int) -> float:
        """The delay before retry number `retry` (0-based)."""
        full = min(self.max_delay, math.ldexp(self.base_delay, retry))
        jitter: float = self.rng.uniform(0, full / 2)
        return full / 2 + jitter


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds from `retry-after-ms`, or `Retry-After` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def with_retries(
    attempt: Callable[[], Iterator[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[ProviderError, int, float], None] | None = None,
) -> Iterator[T]:
    """Run `attempt()` and yield its items, starting over on a retryable error before any item."""
    retry = 0
    while True:
        yielded = False
        try:
            for item in attempt():
                yielded = True
                yield item
            return
        except ProviderError as exc:
            exc.attempts = retry + 1
            if yielded or not exc.retryable or retry >= policy.max_retries:
                if not yielded and exc.retryable and retry > 0:
                    exc.message = f"{exc.message} (after {retry + 1} attempts)"
                    exc.args = (exc.message,)
                raise
            if exc.retry_after is not None and exc.retry_after > policy.max_retry_after:
                exc.message = f"{exc.message} (server asked to retry after {exc.retry_after:g} s)"
                exc.args = (exc.message,)
                raise
            delay = exc.retry_after if exc.retry_after is not None else policy.backoff(retry)
            if on_retry is not None:
                on_retry(exc, retry + 1, delay)
            sleep(delay)
            retry += 1
