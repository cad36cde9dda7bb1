"""cli-min-count: `--min N` keeps the words seen at least N times; the default is unchanged.

Runs tally.py on the given poem and on a hidden text, with the option before and after the
file, as `--min=N`, with N at a count some words have exactly (>= versus >), with N above
every count (an empty listing, exit 0), and with values that are not whole numbers (refused:
non-zero exit, no traceback). Listing lines are compared with runs of spaces collapsed.
"""

import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

HIDDEN_TEXT = """\
Red fish, blue fish. One fish, two fish!
A red boat, a blue boat, and a green one.
Green eggs? No: red eggs. Don't ask, don't tell.
"""


def expected(path: Path, at_least: int) -> list[str]:
    counts = Counter(re.findall(r"[a-z']+", path.read_text(encoding="utf-8").lower()))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [f"{n} {word}" for word, n in ranked if n >= at_least]


def tally(*args: str) -> tuple[int, list[str], str]:
    run = subprocess.run(
        [sys.executable, "tally.py", *args], capture_output=True, text=True, timeout=30
    )
    lines = [" ".join(line.split()) for line in run.stdout.splitlines() if line.strip()]
    return run.returncode, lines, run.stderr


def check(poem: Path, hidden: Path) -> str:
    cases = [
        ([str(poem)], expected(poem, 1)),
        (["--min", "2", str(poem)], expected(poem, 2)),
        ([str(hidden)], expected(hidden, 1)),
        (["--min", "3", str(hidden)], expected(hidden, 3)),
        ([str(hidden), "--min", "2"], expected(hidden, 2)),
        (["--min=4", str(hidden)], expected(hidden, 4)),
        (["--min", "1", str(hidden)], expected(hidden, 1)),
        (["--min", "99", str(hidden)], []),
    ]
    for args, want in cases:
        code, lines, err = tally(*args)
        shown = "python3 tally.py " + " ".join(args)
        if code != 0:
            return f"{shown} exited {code}:\n{err[-1000:]}"
        if lines != want:
            return f"{shown} printed {lines}, expected {want}"
    for bad in ("abc", "2.5"):
        code, lines, err = tally("--min", bad, str(hidden))
        if code == 0:
            return f"python3 tally.py --min {bad} ... exited 0 (printed {lines[:5]})"
        if "Traceback" in err:
            return f"python3 tally.py --min {bad} crashed instead of refusing:\n{err[-1000:]}"
    code, lines, err = tally("--help")
    if code != 0 or not any("--min" in line for line in lines):
        return f"python3 tally.py --help exited {code} and does not mention --min"
    return ""


def main() -> int:
    if not Path("tally.py").is_file():
        print("FAIL: tally.py is missing")
        return 1
    try:
        with tempfile.TemporaryDirectory() as tmp:
            hidden = Path(tmp) / "text.txt"
            hidden.write_text(HIDDEN_TEXT, encoding="utf-8")
            failed = check(Path("poem.txt").resolve(), hidden)
    except subprocess.TimeoutExpired:
        print("FAIL: tally.py did not finish within 30 s")
        return 1
    if failed:
        print(f"FAIL: {failed}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
