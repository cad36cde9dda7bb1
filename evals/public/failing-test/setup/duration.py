"""Parse durations such as "1h30m", "45s" or "2h" into a number of seconds."""

import re

_UNITS = {"h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d)([hms])")


def parse_duration(text):
    """Seconds in `text`: one or more <number><unit> parts, units h, m and s.

    Upper or lower case, surrounding spaces allowed; anything else raises ValueError.
    """
    text = text.strip().lower()
    if not text:
        raise ValueError("empty duration")
    total = 0
    pos = 0
    for match in _PART.finditer(text):
        if match.start() != pos:
            raise ValueError(f"bad duration: {text!r}")
        total += int(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text):
        raise ValueError(f"bad duration: {text!r}")
    return total
