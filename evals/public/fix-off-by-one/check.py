"""fix-off-by-one: the visible tests pass and sum_to is right on cases the tests do not show."""

import json
import subprocess
import sys

HIDDEN = {0: 0, 1: 1, 2: 3, 7: 28, 10: 55, 100: 5050, 1000: 500500}


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


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
    if tests.returncode != 0:
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
