"""Cancellation never cuts an event in half: a signal during an emission acts right after it."""

from __future__ import annotations

import signal

import pytest

from vtcode.loop.cancel import Cancelled, CancelToken


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
