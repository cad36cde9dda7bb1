"""write-function: roman.to_roman is right for every n in 1..3999 and raises ValueError outside.

The hidden check compares against a parser of Roman numerals (value and canonical form), so no
table of answers is needed and no single easy case decides the result.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

CANONICAL = re.compile(r"^M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
LETTERS = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}
OUT_OF_RANGE = [0, -1, 4000, 10000]
PROBE = """
import json, sys
from roman import to_roman

out = {"values": [to_roman(n) for n in range(1, 4000)], "accepted": []}
for n in json.loads(sys.argv[1]):
    try:
        to_roman(n)
    except ValueError:
        continue
    out["accepted"].append(n)
print(json.dumps(out))
"""


def value(numeral: str) -> int:
    total = 0
    for here, after in zip(numeral, numeral[1:] + " ", strict=True):
        v = LETTERS[here]
        total += -v if after != " " and LETTERS[after] > v else v
    return total


def main() -> int:
    if not Path("roman.py").is_file():
        print("FAIL: roman.py does not exist")
        return 1
    try:
        probe = subprocess.run(
            [sys.executable, "-c", PROBE, json.dumps(OUT_OF_RANGE)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        print("FAIL: to_roman over 1..3999 did not finish within 60 s")
        return 1
    if probe.returncode != 0:
        print(f"FAIL: calling to_roman failed:\n{probe.stderr[-1500:]}")
        return 1
    try:
        result = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"FAIL: unexpected output: {probe.stdout[-300:]!r}")
        return 1
    for n, numeral in enumerate(result["values"], 1):
        if not isinstance(numeral, str) or not CANONICAL.match(numeral) or value(numeral) != n:
            print(f"FAIL: to_roman({n}) returned {numeral!r}")
            return 1
    if result["accepted"]:
        print(
            f"FAIL: to_roman accepted out-of-range input {result['accepted']} (expected ValueError)"
        )
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
