"""A signal that lands just before the model stream's blocking read still cancels at once.

`_thread.interrupt_main` does what the kernel's signal does when its C handler runs just before
the main thread blocks in `recv()` (or while it waits for the GIL): Python's flag is set and the
wakeup fd written, but the read is not interrupted. Without the token's wake, the handler ran
only when the server sent more or the read timed out; with it, the watcher thread shuts the
read's socket down and the handler raises `Cancelled` within moments. The server stalls for up
to 30 s (until the test ends); every bound below is measured from the trip, never slept.
"""

from __future__ import annotations

import _thread
import json
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ScriptedReply, SSEServer
from vtcode.loop.cancel import Cancelled, CancelToken
from vtcode.messages import Message, ModelRequest
from vtcode.providers.base import ProviderError, active_abort
from vtcode.providers.collect import collect
from vtcode.providers.openai import OpenAIProvider
from vtcode.providers.recording import RecordingProvider
from vtcode.providers.retry import RetryPolicy

REQUEST = ModelRequest(model="m", messages=(Message(role="user", content="hi"),))
BOUND_SECS = 5.0  # the stall is 30 s: far beyond this, so a miss cannot pass


def _sse(*texts: str, done: bool = False) -> bytes:
    """OpenAI chat-completions events: one delta per text, then (`done`) the end."""
    events = [{"choices": [{"index": 0, "delta": {"content": t}}]} for t in texts]
    if done:
        events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


@pytest.fixture
def provider(sse_server: SSEServer) -> Iterator[OpenAIProvider]:
    p = OpenAIProvider(
        model="m",
        base_url=f"{sse_server.url}/v1",
        api_key="sk-test",
        retry=RetryPolicy(max_retries=0),
    )
    yield p
    p.close()


def _blocked(native_id: int) -> bool:
    """Whether the thread sleeps in the kernel (in a blocking read, not running Python)."""
    try:
        stat = Path(f"/proc/self/task/{native_id}/stat").read_text()
    except OSError:
        return True  # no /proc: the moment given below is all there is
    return stat.rsplit(")", 1)[1].split()[0] == "S"


def _trip_once_blocked(ready: threading.Event, tripped: list[float]) -> threading.Thread:
    """A thread that, once `ready` is set and the main thread has been asleep in the kernel for
    a moment (it needs the GIL to get back to its read), trips SIGINT's flag the way a signal
    landing just before the read would."""
    main = threading.main_thread().native_id
    assert main is not None

    def trip() -> None:
        if not ready.wait(BOUND_SECS):
            return
        asleep = 0
        deadline = time.monotonic() + BOUND_SECS
        # Bounded polling, not a synchronisation the fix needs: it makes sure the read is
        # already blocked when tripped, so that without the fix the test fails every time.
        while asleep < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
            asleep = asleep + 1 if _blocked(main) else 0
        tripped.append(time.monotonic())
        _thread.interrupt_main(signal.SIGINT)

    thread = threading.Thread(target=trip, name="trip-sigint", daemon=True)
    thread.start()
    return thread


def _read_until_cancelled(
    token: CancelToken,
    stream: Callable[[], Iterator[object]],
    wake: Callable[[], None] | None,
    ready: threading.Event | None = None,
) -> tuple[BaseException, float]:
    """Read `stream()` inside `interruptible(wake=wake)` until something raises; the exception
    and the seconds from the trip to it. `ready` (else set at the first event) tells the
    tripping thread the read is under way."""
    first = ready or threading.Event()
    tripped: list[float] = []
    thread = _trip_once_blocked(first, tripped)
    try:
        with pytest.raises((Cancelled, ProviderError)) as info, token.interruptible(wake=wake):
            for _ in stream():
                first.set()
        ended = time.monotonic()
    finally:
        thread.join(BOUND_SECS * 2)
    assert tripped, "the stream ended before the trip"
    return info.value, ended - tripped[0]


def test_a_signal_tripped_while_the_stream_read_blocks_cancels_within_seconds(
    sse_server: SSEServer, provider: OpenAIProvider
) -> None:
    sse_server.queue(ScriptedReply(chunks=[_sse("Hel")], hang=True))
    token = CancelToken()
    with token.installed():
        error, took = _read_until_cancelled(
            token, lambda: provider.stream(REQUEST), active_abort(provider)
        )
    assert isinstance(error, Cancelled) and error.signum == signal.SIGINT
    assert took < BOUND_SECS, f"the read ran {took:.1f}s after the signal"


def test_a_signal_while_the_response_headers_are_awaited_cancels_within_seconds(
    sse_server: SSEServer, provider: OpenAIProvider
) -> None:
    # A local server that loads the model or reads a long prompt before its headers.
    sse_server.queue(ScriptedReply(hold_headers=True))
    token = CancelToken()
    with token.installed():
        error, took = _read_until_cancelled(
            token, lambda: provider.stream(REQUEST), active_abort(provider), sse_server.arrived
        )
    assert isinstance(error, Cancelled)
    assert took < BOUND_SECS, f"the wait for headers ran {took:.1f}s after the signal"


