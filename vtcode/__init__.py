"""vtcode: a headless agent-loop harness that speaks the ThreadEvent 0.11.0 contract."""

__version__ = "0.1.0"

EVENT_SCHEMA_VERSION = "0.11.0"
"""The ThreadEvent wire-contract version (upstream `EVENT_SCHEMA_VERSION`)."""
