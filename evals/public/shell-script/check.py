"""shell-script: `bash count_lines.sh DIR` prints the total line count of DIR/*.txt.

Besides the given notes/ folder, hidden folders vary the count, the number of files (one file is
where `wc -l *.txt | tail -1` goes wrong), subfolders and other extensions that must be ignored,
and a folder with no .txt file at all (0). Only the printed number counts, not the exit status
(the prompt does not ask for one).
"""

import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path("count_lines.sh").resolve()

HIDDEN = [
    ({"x.txt": 5}, 5),
    ({"a.txt": 1, "b.txt": 10, "c.txt": 100, "d.log": 7}, 111),
    ({"a.txt": 2, "sub/b.txt": 50, "c.md": 9}, 2),
    ({"only.md": 4}, 0),
    ({"big.txt": 2500, "small.txt": 1}, 2501),
]


def count(folder: Path) -> tuple[int, str]:
    proc = subprocess.run(
        ["bash", str(SCRIPT), str(folder)], capture_output=True, text=True, timeout=30
    )
    return proc.returncode, proc.stdout.strip()


def main() -> int:
    if not SCRIPT.is_file():
        print("FAIL: count_lines.sh does not exist")
        return 1
    try:
        code, out = count(Path("notes"))
        if out != "7":
            print(f"FAIL: bash count_lines.sh notes gave exit {code}, output {out!r}; expected 7")
            return 1
        for files, want in HIDDEN:
            with tempfile.TemporaryDirectory() as tmp:
                for name, lines in files.items():
                    path = Path(tmp) / name
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text("".join(f"line {i}\n" for i in range(lines)))
                code, out = count(Path(tmp))
            if out != str(want):
                print(
                    f"FAIL: for a folder holding {files} (lines per file), count_lines.sh gave "
                    f"exit {code}, output {out!r}; expected {want}"
                )
                return 1
    except subprocess.TimeoutExpired:
        print("FAIL: count_lines.sh did not finish within 30 s")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
