"""The ThreadEvent 0.11.0 contract: types, enum strings and line codecs."""

from vtcode.events.codec import (
    Envelope,
    LineShape,
    decode_envelope,
    decode_event,
    encode_event,
    encode_raw_line,
    encode_wrapped_line,
)
from vtcode.events.enums import *  # noqa: F403
from vtcode.events.types import *  # noqa: F403

__all__ = [
    "Envelope",
    "LineShape",
    "decode_envelope",
    "decode_event",
    "encode_event",
    "encode_raw_line",
    "encode_wrapped_line",
]
