"""SIGKILL loop at scale: a child appends to one session, the parent kills it at random moments.

Run: .venv/bin/python bench/crash.py [KILLS=500] [--durability event|turn|os]

After each kill the parent reopens the session (recovery) and checks what the suite's
tests/store/test_store_crash.py checks: a gapless seq prefix, no torn or duplicate line, every line
valid against the published schema, a manifest and index consistent with the log, and (with
`event` durability) every event the child acknowledged as fsynced still present. Half the runs
split each write in two so kills land mid-line. Prints kills, acknowledged events, torn tails
repaired and time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from test_store_crash import kill_loop  # noqa: E402  (the suite's own child and checks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kills", type=int, nargs="?", default=500)
    ap.add_argument("--durability", choices=["event", "turn", "os"], default="event")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vtcode-crash-") as tmp:
        t = time.perf_counter()
        stats = kill_loop(Path(tmp), args.kills, args.durability, args.seed)
        dt = time.perf_counter() - t
    print(
        f"kills={args.kills} durability={args.durability} acked={stats['acked']} "
        f"torn_tails_repaired={stats['torn']} lost_acked=0 time={dt:.1f}s  OK"
    )


if __name__ == "__main__":
    main()
