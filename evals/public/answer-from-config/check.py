"""answer-from-config: answer.txt holds the [server] port (8443) and nothing else."""

import sys
from pathlib import Path


def main() -> int:
    path = Path("answer.txt")
    if not path.is_file():
        print("FAIL: answer.txt does not exist")
        return 1
    answer = path.read_text(encoding="utf-8", errors="replace").strip()
    if answer != "8443":
        print(f"FAIL: answer.txt holds {answer[:200]!r}, expected the [server] port")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
