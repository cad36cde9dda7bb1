"""fix-discount-tier: the visible tests pass and every tier boundary is right on hidden cases."""

import json
import os
import re
import subprocess
import sys

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

RATES = {0: 0.0, 1: 0.0, 9: 0.0, 10: 0.05, 11: 0.05, 49: 0.05, 50: 0.10, 51: 0.10, 99: 0.10}
RATES |= {100: 0.15, 101: 0.15, 1000: 0.15}
TOTALS = [((1.25, 100), 106.25), ((4.0, 49), 186.2), ((3.0, 50), 135.0), ((2.5, 9), 22.5)]
PROBE = (
    "import json; from pricing import discount_rate, order_total; "
    f"print(json.dumps([[discount_rate(q) for q in {sorted(RATES)}], "
    f"[order_total(p, q) for (p, q), _ in {TOTALS}]]))"
)


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def tests_passed(run: subprocess.CompletedProcess[str], at_least: int) -> bool:
    """unittest's own verdict: exit 0, "Ran N tests" with N >= at_least, and its "OK" line."""
    ran = re.search(r"^Ran (\d+) tests? in ", run.stderr, re.MULTILINE)
    ok = re.search(r"^OK\b", run.stderr, re.MULTILINE) is not None
    return run.returncode == 0 and ok and ran is not None and int(ran.group(1)) >= at_least


def compare(rates: list[float], totals: list[float]) -> str:
    for quantity, got in zip(sorted(RATES), rates, strict=True):
        if abs(got - RATES[quantity]) > 1e-9:
            return f"discount_rate({quantity}) is {got}, expected {RATES[quantity]}"
    for ((price, quantity), want), got in zip(TOTALS, totals, strict=True):
        if abs(got - want) > 0.005:
            return f"order_total({price}, {quantity}) is {got}, expected {want}"
    return ""


def main() -> int:
    try:
        tests = run([sys.executable, "-m", "unittest", "test_pricing"])
        probe = run([sys.executable, "-c", PROBE])
    except subprocess.TimeoutExpired:
        print("FAIL: a run did not finish within 30 s")
        return 1
    if not tests_passed(tests, 5):
        print(f"FAIL: python3 -m unittest test_pricing failed:\n{tests.stderr[-1500:]}")
        return 1
    try:
        rates, totals = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError, TypeError):
        print(f"FAIL: calling pricing failed:\n{probe.stdout[-500:]}{probe.stderr[-1500:]}")
        return 1
    try:
        failed = compare(rates, totals)
    except (TypeError, ValueError):
        failed = f"pricing returned {rates} and {totals}, not numbers"
    if failed:
        print(f"FAIL: {failed}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
