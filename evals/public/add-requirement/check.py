"""add-requirement: requirements.txt lists the five original lines plus requests>=2.31, in
alphabetical order (blank lines, comments and spacing around >= are free)."""

import re
import sys
from pathlib import Path

WANT = ["attrs>=23.1", "click>=8.1", "httpx>=0.27", "requests>=2.31", "rich>=13.7", "urllib3>=2.0"]


def main() -> int:
    path = Path("requirements.txt")
    if not path.is_file():
        print("FAIL: requirements.txt is missing")
        return 1
    with path.open("rb") as f:
        text = f.read(65536).decode("utf-8", errors="replace")
    got = [
        re.sub(r"\s+", "", line.split("#", 1)[0])
        for line in text.splitlines()
        if line.split("#", 1)[0].strip()
    ]
    if got != WANT:
        print(f"FAIL: requirements.txt lists {got}, expected {WANT}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
