"""Parsing sensor logs: one `name = degrees` sample per line, `#` starts a comment."""

from sensors.models import Measurement


def parse_reading(line):
    """One sample from one line of a log, or None for a blank or comment line."""
    line = line.split("#", 1)[0].strip()
    if not line:
        return None
    name, sep, value = line.partition("=")
    if not sep:
        raise ValueError(f"not a sample: {line!r}")
    return Measurement(sensor=name.strip(), celsius=float(value))


def parse_file(path):
    samples = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            sample = parse_reading(line)
            if sample is not None:
                samples.append(sample)
    return samples
