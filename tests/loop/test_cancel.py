"""Cancellation never cuts an event in half: a signal during an emission acts right after it."""

from __future__ import annotations

import _thread
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from vtcode.loop.cancel import Cancelled, CancelToken
from vtcode.threads import future_result, wait_event


def test_signal_while_waiting_raises_at_once() -> None:
    token = CancelToken()
    with pytest.raises(Cancelled), token.interruptible():
        token._handler(signal.SIGINT, None)
    assert token.cancelled and token.signum == signal.SIGINT


def test_signal_during_an_emission_waits_for_its_end() -> None:
    token = CancelToken()
    written: list[str] = []
    with pytest.raises(Cancelled), token.interruptible(), token.shielded():
        token._handler(signal.SIGTERM, None)  # arrives mid-emission: must not raise here
        written.append("whole event")
    assert written == ["whole event"]


def test_outside_any_wait_a_signal_only_sets_the_flag() -> None:
    token = CancelToken()
    with token.shielded():
        token._handler(signal.SIGINT, None)
    assert token.cancelled
    with pytest.raises(Cancelled):
        token.raise_if_cancelled()


def test_background_threads_block_the_signals_so_the_main_thread_gets_them() -> None:
    import threading

    from vtcode.threads import background_thread

    seen: list[set[int]] = []
    t = background_thread(lambda: seen.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, []))))
    t.start()
    t.join(5)
    assert {signal.SIGINT, signal.SIGTERM} <= seen[0]
    # the starting thread's own mask is unchanged
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert threading.current_thread() is threading.main_thread()


def _tripped_while_waiting(wait: Callable[[threading.Event, float], bool]) -> float:
    """Seconds `wait(event, 30)` took when SIGINT's flag was tripped while it waited.

    `_thread.interrupt_main` does what the kernel's signal does when it lands just before the
    wait blocks (or while the main thread waits for the GIL): Python's flag is set, but the
    blocking call is not interrupted. The handler only runs when the interpreter gets control."""
    event = threading.Event()
    token = CancelToken()

    def trip() -> None:
        _thread.interrupt_main(signal.SIGINT)

    started = time.monotonic()
    with token.installed():
        timer = threading.Timer(0.05, trip)
        timer.start()
        try:
            with pytest.raises(Cancelled), token.interruptible():
                wait(event, 30.0)
        finally:
            timer.join()
    return time.monotonic() - started


def test_a_signal_tripped_during_a_long_wait_is_handled_within_a_slice() -> None:
    took = _tripped_while_waiting(wait_event)
    assert took < 5, f"the wait ran {took:.1f}s before the SIGINT handler did"


def test_a_signal_tripped_while_waiting_on_a_pool_thread_is_handled_within_a_slice() -> None:
    # loop/parallel.py: the main thread waits on the read-only calls' pool threads
    with ThreadPoolExecutor(max_workers=1) as pool:

        def wait_on_pool(event: threading.Event, seconds: float) -> bool:
            try:
                return future_result(pool.submit(event.wait, seconds))
            finally:
                event.set()  # the pool thread's wait ends with the test

        took = _tripped_while_waiting(wait_on_pool)
    assert took < 5, f"the wait ran {took:.1f}s before the SIGINT handler did"


def test_future_result_gives_the_calls_own_timeout_error() -> None:
    def times_out() -> None:
        raise TimeoutError("the tool's own")

    with ThreadPoolExecutor(max_workers=1) as pool, pytest.raises(TimeoutError, match="own"):
        future_result(pool.submit(times_out))


def test_the_plain_event_wait_is_the_case_wait_event_exists_for() -> None:
    # The premise of the test above: a plain wait sleeps through a tripped flag. If a future
    # Python handles it, wait_event's slicing is no longer needed (and this test says so).
    took = _tripped_while_waiting(lambda e, s: e.wait(1.5))
    assert took >= 1.4


def test_wait_event_returns_the_event_state_like_event_wait() -> None:
    event = threading.Event()
    assert wait_event(event, 0.12) is False
    event.set()
    assert wait_event(event, 30.0) is True
    assert wait_event(threading.Event(), 0) is False
