"""Summarise a file of numbers, one per line: python3 report.py FILE"""

import sys

from stats import mean, median, spread


def read_numbers(path):
    with open(path, encoding="utf-8") as f:
        return [float(line) for line in f if line.strip()]


def main(argv):
    if len(argv) != 2:
        print("usage: python3 report.py FILE", file=sys.stderr)
        return 2
    values = read_numbers(argv[1])
    if not values:
        print("no numbers in the file", file=sys.stderr)
        return 1
    print(f"count: {len(values)}")
    print(f"min: {min(values):.2f}")
    print(f"max: {max(values):.2f}")
    print(f"spread: {spread(values):.2f}")
    print(f"mean: {mean(values):.2f}")
    print(f"median: {median(values):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
