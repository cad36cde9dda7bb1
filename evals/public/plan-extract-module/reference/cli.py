"""Print the report for a sales file: python3 cli.py sales.txt"""

import sys

from report import build_report
from rows import parse_line


def main(path):
    with open(path) as f:
        lines = f.readlines()
    items = sum(1 for line in lines if parse_line(line) is not None)
    print(f"{items} items")
    for row in build_report(lines):
        print(row)


if __name__ == "__main__":
    main(sys.argv[1])
