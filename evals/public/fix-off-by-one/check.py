"""fix-off-by-one: the visible tests pass and sum_to is right on cases the tests do not show."""

import json
import os
import re
import subprocess
import sys

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"


HIDDEN = {0: 0, 1: 1, 2: 3, 7: 28, 10: 55, 100: 5050, 1000: 500500}


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
        tests = run([sys.executable, "-m", "unittest", "test_sum"])
        probe = run(
            [
                sys.executable,
                "-c",
                "import json, sys; from sum_to import sum_to; "
                f"print(json.dumps([sum_to(n) for n in {sorted(HIDDEN)}]))",
            ]
        )
    except subprocess.TimeoutExpired:
        print("FAIL: a run did not finish within 30 s")
        return 1
    if not tests_passed(tests, 3):
        print(
            f"FAIL: python3 -m unittest test_sum exited {tests.returncode}:\n{tests.stderr[-1500:]}"
        )
        return 1
    if probe.returncode != 0:
        print(f"FAIL: calling sum_to failed:\n{probe.stderr[-1500:]}")
        return 1
    try:
        got = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"FAIL: unexpected output from sum_to probe: {probe.stdout[-500:]!r}")
        return 1
    want = [HIDDEN[n] for n in sorted(HIDDEN)]
    if got != want:
        print(f"FAIL: sum_to({sorted(HIDDEN)}) gave {got}, expected {want}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
