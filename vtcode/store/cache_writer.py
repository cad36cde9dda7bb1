"""Writes a session's manifest and turn index off the drain's critical path.

Split from `writer.py`: the drain posts a snapshot after the fsync that covers it, and this
thread replaces the two files atomically; only the newest snapshot matters.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from vtcode.store.recovery import write_cache_bytes
from vtcode.threads import BackgroundThread


class CacheWriter:
    """Writes manifest + index off the drain's critical path; only the newest snapshot matters.

    The drain posts a snapshot after the fsync that covers it, so a manifest on disk never
    vouches for bytes that are not durable, whichever snapshot lands last.
    """

    def __init__(self, sdir: Path, name: str, on_error: Callable[[OSError], None]) -> None:
        self._sdir = sdir
        self._on_error = on_error
        self._cv = threading.Condition()
        self._pending: tuple[bytes, bytes, bool] | None = None
        self._busy = False
        self._stop = False
        self._thread = BackgroundThread(target=self._run, name=name, daemon=False)
        self._thread.start()

    def post(self, index: bytes, manifest: bytes, durable: bool) -> None:
        with self._cv:
            self._pending = (index, manifest, durable)
            self._cv.notify_all()

    def wait_idle(self) -> None:
        with self._cv:
            self._cv.wait_for(lambda: self._pending is None and not self._busy)

    def stop(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cv:
                self._cv.wait_for(lambda: self._pending is not None or self._stop)
                job = self._pending
                if job is None:
                    return
                self._pending = None
                self._busy = True
            try:
                write_cache_bytes(self._sdir, job[0], job[1], durable=job[2])
            except OSError as e:
                self._on_error(e)
            finally:
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()
