"""answer-from-config: answer.txt holds the [server] port (8443) and nothing else."""

import sys
from pathlib import Path


def read_head(path: Path) -> str:
    """The first 64 KiB as text: an answer is short, and a huge file must not stall the check."""
    with path.open("rb") as f:
        return f.read(65536).decode("utf-8", errors="replace")


def main() -> int:
    path = Path("answer.txt")
    if not path.is_file():
        print("FAIL: answer.txt does not exist")
        return 1
    answer = read_head(path).strip()
    if answer != "8443":
        print(f"FAIL: answer.txt holds {answer[:200]!r}, expected the [server] port")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
