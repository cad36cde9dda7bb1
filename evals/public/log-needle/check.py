"""log-needle: answer.txt holds the code of the one ERROR line job.py prints (E7173)."""

import sys
from pathlib import Path

EXPECTED = "E7173"  # job.py is deterministic; tests/eval/test_public_suite.py re-derives it


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
    if answer != EXPECTED:
        print(f"FAIL: answer.txt holds {answer[:200]!r}, not the ERROR line's code")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
