"""Cost of opening files beneath the workspace fd vs a plain open, per call.

Run: .venv/bin/python bench/file_tools.py [--calls 5000] [--depth 4]

A file DEPTH folders deep is opened CALLS times in each way, in this process: a plain
`os.open(path)` of the joined path string (the baseline: what a check-then-use tool did after
its check), `Beneath.open` with the kernel's openat2 and with the O_NOFOLLOW dir-fd walk (the
fallback for kernels without openat2), then whole `read_file` tool calls through the registry
(old-style path read, and each backend). Prints microseconds per call and the ratio to the
baseline, so machines of any speed compare.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vtcode.tools import openat2
from vtcode.tools.base import ToolContext
from vtcode.tools.beneath import Beneath
from vtcode.tools.registry import default_registry


def _per_call_us(fn: Callable[[], None], calls: int) -> float:
    fn()  # warm up
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--depth", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        rel = "/".join(f"d{i}" for i in range(args.depth)) + "/file.txt"
        (ws / rel).parent.mkdir(parents=True)
        (ws / rel).write_text("line\n" * 100)
        path = str(ws / rel)

        def plain() -> None:
            os.close(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC))

        def beneath() -> None:
            with Beneath(ws) as b:
                os.close(b.open(rel).fd)

        def read_plain() -> None:
            with open(path, "rb") as f:
                f.read()

        reg = default_registry()
        ctx = ToolContext(workspace=ws, session_id="bench", spool_dir=ws / ".vtcode/t")

        def read_tool() -> None:
            reg.run("read_file", {"path": rel}, ctx)

        rows: list[tuple[str, float]] = [("plain os.open(path)", _per_call_us(plain, args.calls))]
        root = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
        has_openat2 = openat2.openat2_beneath(root, ".", os.O_RDONLY)
        for fd in (root, has_openat2):
            if fd is not None:
                os.close(fd)
        for backend in ("openat2", "walk"):
            if backend == "openat2" and has_openat2 is None:
                print("openat2: not available on this kernel")
                continue
            openat2.state.available = None if backend == "openat2" else False
            rows.append((f"Beneath.open ({backend})", _per_call_us(beneath, args.calls)))
        base = rows[0][1]
        print(f"open a file {args.depth} folders deep, {args.calls} calls each")
        for name, us in rows:
            print(f"  {name:28} {us:8.1f} us/call  x{us / base:5.2f}")
        tool_rows = [("open(path).read()", _per_call_us(read_plain, args.calls))]
        for backend in ("openat2", "walk"):
            if backend == "openat2" and has_openat2 is None:
                continue
            openat2.state.available = None if backend == "openat2" else False
            tool_rows.append((f"read_file tool ({backend})", _per_call_us(read_tool, args.calls)))
        reg.close()
        base = tool_rows[0][1]
        print("whole read of a 100-line file")
        for name, us in tool_rows:
            print(f"  {name:28} {us:8.1f} us/call  x{us / base:5.2f}")


if __name__ == "__main__":
    main()
