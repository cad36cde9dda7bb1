"""failing-test: the visible tests pass, and parse_duration is right on hidden cases too."""

import json
import os
import re
import subprocess
import sys

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

GOOD = {"100s": 100, "12h": 43200, "10m5s": 605, "0s": 0, "2h45m30s": 9930, " 15M ": 900}
BAD = ["", "  ", "m", "10", "1h30", "1h-30m", "ten minutes"]
PROBE = """
import json, sys
from duration import parse_duration

good, bad = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = {"good": {k: parse_duration(k) for k in good}, "accepted": []}
for text in bad:
    try:
        parse_duration(text)
    except ValueError:
        continue
    out["accepted"].append(text)
print(json.dumps(out))
"""


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def tests_passed(run: subprocess.CompletedProcess[str], at_least: int) -> bool:
    """unittest's own verdict: exit 0, "Ran N tests" with N >= at_least, and its "OK" line (an
    exit status alone could come from code that ends the process early)."""
    ran = re.search(r"^Ran (\d+) tests? in ", run.stderr, re.MULTILINE)
    ok = re.search(r"^OK\b", run.stderr, re.MULTILINE) is not None
    return run.returncode == 0 and ok and ran is not None and int(ran.group(1)) >= at_least


def main() -> int:
    try:
        tests = run([sys.executable, "-m", "unittest", "test_duration"])
        probe = run([sys.executable, "-c", PROBE, json.dumps(list(GOOD)), json.dumps(BAD)])
    except subprocess.TimeoutExpired:
        print("FAIL: a run did not finish within 30 s")
        return 1
    if not tests_passed(tests, 6):
        print(f"FAIL: python3 -m unittest test_duration failed:\n{tests.stderr[-1500:]}")
        return 1
    if probe.returncode != 0:
        print(f"FAIL: hidden cases raised:\n{probe.stderr[-1500:]}")
        return 1
    result = json.loads(probe.stdout.strip().splitlines()[-1])
    if result["good"] != GOOD:
        print(f"FAIL: parse_duration gave {result['good']}, expected {GOOD}")
        return 1
    if result["accepted"]:
        print(f"FAIL: parse_duration accepted invalid input {result['accepted']}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
