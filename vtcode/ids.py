"""Identifier rules: session, loop and note ids are checked against an allow-list, never sanitised.

Sanitising (upstream replaces odd characters with `_`) makes distinct ids collide and hides
mistakes; vtcode rejects instead, with a message that says what is allowed.
"""

from __future__ import annotations

import re
import secrets

from vtcode.clock import compact_stamp
from vtcode.errors import InvalidIdError

ID_MAX_LEN = 128
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def is_id(value: str) -> bool:
    """Whether `check_id` accepts `value`, without building its error (a listing tests every
    name in the sessions folder): the pattern admits no NUL, separator or leading '.'/'-'."""
    return len(value) <= ID_MAX_LEN and _ID_RE.fullmatch(value) is not None and ".." not in value


def check_id(value: str, kind: str = "session id") -> str:
    """Return `value` if it is a safe path component, else raise `InvalidIdError`."""
    if is_id(value):
        return value
    problem: str | None = None
    if not value:
        problem = "is empty"
    elif len(value) > ID_MAX_LEN:
        problem = f"is longer than {ID_MAX_LEN} characters"
    elif "\x00" in value:
        problem = "contains a NUL byte"
    elif "/" in value or "\\" in value:
        problem = "contains a path separator"
    elif value[0] in ".-":
        problem = f"starts with {value[0]!r}"
    elif ".." in value:
        problem = "contains '..'"
    elif not _ID_RE.fullmatch(value):
        problem = "contains characters outside A-Z a-z 0-9 _ . -"
    if problem:
        raise InvalidIdError(
            f"invalid {kind} {value!r}: it {problem}",
            hint="use letters, digits, '_', '-' and '.', starting with a letter or digit",
        )
    return value


def new_session_id() -> str:
    """`session-20261202T142100Z-3f9a1c`: sortable by time, unique across processes."""
    return f"session-{compact_stamp()}-{secrets.token_hex(3)}"
