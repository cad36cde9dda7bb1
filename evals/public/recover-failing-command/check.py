"""recover-failing-command: out/version.txt is what a release build writes.

The digest covers src/*.py (protected), so the file is only right if build.py really ran in
release mode (or the agent reproduced it exactly); a debug build or a hand-written guess fails.
"""

import sys
from pathlib import Path

EXPECTED = "1.4.2 release 9c5f103d3872"


def read_head(path: Path) -> str:
    """The first 64 KiB as text: an answer is short, and a huge file must not stall the check."""
    with path.open("rb") as f:
        return f.read(65536).decode("utf-8", errors="replace")


def main() -> int:
    path = Path("out/version.txt")
    if not path.is_file():
        print("FAIL: out/version.txt does not exist (the build did not run successfully)")
        return 1
    text = read_head(path).strip()
    if text != EXPECTED:
        print(f"FAIL: out/version.txt holds {text[:200]!r}, expected {EXPECTED!r}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
