"""rename-symbol: calc_total is gone from every Python file, compute_total does its job.

Checks the definition moved (shop.cart.compute_total exists, calc_total does not), no .py file
mentions calc_total any more, main.py prints what it printed before, the visible tests pass,
and the renamed function still computes the same totals.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

MAIN_OUTPUT = ["4.0", "2 items, total 33.00"]
PROBE = """
import shop.cart as cart
from shop.report import receipt

assert not hasattr(cart, "calc_total"), "shop.cart still has calc_total"
assert cart.compute_total([2.25, 0.75]) == 3.0, cart.compute_total([2.25, 0.75])
assert cart.compute_total([50], tax_rate=0.5) == 75.0
assert cart.compute_total([]) == 0
assert receipt([1, 2, 3], tax_rate=0) == "3 items, total 6.00", receipt([1, 2, 3], tax_rate=0)
print("probe ok")
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
    leftovers = []
    me = Path(__file__).resolve()
    for path in sorted(Path().rglob("*.py")):
        if any(part.startswith(".") or part == "__pycache__" for part in path.parts):
            continue
        if path.resolve() == me:  # the runner copies this checker into the workspace
            continue
        if path.is_symlink() or not path.is_file():  # a FIFO named x.py would block the read
            continue
        if "calc_total" in path.read_text(encoding="utf-8", errors="replace"):
            leftovers.append(str(path))
    if leftovers:
        print(f"FAIL: calc_total still appears in {leftovers}")
        return 1
    try:
        main_run = run([sys.executable, "main.py"])
        tests = run([sys.executable, "-m", "unittest", "test_shop"])
        probe = run([sys.executable, "-c", PROBE])
    except subprocess.TimeoutExpired:
        print("FAIL: a run did not finish within 30 s")
        return 1
    if main_run.returncode != 0:
        print(f"FAIL: python3 main.py exited {main_run.returncode}:\n{main_run.stderr[-1500:]}")
        return 1
    got = [line.strip() for line in main_run.stdout.strip().splitlines()]
    if got != MAIN_OUTPUT:
        print(f"FAIL: python3 main.py printed {got}, expected {MAIN_OUTPUT}")
        return 1
    if not tests_passed(tests, 3):
        print(f"FAIL: python3 -m unittest test_shop failed:\n{tests.stderr[-1500:]}")
        return 1
    if probe.returncode != 0 or "probe ok" not in probe.stdout:
        lines = probe.stderr.strip().splitlines()
        print(f"FAIL: {lines[-1] if lines else 'the probe failed'}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
