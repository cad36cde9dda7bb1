"""answer-live-version: answer.txt names the version of the newest succeeded production deploy
of `payments`.

The expected version is computed from the task's own copy of deploys.json. Its decoys: a newer
production deploy that failed and one that was cancelled, a higher version that was rolled
back, newer versions on staging and dev, and `payments-worker` (a near namesake) with a newer
production version. "3.8.1" and "v3.8.1" are both accepted.
"""

import json
import os
import sys
from pathlib import Path

# The runner names the task folder; run by hand from the task folder, the file's own folder.
TASK = Path(os.environ.get("VTCODE_EVAL_TASK_DIR") or Path(__file__).resolve().parent)


def expected() -> str:
    deploys = json.loads((TASK / "setup" / "deploys.json").read_text(encoding="utf-8"))
    live = [
        d
        for d in deploys["deploys"]
        if d["service"] == "payments"
        and d["environment"] == "production"
        and d["status"] == "succeeded"
    ]
    return max(live, key=lambda d: d["finished_at"])["version"]


def read_head(path: Path) -> str:
    """The first 64 KiB as text: an answer is short, and a huge file must not stall the check."""
    with path.open("rb") as f:
        return f.read(65536).decode("utf-8", errors="replace")


def main() -> int:
    path = Path("answer.txt")
    if not path.is_file():
        print("FAIL: answer.txt does not exist")
        return 1
    answer = read_head(path).strip()
    want = expected()
    if answer.removeprefix("v") != want:
        print(f"FAIL: answer.txt holds {answer[:200]!r}, not the live payments version")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
