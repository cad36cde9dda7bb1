"""create-file: hello.txt holds exactly the line "Hello from vtcode" (a final newline optional)."""

import sys
from pathlib import Path


def main() -> int:
    path = Path("hello.txt")
    if not path.is_file():
        print("FAIL: hello.txt does not exist (or is not a regular file)")
        return 1
    text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    lines = text.rstrip("\n").split("\n")
    if [line.rstrip() for line in lines] != ["Hello from vtcode"]:
        print(f"FAIL: hello.txt should be the one line 'Hello from vtcode', got {text!r}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
