"""fix-import: `python3 app.py` prints the three slugs, using textutils.slugify (no new module)."""

import os
import subprocess
import sys
from pathlib import Path

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"


EXPECTED = ["hello-world", "vtcode-eval-suite", "spaces-everywhere"]


def main() -> int:
    for stray in ["helpers.py", "helpers"]:
        if Path(stray).exists():
            print(f"FAIL: {stray} was created; the import in app.py should point at textutils")
            return 1
    try:
        run = subprocess.run([sys.executable, "app.py"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        print("FAIL: python3 app.py did not finish within 30 s")
        return 1
    if run.returncode != 0:
        print(f"FAIL: python3 app.py exited {run.returncode}:\n{run.stderr[-1500:]}")
        return 1
    got = [line.strip() for line in run.stdout.strip().splitlines()]
    if got != EXPECTED:
        print(f"FAIL: python3 app.py printed {got}, expected {EXPECTED}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
