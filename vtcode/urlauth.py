"""URL userinfo (`scheme://user:password@`) found and masked in time linear in the text.

The regular expressions these replace began with the scheme, `[A-Za-z][A-Za-z0-9+.-]*://`: a
search tries that at every position, and from each letter of a long run of letters or digits
the scheme part runs to the run's end before failing, so a text holding a URL (`://`, and an
`@` for the full form) and one long word cost the square of its length. A 100,000-character
line of a command's output took about 25 s to redact, once per copy of the event
(bench/redact.py). Here the scan starts from each `://` instead: the scheme is read backwards
from it, the authority forwards, and the runs each read are disjoint, so a text is read a
bounded number of times. What is masked is exactly what the expressions masked
(tests/store/test_urlauth.py holds them side by side).
"""

from __future__ import annotations

import re

__all__ = ["AUTH_CHARS", "SCHEME_START", "mask_cut_userinfo", "mask_userinfo"]

# What cannot be in an authority, or ends a JSON string; `@` separates the userinfo.
AUTH_CHARS = r"[^\s/?#\"'<>\\@]"
# A scheme and its `://` in a pattern that may search a long text: tried only where a run of
# scheme characters starts, matching from its first letter on (a leading `[A-Za-z]` was tried
# at every letter of a long word, which is quadratic in it).
SCHEME_START = r"(?<![A-Za-z0-9+.\-])[0-9+.\-]*[A-Za-z][A-Za-z0-9+.\-]*://"
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
# Greedy, so a password with an unencoded '@' is taken up to the last one.
_USERINFO_AT = re.compile(rf"{AUTH_CHARS}+(?:@{AUTH_CHARS}+)*@")
_AUTH_RUN = re.compile(rf"{AUTH_CHARS}*")


def _scheme_start(text: str, colon: int, floor: int) -> int:
    """Where the scheme ending at `colon` (the `:` of `://`) starts, or -1: the leftmost
    letter of the run of scheme characters before it, not before `floor`."""
    k = colon
    while k > floor and text[k - 1] in _SCHEME_CHARS:
        k -= 1
    while k < colon and not text[k].isalpha():  # ASCII: every character here is a scheme one
        k += 1
    return k if k < colon else -1


def mask_userinfo(text: str) -> str:
    """Every `scheme://userinfo@` becomes `scheme://***@`."""
    out: list[str] = []
    done = 0
    i = text.find("://")
    while i != -1:
        auth = _USERINFO_AT.match(text, i + 3)
        start = _scheme_start(text, i, done) if auth is not None else -1
        if auth is None or start < 0:
            i = text.find("://", i + 3)
            continue
        out.append(text[done:i])
        out.append("://***@")
        done = auth.end()
        i = text.find("://", done)
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def mask_cut_userinfo(text: str) -> str:
    """`scheme://user:pa` at the very end of `text` (a URL cut inside its userinfo, the end of a
    streamed snapshot) becomes `scheme://***`; `host:8080` is a port and stays."""
    j = text.rfind("://")
    if j < 0 or _AUTH_RUN.fullmatch(text, j + 3) is None:
        return text
    colon = text.rfind(":", j + 3)
    if colon < 0:
        return text
    password = text[colon + 1 :]
    if not password or password.isdigit() or _scheme_start(text, j, 0) < 0:
        return text
    return text[:j] + "://***"
