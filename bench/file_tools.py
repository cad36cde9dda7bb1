"""Cost of opening files beneath the workspace fd vs a plain open, per call.

Run: .venv/bin/python bench/file_tools.py [--calls 5000] [--depth 4]

A file DEPTH folders deep is opened CALLS times in each way, in this process: a plain
`os.open(path)` of the joined path string (the baseline: what a check-then-use tool did after
its check), `Beneath.open` with the kernel's openat2 and with the O_NOFOLLOW dir-fd walk (the
fallback for kernels without openat2), then whole `read_file` tool calls through the registry
(old-style path read, and each backend), then a whole-tree `grep` against os.walk + open +
read + a per-line search of the same files (grep's work without folder fds). Prints the time
per call and the ratio to the baseline, so machines of any speed compare.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vtcode.tools import openat2
from vtcode.tools.base import ToolContext
from vtcode.tools.beneath import Beneath
from vtcode.tools.registry import ToolRegistry, default_registry


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
        base = tool_rows[0][1]
        print("whole read of a 100-line file")
        for name, us in tool_rows:
            print(f"  {name:28} {us:8.1f} us/call  x{us / base:5.2f}")
        _grep_rows(ws, reg, ctx, has_openat2 is not None)
        reg.close()


def _grep_rows(ws: Path, reg: ToolRegistry, ctx: ToolContext, has_openat2: bool) -> None:
    for i in range(20):
        sub = ws / f"pkg{i}"
        sub.mkdir()
        for j in range(25):
            (sub / f"m{j}.py").write_text("def f():\n    return 1\n" * 20)
    pattern = re.compile("needle")

    def walk_read() -> None:
        for root, _dirs, files in os.walk(ws):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    lines = f.read().decode("utf-8", "replace").splitlines()
                for _line in enumerate(lines, start=1):
                    pattern.search(_line[1])

    def grep_tool() -> None:
        reg.run("grep", {"pattern": "needle"}, ctx)

    rows = [("os.walk + open + read", _per_call_us(walk_read, 20))]
    for backend in ("openat2", "walk") if has_openat2 else ("walk",):
        openat2.state.available = None if backend == "openat2" else False
        rows.append((f"grep tool ({backend})", _per_call_us(grep_tool, 20)))
    base = rows[0][1]
    print("grep over 500 files in 20 folders")
    for name, us in rows:
        print(f"  {name:28} {us / 1000:8.2f} ms/call  x{us / base:5.2f}")


if __name__ == "__main__":
    main()
