"""vtcode: a headless agent-loop harness that speaks the ThreadEvent 0.11.0 contract.

The names in `__all__` are the public Python API (docs/api.md): run a session, validate a log,
read a session, load config, and the event types. They resolve lazily (PEP 562) because every
`vtcode` command imports this package first: importing `vtcode.api` eagerly costs ~0.1-0.3 s
(jsonschema, the config model, the store), measured with `python -X importtime -c "import
vtcode.api"`, which a `vtcode --help` must not pay.

`validate_log` is not called `validate` because `vtcode.validate` is the validator's package:
once imported, a submodule attribute would shadow a function of the same name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

EVENT_SCHEMA_VERSION = "0.11.0"
"""The ThreadEvent wire-contract version (upstream `EVENT_SCHEMA_VERSION`)."""

if TYPE_CHECKING:
    from vtcode.api import (
        RunSummary,
        list_sessions,
        load_config,
        read_session,
        run,
        validate_log,
    )
    from vtcode.config.layers import ConfigInvalid
    from vtcode.config.model import VtcodeConfig
    from vtcode.errors import VtcodeError
    from vtcode.events.codec import decode_event, encode_event
    from vtcode.events.types import ItemDetails, ThreadEvent, ThreadItem, Usage
    from vtcode.store.listing import SessionSummary
    from vtcode.validate.report import ValidateReport

# public name -> the module that defines it (one definition each; this is only the address book)
_LAZY: dict[str, str] = {
    "RunSummary": "vtcode.api",
    "list_sessions": "vtcode.api",
    "load_config": "vtcode.api",
    "read_session": "vtcode.api",
    "run": "vtcode.api",
    "validate_log": "vtcode.api",
    "VtcodeConfig": "vtcode.config.model",
    "ConfigInvalid": "vtcode.config.layers",
    "VtcodeError": "vtcode.errors",
    "decode_event": "vtcode.events.codec",
    "encode_event": "vtcode.events.codec",
    "ItemDetails": "vtcode.events.types",
    "ThreadEvent": "vtcode.events.types",
    "ThreadItem": "vtcode.events.types",
    "Usage": "vtcode.events.types",
    "SessionSummary": "vtcode.store.listing",
    "ValidateReport": "vtcode.validate.report",
}

__all__ = [
    "EVENT_SCHEMA_VERSION",
    "ConfigInvalid",
    "ItemDetails",
    "RunSummary",
    "SessionSummary",
    "ThreadEvent",
    "ThreadItem",
    "Usage",
    "ValidateReport",
    "VtcodeConfig",
    "VtcodeError",
    "__version__",
    "decode_event",
    "encode_event",
    "list_sessions",
    "load_config",
    "read_session",
    "run",
    "validate_log",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vtcode' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolve once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
