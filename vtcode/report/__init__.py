"""Readable renderings of a session for people: the self-contained HTML page."""

from vtcode.report.html import render_html, session_html, write_session_html
from vtcode.report.model import SessionReport, apportion_cost, build_report

__all__ = [
    "SessionReport",
    "apportion_cost",
    "build_report",
    "render_html",
    "session_html",
    "write_session_html",
]