def test_the_turn_after_a_cancelled_one_is_not_aborted(
    sse_server: SSEServer, provider: OpenAIProvider, tmp_path: Path
) -> None:
    # A chat goes on after Ctrl-C: the wake ends the read it was for, never the next request
    # (unlike `interrupt()`, whose flag aborts the next one when no read is in progress).
    token = CancelToken()
    recording = RecordingProvider(provider, tmp_path / "recorded.toml")
    wake = active_abort(recording)
    assert wake is not None
    with token.installed():
        for held in (
            ScriptedReply(chunks=[_sse("Hel")], hang=True),
            ScriptedReply(hold_headers=True),
        ):
            sse_server.queue(held)
            ready = sse_server.arrived if held.hold_headers else None
            sse_server.arrived.clear()
            error, took = _read_until_cancelled(
                token, lambda: recording.stream(REQUEST), wake, ready
            )
            assert isinstance(error, Cancelled) and took < BOUND_SECS
            token.event.clear()  # what the chat does before its next turn
            token.signum = None
            sse_server.queue(ScriptedReply(chunks=[_sse("Hello", done=True)]))
            with token.interruptible(wake=wake):
                got = collect(recording.stream(REQUEST))
            assert got.text == "Hello"


def _wakeup_fd() -> int:
    current = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(current)
    return current


def test_the_wakeup_fd_is_claimed_for_the_block_only_and_other_signals_reach_its_owner(
    sse_server: SSEServer, provider: OpenAIProvider
) -> None:
    # asyncio (prompt_toolkit's chat prompt) sets a wakeup fd of its own for its signals.
    theirs, their_writer = socket.socketpair()
    their_writer.setblocking(False)
    theirs.settimeout(BOUND_SECS)
    old_usr1 = signal.signal(signal.SIGUSR1, lambda signum, frame: None)
    previous = signal.set_wakeup_fd(their_writer.fileno())
    try:
        token = CancelToken()
        with token.installed():
            assert _wakeup_fd() == their_writer.fileno()
            sse_server.queue(ScriptedReply(chunks=[_sse("Hello", done=True)]))
            with token.interruptible(wake=active_abort(provider)):
                ours = _wakeup_fd()
                assert ours not in (-1, their_writer.fileno())
                signal.raise_signal(signal.SIGUSR1)
                assert collect(provider.stream(REQUEST)).text == "Hello"
            assert theirs.recv(16) == bytes([signal.SIGUSR1])  # passed on by the watcher
            assert _wakeup_fd() == their_writer.fileno()
            with token.interruptible():  # no wake: nothing to claim it for
                assert _wakeup_fd() == their_writer.fileno()
        assert _wakeup_fd() == their_writer.fileno()
        assert not [t for t in threading.enumerate() if t.name == "signal-wakeup"]
    finally:
        signal.set_wakeup_fd(previous)
        signal.signal(signal.SIGUSR1, old_usr1)
        theirs.close()
        their_writer.close()


def test_off_the_main_thread_a_wake_block_claims_nothing(provider: OpenAIProvider) -> None:
    token = CancelToken()
    refused: list[bool] = []

    def run() -> None:
        with token.installed(), token.interruptible(wake=active_abort(provider)):
            try:
                signal.set_wakeup_fd(-1)
            except ValueError:  # only the main thread may set it
                refused.append(True)

    before = _wakeup_fd()
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(BOUND_SECS)
    assert refused == [True] and _wakeup_fd() == before
    assert not [t for t in threading.enumerate() if t.name == "signal-wakeup"]


def test_without_a_wake_the_tripped_signal_waits_for_the_read_to_end(
    sse_server: SSEServer,
) -> None:
    # The premise of the tests above: a blocked read sleeps through a tripped flag until it
    # ends (here a 1.5 s read timeout). If a future Python handles it, the wake is no longer
    # needed (and this test says so).
    sse_server.queue(ScriptedReply(chunks=[_sse("Hel")], hang=True))
    provider = OpenAIProvider(
        model="m",
        base_url=f"{sse_server.url}/v1",
        api_key="sk-test",
        retry=RetryPolicy(max_retries=0),
        timeout=httpx.Timeout(5.0, read=1.5),
    )
    token = CancelToken()
    try:
        with token.installed():
            _, took = _read_until_cancelled(token, lambda: provider.stream(REQUEST), None)
    finally:
        provider.close()
    assert took >= 1.0, f"handled {took:.2f}s after the trip, without a wake"


def test_a_run_reading_a_stalled_stream_is_cancelled_within_seconds(
    sse_server: SSEServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The whole path: `run_exec` installs the handlers, the runner reads the stream inside
    # `interruptible(wake=...)`, and the run ends cancelled (exit 130), not 30 s later.
    from vtcode.config.load import load_config
    from vtcode.errors import ExitCode
    from vtcode.runtime.exec_run import ExecRequest, run_exec

    monkeypatch.setenv("OPENAI_BASE_URL", f"{sse_server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "")
    sse_server.queue(ScriptedReply(chunks=[_sse("Hel")], hang=True))
    tripped: list[float] = []
    thread = _trip_once_blocked(sse_server.sent, tripped)
    try:
        request = ExecRequest(
            workspace=tmp_path,
            config=load_config(workspace=tmp_path).config,
            prompt="hi",
            provider="openai",
            model="m",
            install_signals=True,
        )
        result = run_exec(request)
        ended = time.monotonic()
    finally:
        thread.join(BOUND_SECS * 2)
    assert tripped and result.exit_code == ExitCode.CANCELLED, result.error
    assert ended - tripped[0] < BOUND_SECS, f"the run went on {ended - tripped[0]:.1f}s"
