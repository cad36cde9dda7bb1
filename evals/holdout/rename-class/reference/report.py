"""Per-sensor summary of a log: python3 report.py LOG"""

import sys

from sensors.models import Measurement
from sensors.parse import parse_file


def by_sensor(samples: list[Measurement]) -> dict[str, list[Measurement]]:
    groups: dict[str, list[Measurement]] = {}
    for sample in samples:
        groups.setdefault(sample.sensor, []).append(sample)
    return groups


def main(argv):
    if len(argv) != 2:
        print("usage: python3 report.py LOG", file=sys.stderr)
        return 2
    for name, samples in sorted(by_sensor(parse_file(argv[1])).items()):
        hottest = max(samples, key=lambda s: s.celsius)
        frost = sum(1 for s in samples if s.is_freezing())
        print(
            f"{name}: {len(samples)} samples, max {hottest.celsius:.1f} C "
            f"({hottest.fahrenheit:.1f} F), {frost} at or below freezing"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
