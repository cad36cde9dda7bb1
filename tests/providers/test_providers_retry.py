"""Retry policy: what is retried, how long it waits, and what the final error says."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from vtcode.providers.base import FailureKind, ProviderError
from vtcode.providers.retry import RetryPolicy, parse_retry_after, with_retries


def test_backoff_doubles_to_the_cap_with_bounded_jitter() -> None:
    policy = RetryPolicy(base_delay=2.0, max_delay=30.0, rng=random.Random(7))
    for retry, full in enumerate([2.0, 4.0, 8.0, 16.0, 30.0, 30.0]):
        d = policy.backoff(retry)
        assert full / 2 <= d <= full


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "0"}, 0.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 10.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    now = 1445412480.0  # 2015-10-21T07:28:00Z
    assert parse_retry_after(headers, now=now) == seconds


def flaky(failures: list[ProviderError], calls: list[int]) -> Iterator[str]:
    calls.append(1)
    if failures:
        raise failures.pop(0)
    yield "ok"


def test_only_retryable_errors_before_output_are_retried() -> None:
    slept: list[float] = []
    calls: list[int] = []
    errors = [ProviderError("busy", retry_after=0.25), ProviderError("busy")]
    policy = RetryPolicy(max_retries=2, rng=random.Random(1))
    out = list(with_retries(lambda: flaky(errors, calls), policy, sleep=slept.append))
    assert out == ["ok"] and len(calls) == 3
    assert slept[0] == 0.25 and 2.0 <= slept[1] <= 4.0  # second retry: 4 s, half jittered

    calls.clear()
    fatal = [ProviderError("bad key", kind=FailureKind.FATAL)]
    with pytest.raises(ProviderError, match=r"^bad key$"):
        list(with_retries(lambda: flaky(fatal, calls), policy, sleep=slept.append))
    assert len(calls) == 1


def test_failure_after_output_is_raised_not_retried() -> None:
    calls: list[int] = []

    def attempt() -> Iterator[str]:
        calls.append(1)
        yield "delta"
        raise ProviderError("reset")

    got: list[str] = []
    with pytest.raises(ProviderError) as info:
        got.extend(with_retries(attempt, RetryPolicy(max_retries=5), sleep=lambda _: None))
    assert got == ["delta"] and len(calls) == 1
    assert info.value.message == "reset" and info.value.kind is FailureKind.TRANSIENT


def test_on_retry_reports_attempts() -> None:
    seen: list[tuple[str, int, float]] = []
    errors = [ProviderError("a", retry_after=0), ProviderError("b", retry_after=0)]
    policy = RetryPolicy(max_retries=1)
    with pytest.raises(ProviderError, match=r"^b \(after 2 attempts\)$") as info:
        list(
            with_retries(
                lambda: flaky(errors, []),
                policy,
                sleep=lambda _: None,
                on_retry=lambda e, n, d: seen.append((e.message, n, d)),
            )
        )
    assert seen == [("a", 1, 0)]
    assert info.value.attempts == 2
