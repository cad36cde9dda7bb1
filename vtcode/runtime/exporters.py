"""Which exporters a run feeds after the canonical sink: the store's own exports and telemetry.

This is wiring, not storage: it picks among the store's exporters and OpenTelemetry by config,
so it sits in the composition root and `vtcode.store` never imports `vtcode.telemetry`.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from vtcode.config.fleet_url import fleet_database_url
from vtcode.config.model import VtcodeConfig
from vtcode.store.exports import AtifExporter, CompatExporter, OpenResponsesExporter
from vtcode.store.exports.central import CentralExporter
from vtcode.store.exports.compat import resolve_events_path
from vtcode.store.gate import Exporter
from vtcode.store.layout import ATIF, DERIVED_DIR, OPEN_RESPONSES, session_dir

__all__ = ["make_exporters"]


def make_exporters(
    workspace: Path, session_id: str, config: VtcodeConfig, events_path_cli: str | None
) -> list[Exporter]:
    """The exporters a run feeds after the canonical sink, in gate order.

    Compatibility export first (`--events` wins over `agent.harness.event_log_path`; an empty
    value turns it off; a relative config path is taken from the workspace), then Open Responses
    (`agent.open_responses.enabled && emit_events`), then ATIF (`telemetry.atif_enabled`),
    then the fleet's central store (VTCODE_DATABASE_URL, as a fleet worker sets it for its
    steps, or `fleet.database_url` of the user config; never a workspace's), then OpenTelemetry
    (`telemetry.otel.enabled`; the SDK is imported only then, and a missing SDK or a bad
    endpoint is one warning, not a failed run).
    """
    out: list[Exporter] = []
    if events_path_cli is not None:
        target = resolve_events_path(
            events_path_cli, session_id, workspace=Path(workspace), folder_needs_slash=True
        )
    else:
        spec = config.agent.harness.event_log_path or ""
        target = resolve_events_path(
            spec,
            session_id,
            base=Path(workspace),
            workspace=Path(workspace),
            option="agent.harness.event_log_path",
        )
    if target is not None:
        out.append(CompatExporter(target))
    derived = session_dir(Path(workspace), session_id) / DERIVED_DIR
    model = config.agent.model
    orc = config.agent.open_responses
    if orc.enabled and orc.emit_events:
        out.append(OpenResponsesExporter(derived / OPEN_RESPONSES, session_id, model or "unknown"))
    if config.telemetry.atif_enabled:
        out.append(AtifExporter(derived / ATIF, session_id, model))
    central = _central(Path(workspace), session_id)
    if central is not None:
        out.append(central)
    if config.telemetry.otel.enabled:
        from vtcode.telemetry import make_otel_exporter

        otel = make_otel_exporter(config.telemetry.otel, session_id)
        if otel is not None:
            out.append(otel)
    return out


def _central(workspace: Path, session_id: str) -> CentralExporter | None:
    url = fleet_database_url()
    if url is None:
        return None
    return CentralExporter(
        url,
        workspace,
        session_id,
        loop_id=os.environ.get("VTCODE_FLEET_LOOP_ID") or None,
        host=os.environ.get("VTCODE_HOST_ID") or socket.gethostname(),
    )
