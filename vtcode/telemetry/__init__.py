"""Telemetry exports of a run. `make_otel_exporter` is the one entry point: it imports the
OpenTelemetry SDK only when `telemetry.otel.enabled` asks for it, and turns every reason not to
export (SDK missing, unusable endpoint) into one warning instead of a failed run."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from vtcode.config.model import OtelConfig

if TYPE_CHECKING:
    from vtcode.telemetry.otel import OtelExporter

__all__ = ["SDK_HINT", "make_otel_exporter", "stderr_warning"]

SDK_HINT = 'pip install "vtcode[otel]" (the otel extra)'


def stderr_warning(message: str) -> None:
    """`warning: …` on stderr (stdout may carry `--json` events), like the CLI's warnings."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"warning: {message}\n")
        sys.stderr.flush()


def make_otel_exporter(
    config: OtelConfig,
    session_id: str,
    *,
    env: Mapping[str, str] | None = None,
    warn: Callable[[str], None] | None = None,
) -> OtelExporter | None:
    """The run's OTel exporter, or None (after one warning) when it cannot work."""
    say = warn or stderr_warning
    try:
        from vtcode.telemetry.otel import EndpointError, OtelExporter
    except ImportError as e:
        say(
            f"telemetry.otel.enabled is true but the OpenTelemetry SDK cannot be imported ({e}); "
            f"OpenTelemetry export is off for this run ({SDK_HINT})"
        )
        return None
    try:
        return OtelExporter(config, session_id, env=env, warn=say)
    except EndpointError as e:
        say(f"{e}; OpenTelemetry export is off for this run")
        return None
