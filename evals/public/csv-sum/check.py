"""csv-sum: answer.txt holds the sum of `amount` over rows whose region is exactly "north".

The expected total is computed from the task's own copy of sales.csv; "North-East" rows (a
near match) must not be counted. "12345" and "12345.0" are both accepted.
"""

import csv
import os
import sys
from pathlib import Path

# The runner names the task folder; run by hand from the task folder, the file's own folder.
TASK = Path(os.environ.get("VTCODE_EVAL_TASK_DIR") or Path(__file__).resolve().parent)


def expected() -> int:
    with open(TASK / "setup" / "sales.csv", newline="") as f:
        return sum(int(row["amount"]) for row in csv.DictReader(f) if row["region"] == "north")


def read_head(path: Path) -> str:
    """The first 64 KiB as text: an answer is short, and a huge file must not stall the check."""
    with path.open("rb") as f:
        return f.read(65536).decode("utf-8", errors="replace")


def main() -> int:
    path = Path("answer.txt")
    if not path.is_file():
        print("FAIL: answer.txt does not exist")
        return 1
    answer = read_head(path).strip()
    try:
        number = float(answer)
    except ValueError:
        print(f"FAIL: answer.txt holds {answer[:200]!r}, not a number")
        return 1
    if number != expected():
        print(f"FAIL: answer.txt holds {answer}, not the total for region north")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
