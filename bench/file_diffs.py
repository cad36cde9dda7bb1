"""What recording a write-time diff adds to `write_file`, next to the same write without it.

Run: .venv/bin/python bench/file_diffs.py [--calls 300] [--lines 200]

`write_file` records a unified diff of every change in the session's artifacts
(`vtcode.store.artifacts`) when the session folder exists: it reads the old content, diffs it
and appends one fsynced line. The tool itself already writes atomically (temp file, fsync,
rename, folder fsync). Here a LINES-line file is rewritten CALLS times with one line changed,
in a workspace with a session folder (diff recorded) and in one without (the baseline: nothing
recorded), interleaved in three rounds in this process; prints the time per call and the ratio.
Prints only; never asserts.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from vtcode.tools.base import ToolContext
from vtcode.tools.file_edits import WriteFileTool


def _run(ws: Path, calls: int, lines: int) -> float:
    tool = WriteFileTool()
    ctx = ToolContext(workspace=ws, session_id="bench", spool_dir=ws / "spool")
    body = [f"line {i}: some ordinary source text, about sixty characters\n" for i in range(lines)]
    started = time.perf_counter()
    for n in range(calls):
        body[n % lines] = f"line {n % lines}: changed in write {n}\n"
        tool.run({"path": "file.txt", "content": "".join(body)}, ctx)
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--lines", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as plain, tempfile.TemporaryDirectory() as recorded:
        (Path(recorded) / ".vtcode" / "sessions" / "bench").mkdir(parents=True)
        base: list[float] = []
        diff: list[float] = []
        for _ in range(3):
            base.append(_run(Path(plain), args.calls, args.lines))
            diff.append(_run(Path(recorded), args.calls, args.lines))
        log = Path(recorded) / ".vtcode" / "sessions" / "bench" / "artifacts" / "diffs.jsonl"
        records = len(log.read_text().splitlines())
    b, d = min(base), min(diff)
    print(f"write_file, {args.lines} lines, one changed, {args.calls} calls x 3 rounds (best)")
    print(f"  no session folder (baseline)  {b:9.1f} us/call")
    print(f"  diff recorded                 {d:9.1f} us/call   x{d / b:.2f}   ({records} records)")


if __name__ == "__main__":
    main()
