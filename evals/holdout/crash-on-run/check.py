"""crash-on-run: `python3 main.py` runs and prints the right totals; ledger reads every month.

The expected output for expenses.txt is fixed (September included: skipping the lines that
crashed is not a fix). A probe asks month_number for all twelve abbreviations and sums a
hidden log spanning two years.
"""

import json
import os
import subprocess
import sys

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

WANT = ["2024-07 177.10", "2024-08 217.15", "2024-09 416.05", "2024-10 183.09", "total 993.39"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
HIDDEN_LOG = [
    "15 Sep 2023  10.00 a",
    "# a comment",
    "01 Dec 2023   5.50 b",
    "",
    "20 Sep 2023   2.25 c and d",
    "07 Jan 2024   1.00 e",
    "09 May 2024   3    f",
    "30 Nov 2024   0.75 g",
]
HIDDEN = {"2023-09": 12.25, "2023-12": 5.5, "2024-01": 1.0, "2024-05": 3.0, "2024-11": 0.75}
PROBE = f"""
import json
from ledger import month_number, monthly_totals
totals = monthly_totals({HIDDEN_LOG!r})
print(json.dumps([
    [month_number(m) for m in {MONTHS!r}],
    {{f"{{y}}-{{m:02d}}": round(t, 2) for (y, m), t in totals.items()}},
]))
"""


def main() -> int:
    try:
        run = subprocess.run(
            [sys.executable, "main.py"], capture_output=True, text=True, timeout=30
        )
        probe = subprocess.run(
            [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        print("FAIL: a run did not finish within 30 s")
        return 1
    if run.returncode != 0:
        print(f"FAIL: python3 main.py exited {run.returncode}:\n{run.stderr[-1500:]}")
        return 1
    lines = [" ".join(line.split()) for line in run.stdout.splitlines() if line.strip()]
    if lines != WANT:
        print(f"FAIL: python3 main.py printed {lines}, expected {WANT}")
        return 1
    try:
        numbers, totals = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError, TypeError):
        print(f"FAIL: calling ledger failed:\n{probe.stderr[-1500:]}")
        return 1
    if numbers != list(range(1, 13)):
        print(f"FAIL: month_number gave {numbers} for {MONTHS}")
        return 1
    if totals != HIDDEN:
        print(f"FAIL: monthly_totals on another log gave {totals}, expected {HIDDEN}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
