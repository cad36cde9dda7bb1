"""create-file: hello.txt holds exactly the line "Hello from vtcode" (a final newline optional)."""

import sys
from pathlib import Path


def read_head(path: Path) -> str:
    """The first 64 KiB as text: an answer is short, and a huge file must not stall the check."""
    with path.open("rb") as f:
        return f.read(65536).decode("utf-8", errors="replace")


def main() -> int:
    path = Path("hello.txt")
    if not path.is_file():
        print("FAIL: hello.txt does not exist (or is not a regular file)")
        return 1
    text = read_head(path).replace("\r\n", "\n")
    lines = text.rstrip("\n").split("\n")
    if [line.rstrip() for line in lines] != ["Hello from vtcode"]:
        print(f"FAIL: hello.txt should be the one line 'Hello from vtcode', got {text!r}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
