"""SIGKILL loop over the real CLI: stdout never shows an event events.jsonl does not have.

Run: .venv/bin/python bench/crash_cli.py [KILLS=200] [--durability event|turn|both]

Each kill starts `vtcode exec --json` on a replay script of many tool round trips, reads a
random number of stdout lines, SIGKILLs it and reads what the pipe still held. Every shown event
must be in the log at the same position (tests/store/test_write_ahead.py's own loop and checks,
which the suite runs 20 times per durability). Prints kills, events shown, shown-but-missing runs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from test_write_ahead import kill_loop  # noqa: E402  (the suite's own loop and checks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kills", type=int, nargs="?", default=200)
    ap.add_argument("--durability", choices=["event", "turn", "both"], default="both")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    modes = ["event", "turn"] if args.durability == "both" else [args.durability]
    failed = False
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="vtcode-crash-cli-") as tmp:
            t = time.perf_counter()
            r = kill_loop(Path(tmp), args.kills, mode, args.seed)
            dt = time.perf_counter() - t
        failed |= r.shown_but_missing > 0
        print(
            f"durability={mode} kills={r.kills} shown={r.shown} "
            f"shown_but_missing={r.shown_but_missing} time={dt:.1f}s"
            + (f"  FAIL ({r.worst})" if r.shown_but_missing else "  OK")
        )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
