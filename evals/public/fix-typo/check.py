"""fix-typo: README.md is the original with every "recieve" spelled "receive", nothing else
changed (trailing spaces and the final newline are free)."""

import os
import sys
from pathlib import Path

# The runner names the task folder; run by hand from the task folder, the file's own folder.
TASK = Path(os.environ.get("VTCODE_EVAL_TASK_DIR") or Path(__file__).resolve().parent)


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").rstrip("\n").split("\n")]


def main() -> int:
    path = Path("README.md")
    if not path.is_file():
        print("FAIL: README.md is missing")
        return 1
    got = lines(path.read_text(encoding="utf-8", errors="replace"))
    original = (TASK / "setup" / "README.md").read_text(encoding="utf-8")
    want = lines(original.replace("recieve", "receive"))
    if any("recieve" in line for line in got):
        print("FAIL: README.md still says recieve")
        return 1
    if got != want:
        changed = [n for n, (a, b) in enumerate(zip(got, want, strict=False), 1) if a != b]
        where = f"lines {changed}" if changed else f"{len(got)} lines instead of {len(want)}"
        print(f"FAIL: README.md differs from the original beyond the typo ({where})")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
