"""Exports of the event stream: the compatibility `--events` file and the derived views."""

from __future__ import annotations

from vtcode.store.exports.atif import AtifBuilder, AtifExporter
from vtcode.store.exports.compat import CompatExporter, resolve_events_path
from vtcode.store.exports.ondemand import ExportFormat, export_session
from vtcode.store.exports.open_responses import OpenResponsesBuilder, OpenResponsesExporter

__all__ = [
    "AtifBuilder",
    "AtifExporter",
    "CompatExporter",
    "ExportFormat",
    "OpenResponsesBuilder",
    "OpenResponsesExporter",
    "export_session",
    "resolve_events_path",
]
