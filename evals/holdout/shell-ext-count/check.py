"""shell-ext-count: `bash ext_count.sh DIR` prints `EXT COUNT` lines sorted by extension.

Besides samples/, hidden folders try the rest of the spec: several dots (site.tar.gz is gz),
names without a dot, hidden files, a folder whose name has a dot, files inside subfolders,
names with spaces, an empty folder (no output) and the sort order. Each line is compared as
its two fields, so the spacing between them is free; the exit status is not checked.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path("ext_count.sh").resolve()

HIDDEN: list[tuple[list[str], list[str]]] = [
    (["a.py", "b.py", "run.sh"], ["py 2", "sh 1"]),
    (
        ["site.tar.gz", "x.gz", "notes", ".hidden.txt", "old.d/inner.txt", "sub/deep.py"],
        ["gz 2"],
    ),
    ([], []),
    (["my notes.txt", "draft v2.txt", "photo.jpeg"], ["jpeg 1", "txt 2"]),
    (["z.md", "a.md", "m.csv", "b.yaml", "README", "LICENSE"], ["csv 1", "md 2", "yaml 1"]),
    ([f"day{n:02d}.log" for n in range(31)] + ["index.html"], ["html 1", "log 31"]),
]


def run(folder: Path) -> tuple[int, list[str]]:
    proc = subprocess.run(
        ["bash", str(SCRIPT), str(folder)], capture_output=True, text=True, timeout=30
    )
    return proc.returncode, [" ".join(ln.split()) for ln in proc.stdout.splitlines() if ln.strip()]


def main() -> int:
    if not SCRIPT.is_file():
        print("FAIL: ext_count.sh does not exist")
        return 1
    try:
        code, lines = run(Path("samples"))
        want = ["png 1", "py 2", "txt 1"]
        if lines != want:
            print(f"FAIL: bash ext_count.sh samples exited {code} and printed {lines}; want {want}")
            return 1
        for names, want in HIDDEN:
            with tempfile.TemporaryDirectory() as tmp:
                for name in names:
                    path = Path(tmp) / name
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text("x\n", encoding="utf-8")
                code, lines = run(Path(tmp))
            if lines != want:
                print(
                    f"FAIL: for a folder holding {names}, ext_count.sh exited {code} and "
                    f"printed {lines}; expected {want}"
                )
                return 1
    except subprocess.TimeoutExpired:
        print("FAIL: ext_count.sh did not finish within 30 s")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
