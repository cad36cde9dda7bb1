"""One dispatch gate: every event goes to the canonical sink first, then to each exporter.

Order is the same for everyone (the gate serialises `emit`). Shutdown order: the caller emits
`thread.completed`, then `close()` finishes the exporters, then closes the canonical drain
(fsync, manifest); only after that may a run be reported successful.

Failure policy:
- canonical failure (`PersistenceError`): `emit` still hands the event to the exporters, so a
  `--json`/`--events` stream keeps its terminal `thread.completed`, then raises. The run must end
  non-zero.
- exporter failure (e.g. the `--events` disk is full): that exporter is disabled, the canonical
  log is untouched and keeps receiving every event, and `close()` raises `ExportError` (exit 1)
  after the canonical log was closed and fsynced. An explicit export that silently stopped would
  be worse than a failed run.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from vtcode.errors import ExportError, PersistenceError
from vtcode.events.types import ThreadEvent
from vtcode.redact import Redactor
from vtcode.store.writer import SessionWriter


@runtime_checkable
class Exporter(Protocol):
    """A secondary consumer of the event stream (compat `--events` file, derived views)."""

    def handle(self, event: ThreadEvent) -> None: ...

    def finish(self) -> None: ...


def exporter_name(exporter: Exporter) -> str:
    return str(getattr(exporter, "name", type(exporter).__name__))


class DispatchGate:
    """Feeds the canonical `SessionWriter` and then the exporters, in one order."""

    def __init__(
        self,
        canonical: SessionWriter,
        exporters: Sequence[Exporter] = (),
        redactor: Redactor | None = None,
    ) -> None:
        self.canonical = canonical
        # Secrets are collected once per run, from the environment the run started with.
        self._redactor = redactor if redactor is not None else Redactor.from_environ()
        self._exporters = list(exporters)
        self._failed: dict[int, str] = {}
        self._mutex = threading.Lock()
        self._closed = False

    @property
    def export_errors(self) -> list[str]:
        """One message per exporter that failed so far."""
        return list(self._failed.values())

    def emit(self, event: ThreadEvent) -> None:
        """Canonical first, then exporters; raises `PersistenceError` when the canonical failed."""
        event = self._redactor.event(event)  # nothing downstream ever sees a credential
        with self._mutex:
            error: PersistenceError | None = None
            try:
                self.canonical.submit(event)
            except PersistenceError as e:
                error = e
            for i, ex in enumerate(self._exporters):
                if i in self._failed:
                    continue
                try:
                    ex.handle(event)
                except Exception as e:
                    self._failed[i] = f"{exporter_name(ex)}: {e}"
        if error is not None:
            raise error

    def close(self) -> None:
        """Finish exporters, then close the canonical drain (fsync); raise on any failure."""
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            for i, ex in enumerate(self._exporters):
                if i in self._failed:
                    continue
                try:
                    ex.finish()
                except Exception as e:
                    self._failed[i] = f"{exporter_name(ex)}: {e}"
        self.canonical.close()  # raises PersistenceError: the more serious failure wins
        if self._failed:
            raise ExportError(
                "export failed: " + "; ".join(self._failed.values()),
                hint="the canonical session log is complete; `vtcode sessions export` can "
                "regenerate any export from it",
            )

    def abort(self) -> None:
        """Best effort after a failure: finish what can be finished, never raise."""
        with self._mutex:
            if not self._closed:
                self._closed = True
                for i, ex in enumerate(self._exporters):
                    if i not in self._failed:
                        try:
                            ex.finish()
                        except Exception as e:
                            self._failed[i] = f"{exporter_name(ex)}: {e}"
        self.canonical.abort()
