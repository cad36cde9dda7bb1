"""recover-failing-command: out/version.txt is what a release build writes.

The digest covers src/*.py (protected), so the file is only right if build.py really ran in
release mode (or the agent reproduced it exactly); a debug build or a hand-written guess fails.
"""

import sys
from pathlib import Path

EXPECTED = "1.4.2 release 9c5f103d3872"


def main() -> int:
    path = Path("out/version.txt")
    if not path.is_file():
        print("FAIL: out/version.txt does not exist (the build did not run successfully)")
        return 1
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    if text != EXPECTED:
        print(f"FAIL: out/version.txt holds {text[:200]!r}, expected {EXPECTED!r}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
