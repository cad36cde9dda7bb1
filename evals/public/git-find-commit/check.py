"""git-find-commit: answer.txt names the commit that moved DEFAULT_PORT to 9090.

The repository comes from repo.bundle (fixed authors and dates, so fixed hashes). A full hash
or an abbreviation of at least 7 hex digits is accepted; the README commit that also mentions
both ports is a near match and fails.
"""

import re
import sys
from pathlib import Path

EXPECTED = "769aee504209784012c90c0c90e385a90b61564d"


def main() -> int:
    path = Path("answer.txt")
    if not path.is_file():
        print("FAIL: answer.txt does not exist")
        return 1
    with path.open("rb") as f:
        answer = f.read(65536).decode("utf-8", errors="replace").strip().lower()
    if not re.fullmatch(r"[0-9a-f]{7,40}", answer):
        print(f"FAIL: answer.txt holds {answer[:200]!r}, not a commit hash")
        return 1
    if not EXPECTED.startswith(answer):
        print(f"FAIL: {answer} is not the commit that changed DEFAULT_PORT in server.py")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
