"""create-fizzbuzz: `python3 fizzbuzz.py` prints FizzBuzz for 1..15, one item per line."""

import os
import subprocess
import sys
from pathlib import Path

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"


def expected() -> list[str]:
    out = []
    for n in range(1, 16):
        word = ("Fizz" if n % 3 == 0 else "") + ("Buzz" if n % 5 == 0 else "")
        out.append(word or str(n))
    return out


def main() -> int:
    if not Path("fizzbuzz.py").is_file():
        print("FAIL: fizzbuzz.py does not exist")
        return 1
    try:
        proc = subprocess.run(
            [sys.executable, "fizzbuzz.py"], capture_output=True, text=True, timeout=20
        )
    except subprocess.TimeoutExpired:
        print("FAIL: python3 fizzbuzz.py did not finish within 20 s")
        return 1
    if proc.returncode != 0:
        print(f"FAIL: python3 fizzbuzz.py exited {proc.returncode}: {proc.stderr[-500:]}")
        return 1
    got = [line.strip() for line in proc.stdout.strip().splitlines()]
    if got != expected():
        print(f"FAIL: expected {expected()}, got {got}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
